package io.bdrp.routing;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Who may speak for an origin: signs this router's own claims and verifies the claims of other
 * origins before they are used. A claim is what only its origin may say:
 *
 * <ul>
 *   <li>a route to itself: (origin, epoch, seqno) — the metric changes at every hop and is not part
 *       of it ({@link #routeClaim});
 *   <li>a version of its encoded predicate: (origin, epoch, seq, SHA-256 of the predicate's
 *       canonical encoding) ({@link #advertisementClaim}), so that a signature survives a relay
 *       sending the version whole, as a change from another version, or in a batch.
 * </ul>
 *
 * Relays carry the origin's {@link OriginSignature} unchanged. {@link #NONE} (the simulator, a
 * router without mutual TLS) signs nothing and takes every claim, as before. A router with mutual
 * TLS signs with its certificate's key and verifies against the certificates of the other routers,
 * which reach it in {@link ControlMessage.RouterCert} messages ({@link #offerCertificate}).
 *
 * <p>Called by the thread that owns the {@link RoutingNode}; an implementation may verify ahead of
 * time elsewhere and answer from a cache.
 */
public interface OriginAuthority {
  /** What became of a claim. */
  enum Verdict {
    /** Signed by the origin's certificate. */
    OK,
    /** No signature where one is required. */
    UNSIGNED,
    /** No certificate of the origin is held yet: the claim is neither used nor condemned. */
    UNKNOWN_CERTIFICATE,
    /** The signature does not verify with the origin's certificate. */
    BAD_SIGNATURE;

    /** The label of the verdict in metrics: its name in lower case. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** What became of a certificate offered for an origin. */
  enum CertificateVerdict {
    /** Valid, and new: now the origin's certificate (to be passed on). */
    NEW,
    /** The one held already, or one it replaced: nothing to do. */
    KNOWN,
    /** Not valid for the origin (not signed by the network's CA, expired, another number). */
    BAD
  }

  /** The kind of a claim refused. */
  enum ClaimKind {
    ROUTE,
    ADVERTISEMENT,
    CERTIFICATE;

    /** The label of the kind in metrics and logs. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** Whether claims are signed and verified at all. */
  boolean enabled();

  /** This router's signature over {@code claim}, one of its own. */
  OriginSignature sign(byte[] claim);

  /** Whether {@code signature} (null: none) is {@code origin}'s over {@code claim}. */
  Verdict verify(int origin, byte[] claim, OriginSignature signature);

  /**
   * Whether {@code signature} is {@code origin}'s over version (epoch, seq) of its predicate {@code
   * p} ({@link #advertisementClaim}). An implementation that verified the same advertisement ahead
   * of time may answer without digesting {@code p} again.
   */
  default Verdict verifyAdvertisement(
      int origin, long epoch, long seq, EncodedPredicate p, OriginSignature signature) {
    if (signature == null) {
      return Verdict.UNSIGNED;
    }
    return verify(origin, advertisementClaim(origin, epoch, seq, p), signature);
  }

  /**
   * The version of {@code origin}'s predicate this router now holds ({@code p} null: none any
   * more), told by the {@link PredicateTable} as it changes, for an implementation that verifies
   * changes ahead of time against it. The default ignores it.
   */
  default void held(int origin, long epoch, long seq, EncodedPredicate p) {}

  /**
   * The predicate that version (epoch, seq) of {@code origin} is, as the change from version
   * (epoch, baseSeq) under {@code signature}, if it was computed and verified ahead of time (taken:
   * asked for once); else null, and the caller applies and verifies the change itself.
   */
  default EncodedPredicate preparedChange(
      int origin, long epoch, long baseSeq, long seq, OriginSignature signature) {
    return null;
  }

  /** This router's certificate chain as it is flooded (DER, concatenated), or null. */
  byte[] ownCertificate();

  /** Takes {@code chain} as {@code origin}'s certificate if it is valid and newer. */
  CertificateVerdict offerCertificate(int origin, byte[] chain);

  /**
   * A claim refused ({@code why} is not {@link Verdict#OK}) from neighbour {@code sender}: for
   * counting and logging. The default ignores it.
   */
  default void refused(ClaimKind kind, int origin, int sender, Verdict why) {}

  /** Signs nothing and takes every claim. */
  OriginAuthority NONE =
      new OriginAuthority() {
        @Override
        public boolean enabled() {
          return false;
        }

        @Override
        public OriginSignature sign(byte[] claim) {
          return null;
        }

        @Override
        public Verdict verify(int origin, byte[] claim, OriginSignature signature) {
          return Verdict.OK;
        }

        @Override
        public byte[] ownCertificate() {
          return null;
        }

        @Override
        public CertificateVerdict offerCertificate(int origin, byte[] chain) {
          return CertificateVerdict.KNOWN;
        }
      };

  /** The domain tag of route claims: a route claim is never an advertisement claim. */
  String ROUTE_TAG = "bdrp route claim v1";

  /** The domain tag of advertisement claims. */
  String ADVERTISEMENT_TAG = "bdrp predicate claim v1";

  /**
   * The bytes an origin signs for its route to itself: the tag, a zero byte, origin (i32), epoch
   * (i64), seqno (i32), big-endian.
   */
  static byte[] routeClaim(int origin, long epoch, int seqno) {
    byte[] tag = ROUTE_TAG.getBytes(StandardCharsets.US_ASCII);
    return ByteBuffer.allocate(tag.length + 1 + 4 + 8 + 4)
        .put(tag)
        .put((byte) 0)
        .putInt(origin)
        .putLong(epoch)
        .putInt(seqno)
        .array();
  }

  /**
   * The bytes an origin signs for version (epoch, seq) of its encoded predicate {@code p}: the tag,
   * a zero byte, origin (i32), epoch (i64), seq (i64) and the SHA-256 digest of {@code p}'s
   * canonical encoding ({@link EncodedPredicateCodec}), big-endian.
   */
  static byte[] advertisementClaim(int origin, long epoch, long seq, EncodedPredicate p) {
    byte[] tag = ADVERTISEMENT_TAG.getBytes(StandardCharsets.US_ASCII);
    byte[] digest;
    try {
      digest = MessageDigest.getInstance("SHA-256").digest(EncodedPredicateCodec.toBytes(p));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
    return ByteBuffer.allocate(tag.length + 1 + 4 + 8 + 8 + digest.length)
        .put(tag)
        .put((byte) 0)
        .putInt(origin)
        .putLong(epoch)
        .putLong(seq)
        .put(digest)
        .array();
  }
}
