package io.bdrp.router;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginAuthority;
import io.bdrp.routing.OriginSignature;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link OriginAuthority} of a router with mutual TLS: it signs this router's claims with the
 * key of its TLS certificate (SHA256withECDSA for an EC key, as docs/security.md prescribes,
 * Ed25519 for an Ed25519 key) and verifies other routers' claims with their certificates.
 *
 * <p>A certificate is taken for router N ({@link #offerCertificate}) when its chain validates
 * (PKIX, at the current time, without revocation) up to the network's CA ({@code tls.ca}), its leaf
 * names N by a subjectAltName URI {@code urn:bdrp:router:N}, and its key is EC or Ed25519. A newer
 * certificate ({@link #newer}: a later notBefore, then a larger serial) replaces the one held; the
 * replaced one is kept as the origin's previous certificate and still verifies claims while it is
 * valid, so that claims signed before a renewal and still relayed are not refused while the origin
 * re-signs them.
 *
 * <p>Verified claims are remembered (origin, claim bytes, signature; at most {@value #CACHE}), so
 * that the same claim relayed by several neighbours, or repeated in every periodic update, is
 * verified once. {@link #prepare} verifies a message's claims ahead of its use, on the router's
 * control thread, so that the loop finds them remembered.
 *
 * <p>Thread-safe: the loop signs, verifies and offers certificates; the control thread prepares.
 */
final class OriginKeys implements OriginAuthority {
  private static final Logger log = LoggerFactory.getLogger(OriginKeys.class);

  /** Most verified claims remembered. */
  static final int CACHE = 1 << 16;

  /** Most certificates in a chain. */
  static final int MAX_CHAIN = 4;

  /** This router's key and certificate chain. */
  private record Own(PrivateKey key, String algorithm, X509Certificate cert, byte[] chain) {}

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

  /**
   * The randomness of signatures (ECDSA's): a DRBG seeded once when the class loads, so that a
   * signature made on the router's loop reads no file (the platform's default generator reads
   * {@code /dev/urandom} at each draw).
   */
  private static final java.security.SecureRandom RANDOM = seeded();

  private static java.security.SecureRandom seeded() {
    try {
      java.security.SecureRandom r = java.security.SecureRandom.getInstance("DRBG");
      r.nextBytes(new byte[1]);
      return r;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("DRBG is part of every JDK", e);
    }
  }

  private final int self;
  private final LongSupplier wallMillis;
  private volatile Own own;
  private volatile Set<TrustAnchor> anchors;
  private final ConcurrentHashMap<Integer, Held> held = new ConcurrentHashMap<>();

  /**
   * Per origin without a certificate held, the leaf of a chain {@link #prepare} validated and the
   * loop has not taken yet: claims of that origin that follow it in the flood verify with it ahead
   * of time rather than on the loop (it is valid for the origin, which is all taking it checks).
   */
  private final ConcurrentHashMap<Integer, X509Certificate> pending = new ConcurrentHashMap<>();

  /** Chains validated ahead of their offer (by {@link #prepare}), by chain bytes. */
  private final Map<ByteKey, X509Certificate> validated = lru(256);

  private final Map<Verified, Boolean> verified = lru(CACHE);

  /** A version of an origin's advertisement, by its signature. */
  private record Version(int origin, long epoch, long seq, OriginSignature signature) {}

  /** A version of an origin's advertisement as the change from a base, by its signature. */
  private record Change(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {}

  /** A version the loop's PREDICATES holds. */
  private record TableVersion(long epoch, long seq, EncodedPredicate predicate) {}

  /**
   * The version PREDICATES holds per origin (the same objects, told by the loop as they change),
   * against which {@link #prepare} applies and verifies changes.
   */
  private final ConcurrentHashMap<Integer, TableVersion> table = new ConcurrentHashMap<>();

  /**
   * Whole advertisements verified by {@link #prepare} and not yet used on the loop, with the
   * predicate each was verified over: the loop then need not digest it again. Bounded by count and
   * by {@value #PREPARED_BYTES} bytes of filters, oldest dropped first.
   */
  private final LinkedHashMap<Object, EncodedPredicate> prepared = new LinkedHashMap<>();

  private long preparedBytes;

  /** Most bytes of filters {@link #prepared} holds. */
  static final long PREPARED_BYTES = 64L << 20;

  /** Refusals by kind and verdict, counted and logged at most every ten seconds. */
  private final Map<String, Metrics.Counter> refusals = new ConcurrentHashMap<>();

  private final RouterMetrics metrics;
  private long loggedAtNanos;
  private long unlogged;

  private OriginKeys(int self, LongSupplier wallMillis, RouterMetrics metrics) {
    this.self = self;
    this.wallMillis = wallMillis;
    this.metrics = metrics;
  }

  /**
   * The authority of router {@code self} from its TLS files: the certificate chain {@code cert}
   * (PEM, the router's own first), its PKCS#8 key {@code key}, and the network's CA {@code ca}.
   *
   * @param metrics where refusals are counted, or null
   * @throws IllegalArgumentException naming the file and the problem
   */
  static OriginKeys load(int self, Path cert, Path key, Path ca, RouterMetrics metrics) {
    return load(self, cert, key, ca, metrics, System::currentTimeMillis);
  }

  /**
   * As {@link #load(int, Path, Path, Path, RouterMetrics)} with the wall clock {@code wallMillis}.
   */
  static OriginKeys load(
      int self, Path cert, Path key, Path ca, RouterMetrics metrics, LongSupplier wallMillis) {
    OriginKeys k = new OriginKeys(self, wallMillis, metrics);
    k.reload(cert, key, ca);
    return k;
  }

  /**
   * Reads the files again (a renewed certificate, key or CA): {@link #read} then {@link #use}.
   *
   * @return whether this router's certificate changed
   * @throws IllegalArgumentException naming the file and the problem; nothing changes then
   */
  boolean reload(Path cert, Path key, Path ca) {
    return use(read(cert, key, ca));
  }

  /** What {@link #read} made of the files: the key to sign with and the CA's anchors. */
  record Loaded(Own own, Set<TrustAnchor> anchors) {}

  /**
   * Reads and checks the files, on any thread (a file read: never on the router's loop).
   *
   * @throws IllegalArgumentException naming the file and the problem
   */
  static Loaded read(Path cert, Path key, Path ca) {
    TlsFiles.checkPair(cert, key);
    try {
      List<X509Certificate> chain = pemCertificates(cert);
      if (chain.isEmpty() || chain.size() > MAX_CHAIN) {
        throw new IllegalArgumentException(
            cert + " holds " + chain.size() + " certificates, not 1.." + MAX_CHAIN);
      }
      X509Certificate leaf = chain.get(0);
      String alg = leaf.getPublicKey().getAlgorithm();
      Own next =
          new Own(
              TlsFiles.privateKey(key, alg), TlsFiles.signatureAlgorithm(alg), leaf, der(chain));
      if (next.chain().length > ControlMessage.RouterCert.MAX_CHAIN_BYTES) {
        throw new IllegalArgumentException(
            cert
                + " takes "
                + next.chain().length
                + " bytes in DER, more than "
                + ControlMessage.RouterCert.MAX_CHAIN_BYTES);
      }
      Set<TrustAnchor> a = new HashSet<>();
      for (X509Certificate c : pemCertificates(ca)) {
        a.add(new TrustAnchor(c, null));
      }
      if (a.isEmpty()) {
        throw new IllegalArgumentException(ca + " holds no certificate");
      }
      return new Loaded(next, Set.copyOf(a));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "cannot sign with certificate " + cert + ", key " + key + ": " + e.getMessage(), e);
    }
  }

  /**
   * Signs with {@code loaded}'s key and trusts its CA from now on (on the router's loop).
   *
   * @return whether this router's certificate changed
   */
  boolean use(Loaded loaded) {
    Own before = own;
    Own next = loaded.own();
    anchors = loaded.anchors();
    own = next;
    boolean changed = before == null || !Arrays.equals(before.chain(), next.chain());
    if (changed) {
      Held h = held.get(self);
      held.put(self, new Held(next.cert(), next.chain(), h == null ? null : h.cert()));
    }
    return changed;
  }

  @Override
  public boolean enabled() {
    return true;
  }

  @Override
  public OriginSignature sign(byte[] claim) {
    Own o = own;
    try {
      Signature s = Signature.getInstance(o.algorithm());
      s.initSign(o.key(), RANDOM);
      s.update(claim);
      return new OriginSignature(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with this router's key: " + e.getMessage(), e);
    }
  }

  @Override
  public Verdict verify(int origin, byte[] claim, OriginSignature signature) {
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

  @Override
  public Verdict verifyAdvertisement(
      int origin, long epoch, long seq, EncodedPredicate p, OriginSignature signature) {
    if (signature != null) {
      EncodedPredicate done;
      synchronized (prepared) {
        done = prepared.remove(new Version(origin, epoch, seq, signature));
        if (done != null) {
          preparedBytes -= done.byteSize();
        }
      }
      if (done != null && (done == p || done.equals(p))) {
        return Verdict.OK;
      }
    }
    return OriginAuthority.super.verifyAdvertisement(origin, epoch, seq, p, signature);
  }

  @Override
  public void held(int origin, long epoch, long seq, EncodedPredicate p) {
    if (p == null) {
      table.remove(origin);
    } else {
      table.put(origin, new TableVersion(epoch, seq, p));
    }
  }

  @Override
  public EncodedPredicate preparedChange(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {
    if (signature == null) {
      return null;
    }
    synchronized (prepared) {
      EncodedPredicate p = prepared.remove(new Change(origin, epoch, baseSeq, seq, signature));
      if (p != null) {
        preparedBytes -= p.byteSize();
      }
      return p;
    }
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

  @Override
  public byte[] ownCertificate() {
    return own.chain().clone();
  }

  @Override
  public CertificateVerdict offerCertificate(int origin, byte[] chain) {
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
        if (!(c instanceof X509Certificate x) || certs.size() == MAX_CHAIN) {
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
      p.setDate(new java.util.Date(wallMillis.getAsLong()));
      CertPathValidator.getInstance("PKIX").validate(cf.generateCertPath(certs), p);
      return leaf;
    } catch (GeneralSecurityException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Verifies the claims {@code m} carries ahead of its use (on the control thread): whole
   * advertisements, routes and certificate chains. What verifies is remembered, and the loop finds
   * it so; a claim that does not (or whose certificate comes in the same flood) is verified again
   * on the loop when used, so nothing here decides what is used. A change is applied to the version
   * the loop's PREDICATES holds (told by {@link #held}) and verified over the version it leads to;
   * when its base is not the one held, the loop applies and verifies it.
   */
  void prepare(ControlMessage m) {
    switch (m) {
      case ControlMessage.RouteUpdate u -> {
        for (ControlMessage.Route r : u.routes()) {
          if (r.signature() != null) {
            verify(
                r.destination(),
                OriginAuthority.routeClaim(r.destination(), r.epoch(), r.seqno()),
                r.signature());
          }
        }
      }
      case ControlMessage.PredicateBatch b -> {
        for (ControlMessage.Advertisement a : b.ads()) {
          prepareAd(a);
        }
      }
      case ControlMessage.Advertisement a -> prepareAd(a);
      case ControlMessage.RouterCert c -> {
        byte[] chain = c.chain();
        Held h = held.get(c.origin());
        if (h == null || !Arrays.equals(h.chain(), chain)) {
          X509Certificate leaf = validate(c.origin(), chain);
          if (leaf != null) {
            synchronized (validated) {
              validated.put(new ByteKey(chain), leaf);
            }
            if (h == null) {
              pending.put(c.origin(), leaf);
            }
          }
        }
      }
      default -> {}
    }
  }

  private void prepareAd(ControlMessage.Advertisement a) {
    if (a instanceof ControlMessage.PredicateDelta d) {
      prepareChange(d);
      return;
    }
    if (!(a instanceof ControlMessage.PredicateAd ad) || ad.signature() == null) {
      return;
    }
    Version v = new Version(ad.origin(), ad.epoch(), ad.seq(), ad.signature());
    synchronized (prepared) {
      if (prepared.containsKey(v)) {
        return; // the same version from another neighbour: verified already
      }
    }
    Verdict ok =
        verify(
            ad.origin(),
            OriginAuthority.advertisementClaim(ad.origin(), ad.epoch(), ad.seq(), ad.predicate()),
            ad.signature());
    if (ok != Verdict.OK || ad.predicate().byteSize() > PREPARED_BYTES) {
      return;
    }
    keep(v, ad.predicate());
  }

  /**
   * A change whose base is the version PREDICATES holds now: applied and verified here, and the
   * version it leads to kept for the loop ({@link #preparedChange}). Another base (the loop has not
   * taken it yet, or holds another version) leaves the change to the loop.
   */
  private void prepareChange(ControlMessage.PredicateDelta d) {
    TableVersion base = table.get(d.origin());
    if (d.signature() == null
        || d.origin() == self
        || base == null
        || base.epoch() != d.epoch()
        || base.seq() != d.baseSeq()) {
      return;
    }
    Change c = new Change(d.origin(), d.epoch(), d.baseSeq(), d.seq(), d.signature());
    synchronized (prepared) {
      if (prepared.containsKey(c)) {
        return;
      }
    }
    EncodedPredicate p = base.predicate().apply(d.removed(), d.added());
    if (p == null || p.byteSize() > PREPARED_BYTES) {
      return;
    }
    Verdict ok =
        verify(
            d.origin(),
            OriginAuthority.advertisementClaim(d.origin(), d.epoch(), d.seq(), p),
            d.signature());
    if (ok == Verdict.OK) {
      keep(c, p);
    }
  }

  /** Keeps a version verified here for the loop, within the bounds of {@link #prepared}. */
  private void keep(Object key, EncodedPredicate p) {
    synchronized (prepared) {
      if (prepared.putIfAbsent(key, p) == null) {
        preparedBytes += p.byteSize();
      }
      var it = prepared.values().iterator();
      while ((preparedBytes > PREPARED_BYTES || prepared.size() > 4096) && it.hasNext()) {
        preparedBytes -= it.next().byteSize();
        it.remove();
      }
    }
  }

  /** Whether {@code m} carries anything {@link #prepare} verifies. */
  static boolean carriesClaims(ControlMessage m) {
    return m instanceof ControlMessage.RouteUpdate
        || m instanceof ControlMessage.PredicateBatch
        || m instanceof ControlMessage.Advertisement
        || m instanceof ControlMessage.RouterCert;
  }

  @Override
  public void refused(ClaimKind kind, int origin, int sender, Verdict why) {
    Metrics.Counter c = refusals(kind, why);
    if (c != null) {
      c.inc();
    }
    long now = System.nanoTime();
    synchronized (this) {
      if (loggedAtNanos != 0 && now - loggedAtNanos < TimeUnit.SECONDS.toNanos(10)) {
        unlogged++;
        return;
      }
      log.warn(
          "router {}: refused a {} claim of router {} from neighbour {}: {}{}",
          self,
          kind.label(),
          origin,
          sender,
          switch (why) {
            case UNSIGNED -> "it carries no signature";
            case UNKNOWN_CERTIFICATE -> "no certificate of the origin is held yet";
            case BAD_SIGNATURE ->
                kind == ClaimKind.CERTIFICATE
                    ? "the chain is not the origin's under the network's CA"
                    : "the signature is not the origin's";
            case OK -> "ok";
          },
          unlogged == 0 ? "" : " (and " + unlogged + " more refusals since the last such line)");
      loggedAtNanos = now;
      unlogged = 0;
    }
  }

  /** The counter of refusals of {@code kind} for {@code why}. */
  Metrics.Counter refusals(ClaimKind kind, Verdict why) {
    if (metrics == null) {
      return null;
    }
    return refusals.computeIfAbsent(
        kind.label() + '/' + why.label(), k -> metrics.originClaimsRefused(kind, why));
  }

  /** Certificates held, this router's own included. */
  int certificatesHeld() {
    return held.size();
  }

  private static List<X509Certificate> pemCertificates(Path file)
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

  private static <K, V> Map<K, V> lru(int max) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > max;
      }
    };
  }
}
