package io.bdrp.routing;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import java.util.List;
import java.util.Objects;

/**
 * The control messages that routers exchange with their neighbours: low-rate records, encoded on
 * the wire by the router daemon and passed as objects in the simulator.
 *
 * <p>Route sequence numbers are pairs (epoch, seqno): a router draws a new, larger epoch each time
 * it starts, so routes it originates after a restart are newer than any it originated before, and
 * within an epoch seqno grows by one each time the router refreshes its own route.
 */
public sealed interface ControlMessage {
  /** The router number of the sender. */
  int sender();

  /**
   * Sent every hello interval on each configured link. {@code echoEpoch} is the epoch of the
   * receiver that the sender last heard in a hello from it (0 if none): a link is two-way, and the
   * adjacency up, only once each side hears its own current epoch echoed by the other.
   */
  record Hello(int sender, long epoch, long echoEpoch) implements ControlMessage {}

  /**
   * Distance-vector routes from the sender to the receiver; a periodic update carries every
   * destination the sender knows, a triggered one only those that changed.
   */
  record RouteUpdate(int sender, List<Route> routes) implements ControlMessage {
    public RouteUpdate {
      routes = List.copyOf(routes);
    }
  }

  /**
   * One route: the sender reaches {@code destination} at {@code metric} ({@link Route#INFINITY}:
   * not at all, a retraction) with the destination's sequence number (epoch, seqno). {@code
   * viaReceiver} is true when the sender's selected route to the destination goes through the
   * receiver; the metric is then INFINITY (poisoned reverse), and the receiver learns that the
   * sender is its child in the tree of shortest paths towards the destination, which is what
   * broadcasts from that destination follow. {@code signature} is the destination's over its claim
   * (destination, epoch, seqno) ({@link OriginAuthority#routeClaim}), or null where routers do not
   * sign (without mutual TLS).
   */
  record Route(
      int destination,
      long epoch,
      int seqno,
      int metric,
      boolean viaReceiver,
      OriginSignature signature) {
    /** The metric of an unreachable destination. */
    public static final int INFINITY = 0xFFFF;

    public Route {
      if (metric < 0 || metric > INFINITY) {
        throw new IllegalArgumentException("metric " + metric + " outside 0.." + INFINITY);
      }
    }

    /** A route without a signature. */
    public Route(int destination, long epoch, int seqno, int metric, boolean viaReceiver) {
      this(destination, epoch, seqno, metric, viaReceiver, null);
    }
  }

  /**
   * A periodic full update sent as a digest, to a neighbour that takes them, when every route it
   * would carry was already sent: {@code count} routes, and the sum of {@link #routeHash} over them
   * (modulo 2^64). The receiver computes the same over the routes it holds from the sender, leaving
   * out retractions (a digest is sent only when the full update would carry none); when both agree
   * it refreshes those routes as the full update would, and otherwise it asks for the full table
   * ({@link TableRequest}).
   */
  record RouteDigest(int sender, int count, long hash) implements ControlMessage {
    /** The term of one route in {@link #hash}: the same on every router (docs/wire-protocol.md). */
    public static long routeHash(int destination, long epoch, int seqno, int metric, boolean via) {
      long fields = ((long) destination << 48) | ((long) metric << 32) | (seqno & 0xFFFF_FFFFL);
      return MessageIds.mix(MessageIds.mix(fields) + epoch + (via ? 0x9E37_79B9_7F4A_7C15L : 0));
    }

    /** {@link #routeHash(int, long, int, int, boolean)} of {@code r}. */
    public static long routeHash(Route r) {
      return routeHash(r.destination(), r.epoch(), r.seqno(), r.metric(), r.viaReceiver());
    }
  }

  /**
   * Asks the receiver for its full table: a {@link RouteDigest} did not agree with the routes the
   * sender holds from it. Served at most once per hello interval per neighbour.
   */
  record TableRequest(int sender) implements ControlMessage {}

  /**
   * Asks the routers on the path towards {@code destination} to make the destination originate a
   * route newer than (epoch, seqno), so that a router without a feasible route can accept one.
   * Forwarded along selected routes while {@code hopCount} stays positive.
   */
  record SeqnoRequest(int sender, int destination, long epoch, int seqno, int hopCount)
      implements ControlMessage {}

