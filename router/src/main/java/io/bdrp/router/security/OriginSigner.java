package io.bdrp.router.security;

import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginSignature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * This router's key and certificate chain, which sign its origin claims: SHA256withECDSA for an EC
 * key, as docs/security.md prescribes, Ed25519 for an Ed25519 key. The chain is what the router
 * floods so that others verify its claims ({@link OriginCertificates}).
 *
 * <p>Immutable and thread-safe: a renewed certificate is a new signer ({@link OriginKeys#use}).
 */
final class OriginSigner {
  /** Most certificates in a chain. */
  static final int MAX_CHAIN = 4;

  /**
   * The randomness of signatures (ECDSA's): a DRBG seeded once when the class loads, so that a
   * signature made on the router's loop reads no file (the platform's default generator reads
   * {@code /dev/urandom} at each draw).
   */
  private static final SecureRandom RANDOM = seeded();

  private static SecureRandom seeded() {
    try {
      SecureRandom r = SecureRandom.getInstance("DRBG");
      r.nextBytes(new byte[1]);
      return r;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("DRBG is part of every JDK", e);
    }
  }

  private final PrivateKey key;
  private final String algorithm;
  private final X509Certificate cert;
  private final byte[] chain;

  private OriginSigner(PrivateKey key, String algorithm, X509Certificate cert, byte[] chain) {
    this.key = key;
    this.algorithm = algorithm;
    this.cert = cert;
    this.chain = chain;
  }

  /**
   * Reads the certificate chain {@code cert} (PEM, the router's own first) and its PKCS#8 key
   * {@code key}, on any thread (a file read: never on the router's loop). The caller has checked
   * that the key is the certificate's ({@link TlsFiles#checkPair}).
   *
   * @throws IllegalArgumentException naming the file when the chain is empty, too long or too large
   */
  static OriginSigner read(Path cert, Path key) throws IOException, GeneralSecurityException {
    List<X509Certificate> chain = pemCertificates(cert);
    if (chain.isEmpty() || chain.size() > MAX_CHAIN) {
      throw new IllegalArgumentException(
          cert + " holds " + chain.size() + " certificates, not 1.." + MAX_CHAIN);
    }
    X509Certificate leaf = chain.get(0);
    String alg = leaf.getPublicKey().getAlgorithm();
    OriginSigner s =
        new OriginSigner(
            TlsFiles.privateKey(key, alg), TlsFiles.signatureAlgorithm(alg), leaf, der(chain));
    if (s.chain.length > ControlMessage.RouterCert.MAX_CHAIN_BYTES) {
      throw new IllegalArgumentException(
          cert
              + " takes "
              + s.chain.length
              + " bytes in DER, more than "
              + ControlMessage.RouterCert.MAX_CHAIN_BYTES);
    }
    return s;
  }

  /** Signs {@code claim} with this router's key. */
  OriginSignature sign(byte[] claim) {
    try {
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key, RANDOM);
      s.update(claim);
      return new OriginSignature(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with this router's key: " + e.getMessage(), e);
    }
  }

  /** This router's certificate. */
  X509Certificate certificate() {
    return cert;
  }

  /** The chain in DER, this router's certificate first (a copy). */
  byte[] chain() {
    return chain.clone();
  }

  /** Whether {@code other} signs with the same certificate chain (null: another). */
  boolean sameChain(OriginSigner other) {
    return other != null && Arrays.equals(chain, other.chain);
  }

  /** The certificates of PEM file {@code file}, in order. */
  static List<X509Certificate> pemCertificates(Path file)
      throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(file)) {
      List<X509Certificate> out = new ArrayList<>();
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        out.add((X509Certificate) c);
      }
      return out;
    }
  }

  private static byte[] der(List<X509Certificate> chain) throws GeneralSecurityException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (X509Certificate c : chain) {
      out.writeBytes(c.getEncoded());
    }
    return out.toByteArray();
  }
}
