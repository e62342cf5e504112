package io.bdrp.router;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS 1.3 on the client port: the router's certificate chain and private key, PEM files named in
 * the config ({@code tls.cert}, {@code tls.key}; the key in PKCS#8). The JDK's TLS engine.
 *
 * @param cert the certificate chain, leaf first
 * @param key the private key of the leaf
 * @param context the server context built from them
 */
public record ClientTls(Path cert, Path key, SslContext context) {

  /** The same files read again: a renewed certificate or key. */
  public ClientTls reload() {
    return load(cert, key);
  }

  /**
   * Reads the certificate and key and builds the server context.
   *
   * @throws IllegalArgumentException naming the file and the problem, if they cannot be used
   */
  public static ClientTls load(Path cert, Path key) {
    for (Path p : new Path[] {cert, key}) {
      if (!Files.isReadable(p)) {
        throw new IllegalArgumentException("cannot read " + p);
      }
    }
    TlsFiles.checkPair(cert, key);
    try {
      SslContext c =
          SslContextBuilder.forServer(cert.toFile(), key.toFile())
              .sslProvider(SslProvider.JDK)
              .protocols("TLSv1.3")
              .build();
      return new ClientTls(cert, key, c);
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot use certificate " + cert + " with key " + key + ": " + e.getMessage(), e);
    }
  }
}