  /**
   * The encoded predicate of router {@code origin} (the minimal set of Bloom filters of the
   * disjunction of its hosts' predicates), version (epoch, seq). Flooded: each router keeps the
   * newest version per origin and passes a newer one on to its other neighbours. {@code signature}
   * is the origin's over (origin, epoch, seq, digest of the predicate) ({@link
   * OriginAuthority#advertisementClaim}), or null where routers do not sign.
   */
  record PredicateAd(
      int sender,
      int origin,
      long epoch,
      long seq,
      EncodedPredicate predicate,
      OriginSignature signature)
      implements Advertisement {
    public PredicateAd {
      Objects.requireNonNull(predicate, "predicate");
    }

    /** An advertisement without a signature. */
    public PredicateAd(int sender, int origin, long epoch, long seq, EncodedPredicate predicate) {
      this(sender, origin, epoch, seq, predicate, null);
    }
  }

  /** A version of a router's encoded predicate, whole ({@link PredicateAd}) or as a change. */
  sealed interface Advertisement extends ControlMessage permits PredicateAd, PredicateDelta {
    int sender();

    int origin();

    long epoch();

    long seq();

    /**
     * The origin's signature over version (epoch, seq) of its whole predicate (for a change: the
     * predicate it leads to), or null.
     */
    OriginSignature signature();
  }

  /**
   * Version (epoch, seq) of router {@code origin}'s encoded predicate, as the change from version
   * (epoch, baseSeq): the filters {@code removed} from it and those {@code added}. Sent to a
   * neighbour known to hold the base version; one that does not asks for the whole advertisement
   * ({@link PredicateRequest}). {@code signature} is the origin's over the version the change leads
   * to, as in a {@link PredicateAd}: a relay may send a version as a change from any base.
   */
  record PredicateDelta(
      int sender,
      int origin,
      long epoch,
      long baseSeq,
      long seq,
      EncodedPredicate removed,
      EncodedPredicate added,
      OriginSignature signature)
      implements Advertisement {
    /** A change without a signature. */
    public PredicateDelta(
        int sender,
        int origin,
        long epoch,
        long baseSeq,
        long seq,
        EncodedPredicate removed,
        EncodedPredicate added) {
      this(sender, origin, epoch, baseSeq, seq, removed, added, null);
    }

    public PredicateDelta {
      Objects.requireNonNull(removed, "removed");
      Objects.requireNonNull(added, "added");
      if (baseSeq >= seq) {
        throw new IllegalArgumentException(
            "a change from version " + baseSeq + " to " + seq + " does not go forward");
      }
    }
  }

  /**
   * Several advertisements in one message: what a router had queued for one neighbour when its
   * paced flush came (of the same sender, at most one per origin).
   */
  record PredicateBatch(int sender, List<Advertisement> ads) implements ControlMessage {
    public PredicateBatch {
      ads = List.copyOf(ads);
      for (Advertisement a : ads) {
        if (a.sender() != sender) {
          throw new IllegalArgumentException(
              "an advertisement from " + a.sender() + " in a batch from " + sender);
        }
      }
    }
  }

  /** Asks a neighbour for the advertisement it holds for {@code origin}, if any. */
  record PredicateRequest(int sender, int origin) implements ControlMessage {}

  /**
   * The certificate chain of router {@code origin} (DER certificates, concatenated, the router's
   * own first), with which its signed claims are verified. Flooded like advertisements: each router
   * holds the newest valid one per origin and passes a new one on; on a new adjacency the two sides
   * send each other every one held.
   */
  record RouterCert(int sender, int origin, byte[] chain) implements ControlMessage {
    /** Most bytes of a chain. */
    public static final int MAX_CHAIN_BYTES = 16 * 1024;

    public RouterCert {
      if (chain.length == 0 || chain.length > MAX_CHAIN_BYTES) {
        throw new IllegalArgumentException(
            "a certificate chain of " + chain.length + " bytes, outside 1.." + MAX_CHAIN_BYTES);
      }
      chain = chain.clone();
    }

    @Override
    public byte[] chain() {
      return chain.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof RouterCert c
          && c.sender == sender
          && c.origin == origin
          && java.util.Arrays.equals(c.chain, chain);
    }

