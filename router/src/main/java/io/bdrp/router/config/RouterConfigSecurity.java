package io.bdrp.router.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.metrics.MetricsAccess;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.router.security.ClientTls;
import io.bdrp.router.security.RouterTls;
import io.bdrp.transport.Frames;
import io.bdrp.transport.UdpProtection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The part of {@link RouterConfigCheck}'s pass that checks the {@code auth} and {@code tls}
 * sections: token hashes, permissions, the PEM files (read here, so that a missing or bad file is
 * an error naming its field) and the fields that need one another (a user without a token needs
 * {@code tls.clientCa}; {@code tls.metrics} needs {@code tls.cert}).
 */
final class RouterConfigSecurity {
  private final RouterConfigCheck check;
  private final String routerToken;
  private final UdpProtection udpProtection;
  private final ClientAuth clientAuth;
  private final ClientTls clientTls;
  private final RouterTls routerTls;
  private final MetricsAccess metricsAccess;

  RouterConfigSecurity(
      RouterConfigCheck check, RouterConfigFile.Auth auth, RouterConfigFile.Tls tls, int router) {
    this.check = check;
    if (auth == null) {
      auth = new RouterConfigFile.Auth(null, null, null, null);
    }
    udpProtection =
        check.choice(
            auth.udp(), "auth.udp", UdpProtection.MAC, UdpProtection.class, "mac, encrypt or none");
    clientAuth = clientAuth(auth.clients());
    routerToken = routerToken(auth.routerToken());
    clientTls = clientTls(tls);
    if (clientTls == null || clientTls.clientCa() == null) {
      for (int i = 0; i < clientAuth.users().size(); i++) {
        if (clientAuth.users().get(i).hash() == null) {
          throw check.error(
              "auth.clients.users[" + i + "].token",
              "user '"
                  + clientAuth.users().get(i).name()
                  + "' has no token, and without tls.clientCa no client certificate can name it");
        }
      }
    }
    metricsAccess =
        metricsAccess(auth.metrics(), tls != null && Boolean.TRUE.equals(tls.metrics()));
    routerTls = routerTls(router, tls);
  }

  String routerToken() {
    return routerToken;
  }

  UdpProtection udpProtection() {
    return udpProtection;
  }

  ClientAuth clientAuth() {
    return clientAuth;
  }

  ClientTls clientTls() {
    return clientTls;
  }

  RouterTls routerTls() {
    return routerTls;
  }

  MetricsAccess metricsAccess() {
    return metricsAccess;
  }

