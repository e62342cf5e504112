package io.bdrp.router.security;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.WarnEvery;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginAuthority;
import io.bdrp.routing.OriginSignature;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link OriginAuthority} of a router with mutual TLS, from its TLS files: it signs this
 * router's claims with the key of its TLS certificate ({@link OriginSigner}), verifies other
 * routers' claims with their certificates ({@link OriginCertificates}), verifies a message's claims
 * ahead of its use on the router's control thread ({@link #prepare}, {@link PreparedClaims}), and
 * counts and logs the claims the router refuses.
 *
 * <p>Thread-safe: the loop signs, verifies, offers certificates and takes renewed keys ({@link
 * #use}); the control thread prepares.
 */
public final class OriginKeys implements OriginAuthority {
  private static final Logger log = LoggerFactory.getLogger(OriginKeys.class);

  private final int self;
  private volatile OriginSigner own;
  private final OriginCertificates certificates;
  private final PreparedClaims prepared;

  /** Refusals by kind and verdict, counted and logged at most every ten seconds. */
  private final Map<String, Metrics.Counter> refusals = new ConcurrentHashMap<>();

  private final RouterMetrics metrics;
  private final WarnEvery refusalLog = new WarnEvery(); // guarded by this

  private OriginKeys(int self, LongSupplier wallMillis, RouterMetrics metrics) {
    this.self = self;
    this.metrics = metrics;
    this.certificates = new OriginCertificates(wallMillis);
    this.prepared = new PreparedClaims(self, certificates);
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
  record Loaded(OriginSigner own, Set<TrustAnchor> anchors) {}

  /**
   * Reads and checks the files, on any thread (a file read: never on the router's loop).
   *
   * @throws IllegalArgumentException naming the file and the problem
   */
  static Loaded read(Path cert, Path key, Path ca) {
    TlsFiles.checkPair(cert, key);
    try {
      OriginSigner next = OriginSigner.read(cert, key);
      return new Loaded(next, OriginCertificates.anchors(ca));
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
    OriginSigner before = own;
    OriginSigner next = loaded.own();
    certificates.trust(loaded.anchors());
    own = next;
    boolean changed = !next.sameChain(before);
    if (changed) {
      certificates.hold(self, next.certificate(), next.chain());
    }
    return changed;
  }

  @Override
  public boolean enabled() {
    return true;
  }

  @Override
  public OriginSignature sign(byte[] claim) {
    return own.sign(claim);
  }

  @Override
  public Verdict verify(int origin, byte[] claim, OriginSignature signature) {
    return certificates.verify(origin, claim, signature);
  }

  @Override
  public Verdict verifyAdvertisement(
      int origin, long epoch, long seq, EncodedPredicate p, OriginSignature signature) {
    if (signature != null && prepared.takeAdvertisement(origin, epoch, seq, p, signature)) {
      return Verdict.OK;
    }
    return OriginAuthority.super.verifyAdvertisement(origin, epoch, seq, p, signature);
  }

  @Override
  public void held(int origin, long epoch, long seq, EncodedPredicate p) {
    prepared.held(origin, epoch, seq, p);
  }

  @Override
  public EncodedPredicate preparedChange(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {
    return signature == null ? null : prepared.takeChange(origin, epoch, baseSeq, seq, signature);
  }

  @Override
  public byte[] ownCertificate() {
    return own.chain();
  }

  @Override
  public CertificateVerdict offerCertificate(int origin, byte[] chain) {
    return certificates.offer(origin, chain);
  }

  /** The certificate held for {@code origin}, or null. */
  public X509Certificate certificateOf(int origin) {
    return certificates.certificateOf(origin);
  }

  /** Certificates held, this router's own included. */
  int certificatesHeld() {
    return certificates.size();
  }

  /**
   * Verifies the claims {@code m} carries ahead of its use (on the control thread), so that the
   * loop finds them verified (see {@link PreparedClaims#prepare}).
   */
  public void prepare(ControlMessage m) {
    prepared.prepare(m);
  }

  /** Whether {@code m} carries anything {@link #prepare} verifies. */
  public static boolean carriesClaims(ControlMessage m) {
    return PreparedClaims.carriesClaims(m);
  }

  @Override
  public void refused(ClaimKind kind, int origin, int sender, Verdict why) {
    Metrics.Counter c = refusals(kind, why);
    if (c != null) {
      c.inc();
    }
    synchronized (this) {
      long unlogged = refusalLog.due();
      if (unlogged < 0) {
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
}
