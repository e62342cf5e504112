package io.bdrp.router.security;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;

/** Reading PEM files and certificates for TLS: checks before use, and names in certificates. */
public final class TlsFiles {
  private TlsFiles() {}

  /**
   * The TLS engine of every context the router builds: BoringSSL through netty-tcnative when its
   * native library loads on this machine (faster, see docs/benchmarks.md), the JDK's otherwise.
   * {@code -Dio.netty.handler.ssl.noOpenSsl=true} forces the JDK's.
   */
  static SslProvider engine() {
    return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
  }

  /** The engine in use and, for the JDK's, why BoringSSL is not. */
  public static String engineDescription() {
    if (OpenSsl.isAvailable()) {
      return OpenSsl.versionString() + " (netty-tcnative)";
    }
    Throwable why = OpenSsl.unavailabilityCause();
    return "the JDK's" + (why == null ? "" : " (BoringSSL unavailable: " + why.getMessage() + ")");
  }

  /**
   * What follows {@code prefix} in each subjectAltName URI of {@code c} that starts with it (how a
   * certificate names a router, {@code urn:bdrp:router:N}, or a user, {@code urn:bdrp:user:NAME}).
   */
  public static List<String> uris(X509Certificate c, String prefix) {
    List<String> out = new ArrayList<>();
    try {
      Collection<List<?>> sans = c.getSubjectAlternativeNames();
      for (List<?> san : sans == null ? List.<List<?>>of() : sans) {
        // Type 6: uniformResourceIdentifier.
        if (san.size() == 2 && Integer.valueOf(6).equals(san.get(0))) {
          String uri = String.valueOf(san.get(1));
          if (uri.startsWith(prefix)) {
            out.add(uri.substring(prefix.length()));
          }
        }
      }
    } catch (CertificateParsingException e) {
      // names nothing
    }
    return out;
  }

  /** The verified certificate the peer of a TLS session presented, or null if none. */
  public static X509Certificate peer(ChannelHandlerContext ctx) {
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    if (ssl == null) {
      return null;
    }
    try {
      Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate x ? x : null;
    } catch (SSLPeerUnverifiedException e) {
      return null;
    }
  }

  /** The first certificate of a PEM file. */
  public static X509Certificate certificate(Path cert)
      throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(cert)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /**
   * Checks that the PKCS#8 private key in {@code key} belongs to the first certificate in {@code
   * cert}, by signing with one and verifying with the other: a TLS context built from a mismatched
   * pair is accepted and only fails in handshakes.
   *
   * @throws IllegalArgumentException if it does not, or the key cannot be read
   */
  static void checkPair(Path cert, Path key) {
    try {
      X509Certificate c = certificate(cert);
      String alg = c.getPublicKey().getAlgorithm();
      PrivateKey k = privateKey(key, alg);
      String sigAlg = signatureAlgorithm(alg);
      byte[] probe = "bdrp key check".getBytes(StandardCharsets.US_ASCII);
      Signature s = Signature.getInstance(sigAlg);
      s.initSign(k);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(sigAlg);
      v.initVerify(c.getPublicKey());
      v.update(probe);
      if (!v.verify(sig)) {
        throw new IllegalArgumentException(key + " is not the private key of " + cert);
      }
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "cannot check " + key + " against " + cert + ": " + e.getMessage(), e);
    }
  }

  /**
   * The PKCS#8 private key in the PEM file {@code key}, of algorithm {@code alg} (that of its
   * certificate's public key).
   *
   * @throws IllegalArgumentException if the file holds none
   */
  public static PrivateKey privateKey(Path key, String alg)
      throws IOException, GeneralSecurityException {
    String pem = Files.readString(key, StandardCharsets.US_ASCII);
    int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < begin) {
      throw new IllegalArgumentException(key + " holds no PKCS#8 private key (BEGIN PRIVATE KEY)");
    }
    byte[] der =
        Base64.getMimeDecoder()
            .decode(pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end));
    return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
  }

  /** The JDK signature algorithm for keys of algorithm {@code alg}. */
  static String signatureAlgorithm(String alg) {
    return switch (alg) {
      case "EC" -> "SHA256withECDSA";
      case "RSA" -> "SHA256withRSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      default -> throw new IllegalArgumentException("unsupported key algorithm " + alg);
    };
  }
}