  private String routerToken(String t) {
    if (t == null) {
      return null;
    }
    if (t.isEmpty()) {
      throw check.error("auth.routerToken", "expected a non-empty string");
    }
    int bytes = t.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > Frames.MAX_TOKEN_BYTES) {
      throw check.error(
          "auth.routerToken",
          "is " + bytes + " bytes of UTF-8; a hello carries at most " + Frames.MAX_TOKEN_BYTES);
    }
    return t;
  }

  /** {@code auth.metrics} (user and password hash) and {@code tls.metrics}. */
  private MetricsAccess metricsAccess(RouterConfigFile.MetricsUser m, boolean overTls) {
    if (m == null) {
      return overTls ? new MetricsAccess(null, null, true) : null;
    }
    String u = m.user();
    if (u == null || u.isEmpty() || u.contains(":")) {
      throw check.error("auth.metrics.user", "expected a non-empty name without ':'");
    }
    if (m.password() == null) {
      throw check.error(
          "auth.metrics.password",
          "expected sha256:SALT:HASH (make one with: bdrp auth token --user " + u + ")");
    }
    try {
      return new MetricsAccess(
          u, ClientAuth.user(u, m.password(), ClientAuth.Permissions.ALL), overTls);
    } catch (IllegalArgumentException e) {
      throw check.error("auth.metrics.password", e.getMessage());
    }
  }

  /** {@code tls}: the certificate and key for TLS on the client port. */
  private ClientTls clientTls(RouterConfigFile.Tls t) {
    if (t == null) {
      return null;
    }
    Path cert = pem(t.cert(), "tls.cert");
    Path key = pem(t.key(), "tls.key");
    Path clientCa = t.clientCa() == null ? null : pem(t.clientCa(), "tls.clientCa");
    try {
      return ClientTls.load(cert, key, clientCa);
    } catch (IllegalArgumentException e) {
      throw check.error("tls", e.getMessage());
    }
  }

  /** {@code tls.ca}: mutual TLS on router links, with this router's certificate and key. */
  private RouterTls routerTls(int router, RouterConfigFile.Tls t) {
    if (t == null || t.ca() == null) {
      return null;
    }
    try {
      return RouterTls.load(
          router, pem(t.cert(), "tls.cert"), pem(t.key(), "tls.key"), pem(t.ca(), "tls.ca"));
    } catch (IllegalArgumentException e) {
      throw check.error("tls", e.getMessage());
    }
  }

  /** The readable file {@code f}. */
  private Path pem(String f, String path) {
    if (f == null || f.isEmpty()) {
      throw check.error(path, "expected the path of a PEM file");
    }
    Path p = Path.of(f);
    if (!Files.isReadable(p)) {
      throw check.error(path, "cannot read " + p);
    }
    return p;
  }

  /** {@code auth.clients}: users with token hashes and permissions, and anonymous access. */
  private ClientAuth clientAuth(RouterConfigFile.Clients c) {
    if (c == null) {
      return ClientAuth.OPEN;
    }
    List<ClientAuth.User> users = new ArrayList<>();
    List<RouterConfigFile.User> us = c.users() == null ? List.of() : c.users();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < us.size(); i++) {
      String path = "auth.clients.users[" + i + "]";
      RouterConfigFile.User u = us.get(i);
      if (u == null) {
        throw check.error(path, "expected a map with name and token");
      }
      String name = u.name();
      if (name == null || name.isEmpty()) {
        throw check.error(path + ".name", "expected a non-empty string");
      }
      if (!names.add(name)) {
        throw check.error(path + ".name", "user '" + name + "' is named twice");
      }
      ClientAuth.Permissions permissions =
          new ClientAuth.Permissions(
              name,
              predicate(u.subscribe(), path + ".subscribe"),
              predicate(u.publish(), path + ".publish"));
      if (u.token() == null) {
        // Signs in with a client certificate naming it; needs tls.clientCa (checked after).
        users.add(ClientAuth.User.withCertificate(name, permissions));
        continue;
      }
      try {
        users.add(ClientAuth.user(name, u.token(), permissions));
      } catch (IllegalArgumentException e) {
        throw check.error(path + ".token", e.getMessage());
      }
    }
    return new ClientAuth(users, anonymous(c.anonymous()));
  }

  /** {@code auth.clients.anonymous}: true, false or a map with subscribe and publish. */
  private ClientAuth.Permissions anonymous(JsonNode a) {
    String path = "auth.clients.anonymous";
    if (a == null || a.isNull()) {
      return null;
    }
    if (a.isBoolean()) {
      return a.asBoolean() ? ClientAuth.Permissions.ALL : null;
    }
    if (!a.isObject()) {
      throw check.error(path, "expected true, false or a map with subscribe and publish");
    }
    RouterConfigFile.Grants g =
        RouterConfigFile.bind(a, RouterConfigFile.Grants.class, check.source(), path);
    return new ClientAuth.Permissions(
        "anonymous",
        predicate(g.subscribe(), path + ".subscribe"),
        predicate(g.publish(), path + ".publish"));
  }

  private Predicate predicate(String p, String path) {
    if (p == null) {
      return null;
    }
    try {
      return Predicate.parse(p);
    } catch (RuntimeException e) {
      throw check.error(path, e.getMessage());
    }
  }
}
