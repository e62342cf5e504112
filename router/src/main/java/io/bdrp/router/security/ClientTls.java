package io.bdrp.router.security;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS 1.3 on the client port: the router's certificate chain and private key, PEM files named in
 * the config ({@code tls.cert}, {@code tls.key}; the key in PKCS#8). The JDK's TLS engine.
 *
 * @param cert the certificate chain, leaf first
 * @param key the private key of the leaf
 * @param clientCa the CA whose client certificates name users ({@code tls.clientCa}), or null
 * @param context the server context built from them
 */
public record ClientTls(Path cert, Path key, Path clientCa, SslContext context) {

  /** TLS without client certificates. */
  public static ClientTls load(Path cert, Path key) {
    return load(cert, key, null);
  }

  /** The same files read again: a renewed certificate or key. */
  public ClientTls reload() {
    return load(cert, key, clientCa);
  }

  /**
   * Reads the certificate and key and builds the server context.
   *
   * @throws IllegalArgumentException naming the file and the problem, if they cannot be used
   */
  public static ClientTls load(Path cert, Path key, Path clientCa) {
    for (Path p : clientCa == null ? new Path[] {cert, key} : new Path[] {cert, key, clientCa}) {
      if (!Files.isReadable(p)) {
        throw new IllegalArgumentException("cannot read " + p);
      }
    }
    TlsFiles.checkPair(cert, key);
    try {
      SslContextBuilder b =
          SslContextBuilder.forServer(cert.toFile(), key.toFile())
              .sslProvider(TlsFiles.engine())
              .protocols("TLSv1.3");
      if (clientCa != null) {
        // Asked for, not required: clients with a token and no certificate still get in.
        b.trustManager(clientCa.toFile()).clientAuth(io.netty.handler.ssl.ClientAuth.OPTIONAL);
      }
      return new ClientTls(cert, key, clientCa, b.build());
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot use certificate " + cert + " with key " + key + ": " + e.getMessage(), e);
    }
  }
}
