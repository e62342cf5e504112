package io.bdrp.router.security;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginAuthority;
import io.bdrp.routing.OriginAuthority.Verdict;
import io.bdrp.routing.OriginSignature;
import java.util.LinkedHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The claims of control messages verified ahead of their use, on the router's control thread, so
 * that the loop finds them verified: routes and certificate chains are remembered by {@link
 * OriginCertificates}, whole advertisements and changes here, with the predicate each was verified
 * over (the loop then need not digest or apply it again).
 *
 * <p>What does not verify here (or whose certificate comes in the same flood) is verified again on
 * the loop when used, so nothing here decides what is used.
 *
 * <p>Thread-safe: the control thread prepares; the loop tells the versions it holds and takes what
 * was prepared.
 */
final class PreparedClaims {
  /** Most bytes of filters {@link #prepared} holds. */
  static final long PREPARED_BYTES = 64L << 20;

  /** A version of an origin's advertisement, by its signature. */
  private record Version(int origin, long epoch, long seq, OriginSignature signature) {}

  /** A version of an origin's advertisement as the change from a base, by its signature. */
  private record Change(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {}

  /** A version the loop's PREDICATES holds. */
  private record TableVersion(long epoch, long seq, EncodedPredicate predicate) {}

  private final int self;
  private final OriginCertificates certificates;

  /**
   * The version PREDICATES holds per origin (the same objects, told by the loop as they change),
   * against which {@link #prepare} applies and verifies changes.
   */
  private final ConcurrentHashMap<Integer, TableVersion> table = new ConcurrentHashMap<>();

  /**
   * Whole advertisements and changes verified by {@link #prepare} and not yet used on the loop,
   * with the predicate each was verified over. Bounded by count and by {@value #PREPARED_BYTES}
   * bytes of filters, oldest dropped first.
   */
  private final LinkedHashMap<Object, EncodedPredicate> prepared = new LinkedHashMap<>();

  private long preparedBytes;

  /** Claims to router {@code self} verified with {@code certificates}. */
  PreparedClaims(int self, OriginCertificates certificates) {
    this.self = self;
    this.certificates = certificates;
  }

  /** Whether {@code m} carries anything {@link #prepare} verifies. */
  static boolean carriesClaims(ControlMessage m) {
    return m instanceof ControlMessage.RouteUpdate
        || m instanceof ControlMessage.PredicateBatch
        || m instanceof ControlMessage.Advertisement
        || m instanceof ControlMessage.RouterCert;
  }

  /**
   * Verifies the claims {@code m} carries ahead of its use (on the control thread): whole
   * advertisements, routes and certificate chains. A change is applied to the version the loop's
   * PREDICATES holds (told by {@link #held}) and verified over the version it leads to; when its
   * base is not the one held, the loop applies and verifies it.
   */
  void prepare(ControlMessage m) {
    switch (m) {
      case ControlMessage.RouteUpdate u -> {
        for (ControlMessage.Route r : u.routes()) {
          if (r.signature() != null) {
            certificates.verify(
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
      case ControlMessage.RouterCert c -> certificates.validateAhead(c.origin(), c.chain());
      default -> {}
    }
  }

  /** The version of {@code origin}'s advertisement PREDICATES holds now (null: none). */
  void held(int origin, long epoch, long seq, EncodedPredicate p) {
    if (p == null) {
      table.remove(origin);
    } else {
      table.put(origin, new TableVersion(epoch, seq, p));
    }
  }

  /**
   * Whether the whole advertisement {@code p} was verified here under {@code signature}: taken
   * once, so that it is forgotten when used.
   */
  boolean takeAdvertisement(
      int origin, long epoch, long seq, EncodedPredicate p, OriginSignature signature) {
    EncodedPredicate done;
    synchronized (prepared) {
      done = prepared.remove(new Version(origin, epoch, seq, signature));
      if (done != null) {
        preparedBytes -= done.byteSize();
      }
    }
    return done != null && (done == p || done.equals(p));
  }

  /** The version a change verified here leads to, taken once; null if none was. */
  EncodedPredicate takeChange(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {
    synchronized (prepared) {
      EncodedPredicate p = prepared.remove(new Change(origin, epoch, baseSeq, seq, signature));
      if (p != null) {
        preparedBytes -= p.byteSize();
      }
      return p;
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
        certificates.verify(
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
   * version it leads to kept for the loop ({@link #takeChange}). Another base (the loop has not
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
        certificates.verify(
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
}
