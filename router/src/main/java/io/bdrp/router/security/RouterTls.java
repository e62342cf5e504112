package io.bdrp.router.security;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * Mutual TLS 1.3 on router links: each router presents its certificate and accepts only a peer
 * whose certificate the network's CA ({@code tls.ca}) signed. A router's number is bound to its
 * certificate by a subjectAltName URI {@code urn:bdrp:router:N}; a peer whose HELLO says another
 * number than its certificate names is refused ({@code NOT_AUTHORIZED}, counted as {@code
 * bdrp_link_refused_total{parameter="certificate"}}).
 *
 * @param self the router number the certificate names
 * @param cert the certificate chain, or null if not loaded from files (then never reloaded)
 * @param key the private key
 * @param ca the network's CA
 * @param server the context of sessions this router accepts (asks for the peer's certificate)
 * @param client the context of sessions this router dials
 */
public record RouterTls(
    int self, Path cert, Path key, Path ca, SslContext server, SslContext client) {

  /** Contexts built elsewhere (not from files, so not reloaded). */
  public RouterTls(SslContext server, SslContext client) {
    this(-1, null, null, null, server, client);
  }

  /** The same files read again: a renewed certificate, key or CA. */
  public RouterTls reload() {
    return load(self, cert, key, ca);
  }

  /** The URI prefix of a router number in a certificate's subjectAltName. */
  public static final String URN = "urn:bdrp:router:";

  /**
   * Builds both contexts from PEM files, after checking that {@code cert} names router {@code
   * self}.
   *
   * @throws IllegalArgumentException naming the file and the problem
   */
  public static RouterTls load(int self, Path cert, Path key, Path ca) {
    TlsFiles.checkPair(cert, key);
    try {
      SslContext server =
          SslContextBuilder.forServer(cert.toFile(), key.toFile())
              .sslProvider(TlsFiles.engine())
              .protocols("TLSv1.3")
              .trustManager(ca.toFile())
              .clientAuth(io.netty.handler.ssl.ClientAuth.REQUIRE)
              .build();
      SslContext client =
          SslContextBuilder.forClient()
              .sslProvider(TlsFiles.engine())
              .protocols("TLSv1.3")
              .keyManager(cert.toFile(), key.toFile())
              .trustManager(ca.toFile())
              .endpointIdentificationAlgorithm(null) // identity is the router number, below
              .build();
      X509Certificate own = TlsFiles.certificate(cert);
      List<Integer> named = routerNumbers(own);
      if (!named.contains(self)) {
        throw new IllegalArgumentException(
            cert
                + " names "
                + (named.isEmpty() ? "no router" : "router " + named)
                + ", not this router "
                + self
                + " (a subjectAltName URI "
                + URN
                + self
                + ")");
      }
      return new RouterTls(self, cert, key, ca, server, client);
    } catch (java.security.GeneralSecurityException | java.io.IOException e) {
      throw new IllegalArgumentException(
          "cannot use certificate " + cert + ", key " + key + ", CA " + ca + ": " + e.getMessage(),
          e);
    }
  }

  /** The router numbers a certificate names in subjectAltName URIs {@code urn:bdrp:router:N}. */
  public static List<Integer> routerNumbers(X509Certificate c) {
    List<Integer> out = new ArrayList<>();
    for (String n : TlsFiles.uris(c, URN)) {
      try {
        out.add(Integer.parseInt(n));
      } catch (NumberFormatException e) {
        // not a router number: ignored
      }
    }
    return out;
  }
}