    @Override
    public int hashCode() {
      return (sender * 31 + origin) * 31 + java.util.Arrays.hashCode(chain);
    }

    @Override
    public String toString() {
      return "RouterCert[sender=" + sender + ", origin=" + origin + ", " + chain.length + " bytes]";
    }
  }

  /**
   * The sizes of the router-link frames that carry advertisements (PREDICATE_AD, PREDICATE_DELTA
   * and PREDICATE_BATCH, laid out by the transport's {@code RouterFrameCodec};
   * docs/wire-protocol.md), as the value of their length field: a frame's bytes after that 4-byte
   * field, which is what a receiver compares with its frame limit ({@link
   * RoutingConfig#maxControlFrameBytes()}). They let {@link PredicateTable} cut batches to the
   * neighbours' frame limit without depending on the transport; the transport's tests check that
   * they agree with the codec.
   *
   * <pre>
   *  every frame     | version u8 | type u8 | sender u16 | ...
   *  PREDICATE_AD    | ... | origin u16 | epoch i64 | seq i64 | filters |
   *  PREDICATE_DELTA | ... | origin u16 | epoch i64 | seq i64 | baseSeq i64 | removed | added |
   *  PREDICATE_BATCH | ... | count u16 | count x (kind u8 | an AD's or a DELTA's fields
   *                  |       [ | sigLen u8 | sig ] (kinds 2 and 3: signed) ) |
   * </pre>
   *
   * A signed advertisement travels only in a PREDICATE_BATCH, alone in one if need be.
   *
   * <p>Stateless.
   */
  final class AdvertisementFrames {
    /** Version, type and sender: the start of every advertisement frame. */
    static final int FRAME_HEAD = 1 + 1 + 2;

    /** Origin, epoch and seq. */
    static final int AD_HEAD = 2 + 8 + 8;

    /** Origin, epoch, seq and baseSeq. */
    static final int DELTA_HEAD = 2 + 8 + 8 + 8;

    /** A PREDICATE_BATCH without advertisements: the frame's head and the count. */
    public static final int EMPTY_BATCH = FRAME_HEAD + 2;

    private AdvertisementFrames() {}

    /** The length field of a PREDICATE_AD carrying {@code p}. */
    public static long whole(EncodedPredicate p) {
      return FRAME_HEAD + AD_HEAD + (long) EncodedPredicateCodec.encodedLength(p);
    }

    /**
     * The most bytes a signature adds to a whole advertisement sent alone: a batch's count, the
     * kind byte, the signature's length and the longest signature.
     */
    public static final int SIGNED_EXTRA = 2 + 1 + 1 + OriginSignature.MAX_BYTES;

    /** The length field of the frame that carries {@code a} alone. */
    public static long alone(Advertisement a) {
      return a.signature() == null ? FRAME_HEAD + body(a) : EMPTY_BATCH + inBatch(a);
    }

    /** The bytes {@code a} adds to a PREDICATE_BATCH (its kind byte included). */
    public static long inBatch(Advertisement a) {
      return 1 + body(a) + (a.signature() == null ? 0 : 1 + a.signature().length());
    }

    /**
     * The length field of the frame that carries {@code m}: a PREDICATE_AD, PREDICATE_DELTA or
     * PREDICATE_BATCH.
     *
     * @throws IllegalArgumentException for another message
     */
    public static long lengthField(ControlMessage m) {
      return switch (m) {
        case Advertisement a -> alone(a);
        case PredicateBatch b -> {
          long n = EMPTY_BATCH;
          for (Advertisement a : b.ads()) {
            n += inBatch(a);
          }
          yield n;
        }
        default -> throw new IllegalArgumentException("not an advertisement frame: " + m);
      };
    }

    /** An advertisement's fields after the sender. */
    private static long body(Advertisement a) {
      return switch (a) {
        case PredicateAd ad -> AD_HEAD + (long) EncodedPredicateCodec.encodedLength(ad.predicate());
        case PredicateDelta d ->
            DELTA_HEAD
                + (long) EncodedPredicateCodec.encodedLength(d.removed())
                + EncodedPredicateCodec.encodedLength(d.added());
      };
    }
  }
}
