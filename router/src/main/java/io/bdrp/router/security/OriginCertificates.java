package io.bdrp.router.security;

import io.bdrp.routing.OriginAuthority.CertificateVerdict;
import io.bdrp.routing.OriginAuthority.Verdict;
import io.bdrp.routing.OriginSignature;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The routers' certificates, by router number, and the verification of their claims.
 *
 * <p>A certificate is taken for router N ({@link #offer}) when its chain validates (PKIX, at the
 * current time, without revocation) up to the network's CA ({@code tls.ca}), its leaf names N by a
 * subjectAltName URI {@code urn:bdrp:router:N}, and its key is EC or Ed25519. A newer certificate
 * ({@link #newer}: a later notBefore, then a larger serial) replaces the one held; the replaced one
 * is kept as the origin's previous certificate and still verifies claims while it is valid, so that
 * claims signed before a renewal and still relayed are not refused while the origin re-signs them.
 *
 * <p>Verified claims are remembered (origin, claim bytes, signature; at most {@value #CACHE}), so
 * that the same claim relayed by several neighbours, or repeated in every periodic update, is
 * verified once.
 *
 * <p>Thread-safe: the loop verifies, offers certificates and holds this router's own; the control
 * thread verifies and validates chains ahead of their offer ({@link #validateAhead}).
 */
final class OriginCertificates {
  /** Most verified claims remembered. */
  static final int CACHE = 1 << 16;

  /** An origin's certificate, and the one it replaced (null if none). */
  private record Held(X509Certificate cert, byte[] chain, X509Certificate previous) {}

  /** A claim that verified. */
  private record Verified(int origin, ByteKey claim, OriginSignature signature) {}

  /** Bytes compared by content. */
  private record ByteKey(byte[] bytes) {
    @Override
    public boolean equals(Object o) {
      return o instanceof ByteKey k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }
  }

  private final LongSupplier wallMillis;
  private volatile Set<TrustAnchor> anchors;
  private final ConcurrentHashMap<Integer, Held> held = new ConcurrentHashMap<>();

  /**
   * Per origin without a certificate held, the leaf of a chain {@link #validateAhead} validated and
   * the loop has not taken yet: claims of that origin that follow it in the flood verify with it
   * ahead of time rather than on the loop (it is valid for the origin, which is all taking it
   * checks).
   */
  private final ConcurrentHashMap<Integer, X509Certificate> pending = new ConcurrentHashMap<>();

  /** Chains validated ahead of their offer (by {@link #validateAhead}), by chain bytes. */
  private final Map<ByteKey, X509Certificate> validated = lru(256);

  private final Map<Verified, Boolean> verified = lru(CACHE);

  /** Certificates verified against the wall clock {@code wallMillis}; none trusted yet. */
  OriginCertificates(LongSupplier wallMillis) {
    this.wallMillis = wallMillis;
  }

  /**
   * The network's CA from PEM file {@code ca}, on any thread (a file read).
   *
   * @throws IllegalArgumentException if the file holds no certificate
   */
  static Set<TrustAnchor> anchors(Path ca) throws IOException, GeneralSecurityException {
    Set<TrustAnchor> a = new HashSet<>();
    for (X509Certificate c : OriginSigner.pemCertificates(ca)) {
      a.add(new TrustAnchor(c, null));
    }
    if (a.isEmpty()) {
      throw new IllegalArgumentException(ca + " holds no certificate");
    }
    return Set.copyOf(a);
  }

  /** Validates chains up to {@code anchors} from now on. */
  void trust(Set<TrustAnchor> anchors) {
    this.anchors = anchors;
  }

  /**
   * Holds {@code cert} (with its DER {@code chain}) as router {@code self}'s, the one held before
   * kept as its previous certificate: this router's own, after it changed.
   */
  void hold(int self, X509Certificate cert, byte[] chain) {
    Held h = held.get(self);
    held.put(self, new Held(cert, chain, h == null ? null : h.cert()));
  }

  /** Whether {@code signature} over {@code claim} is {@code origin}'s, by its certificate. */
  Verdict verify(int origin, byte[] claim, OriginSignature signature) {
    if (signature == null) {
      return Verdict.UNSIGNED;
    }
    Held h = held.get(origin);
    if (h == null) {
      X509Certificate p = pending.get(origin);
      if (p == null) {
        return Verdict.UNKNOWN_CERTIFICATE;
      }
      h = new Held(p, null, null);
    }
    if (h.cert().getNotAfter().getTime() <= wallMillis.getAsLong()) {
      // An origin whose certificate expired has none until a renewed one comes: a key past its
      // certificate's end speaks for nobody, however many claims it signed before.
      return Verdict.UNKNOWN_CERTIFICATE;
    }
    Verified v = new Verified(origin, new ByteKey(claim), signature);
    synchronized (verified) {
      if (verified.get(v) != null) {
        return Verdict.OK;
      }
    }
    boolean ok =
        verifies(h.cert().getPublicKey(), claim, signature)
            || (h.previous() != null
                && h.previous().getNotAfter().getTime() > wallMillis.getAsLong()
                && verifies(h.previous().getPublicKey(), claim, signature));
    if (!ok) {
      return Verdict.BAD_SIGNATURE;
    }
    synchronized (verified) {
      verified.put(v, Boolean.TRUE);
    }
    return Verdict.OK;
  }

  /** Whether {@code signature} over {@code claim} verifies with {@code key}. */
  static boolean verifies(PublicKey key, byte[] claim, OriginSignature signature) {
    try {
      Signature s = Signature.getInstance(TlsFiles.signatureAlgorithm(key.getAlgorithm()));
      s.initVerify(key);
      s.update(claim);
      return s.verify(signature.bytes());
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false; // a malformed signature, or a key of another algorithm
    }
  }

  /**
   * Takes {@code chain} as router {@code origin}'s if it is (see the class) and newer than the one
   * held.
   */
  CertificateVerdict offer(int origin, byte[] chain) {
    Held h = held.get(origin);
    if (h != null && Arrays.equals(h.chain(), chain)) {
      return CertificateVerdict.KNOWN;
    }
    X509Certificate leaf;
    synchronized (validated) {
      leaf = validated.remove(new ByteKey(chain));
    }
    if (leaf == null) {
      leaf = validate(origin, chain);
    }
    if (leaf == null) {
      return CertificateVerdict.BAD;
    }
    if (h != null && !newer(leaf, h.cert())) {
      return CertificateVerdict.KNOWN; // not newer than the one held: kept
    }
    held.put(origin, new Held(leaf, chain.clone(), h == null ? null : h.cert()));
    pending.remove(origin);
    return CertificateVerdict.NEW;
  }

  /**
   * Validates {@code chain} of router {@code origin} ahead of its offer (on the control thread),
   * unless it is the one held: {@link #offer} then finds it validated, and until then claims of an
   * origin without a certificate verify with it.
   */
  void validateAhead(int origin, byte[] chain) {
    Held h = held.get(origin);
    if (h == null || !Arrays.equals(h.chain(), chain)) {
      X509Certificate leaf = validate(origin, chain);
      if (leaf != null) {
        synchronized (validated) {
          validated.put(new ByteKey(chain), leaf);
        }
        if (h == null) {
          pending.put(origin, leaf);
        }
      }
    }
  }

  /**
   * Whether certificate {@code a} of an origin is newer than {@code b}: a later notBefore, or the
   * same and a larger serial number (a CA numbers what it issues upwards). A total order, so that
   * two certificates of one origin flooded at once settle on the same one everywhere.
   */
  static boolean newer(X509Certificate a, X509Certificate b) {
    int c = a.getNotBefore().compareTo(b.getNotBefore());
    return c != 0 ? c > 0 : a.getSerialNumber().compareTo(b.getSerialNumber()) > 0;
  }

  /** The certificate held for {@code origin}, or null. */
  X509Certificate certificateOf(int origin) {
    Held h = held.get(origin);
    return h == null ? null : h.cert();
  }

  /** Certificates held, this router's own included. */
  int size() {
    return held.size();
  }

  /**
   * The leaf of {@code chain} if the chain is router {@code origin}'s: DER certificates that
   * validate up to the CA now, the first naming {@code origin}, with an EC or Ed25519 key; else
   * null.
   */
  X509Certificate validate(int origin, byte[] chain) {
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      List<X509Certificate> certs = new ArrayList<>();
      for (Certificate c : cf.generateCertificates(new ByteArrayInputStream(chain))) {
        if (!(c instanceof X509Certificate x) || certs.size() == OriginSigner.MAX_CHAIN) {
          return null;
        }
        certs.add(x);
      }
      if (certs.isEmpty()) {
        return null;
      }
      X509Certificate leaf = certs.get(0);
      if (!RouterTls.routerNumbers(leaf).contains(origin)) {
        return null;
      }
      String alg = leaf.getPublicKey().getAlgorithm();
      if (!alg.equals("EC") && !alg.equals("Ed25519") && !alg.equals("EdDSA")) {
        return null;
      }
      PKIXParameters p = new PKIXParameters(anchors);
      p.setRevocationEnabled(false);
      p.setDate(new Date(wallMillis.getAsLong()));
      CertPathValidator.getInstance("PKIX").validate(cf.generateCertPath(certs), p);
      return leaf;
    } catch (GeneralSecurityException | RuntimeException e) {
      return null;
    }
  }

  private static <K, V> Map<K, V> lru(int max) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > max;
      }
    };
  }
}
