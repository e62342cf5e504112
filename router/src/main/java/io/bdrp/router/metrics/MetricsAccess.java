package io.bdrp.router.metrics;

import io.bdrp.router.security.ClientAuth;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Who may read the metrics endpoint, and whether it speaks TLS: HTTP basic authentication with a
 * user and a password kept as a salted SHA-256 ({@code auth.metrics}), and TLS with the client
 * port's certificate ({@code tls.metrics: true}).
 *
 * @param user the user name, or null for no authentication
 * @param password the password's salted hash, as a {@link ClientAuth.User} (its name is the user)
 * @param tls whether the endpoint speaks TLS with the client port's certificate
 */
public record MetricsAccess(String user, ClientAuth.User password, boolean tls) {

  /** Whether an {@code Authorization} header value admits the request. */
  public boolean admits(String authorization) {
    if (user == null) {
      return true;
    }
    if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
      return false;
    }
    String pair;
    try {
      pair =
          new String(
              Base64.getDecoder().decode(authorization.substring(6).strip()),
              StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = pair.indexOf(':');
    if (colon < 0) {
      return false;
    }
    boolean userOk =
        MessageDigest.isEqual(
            pair.substring(0, colon).getBytes(StandardCharsets.UTF_8),
            user.getBytes(StandardCharsets.UTF_8));
    boolean passwordOk =
        password.accepts(pair.substring(colon + 1).getBytes(StandardCharsets.UTF_8));
    return userOk & passwordOk;
  }
}
