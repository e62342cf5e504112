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
   * broadcasts from that destination follow.
   */
  record Route(int destination, long epoch, int seqno, int metric, boolean viaReceiver) {
    /** The metric of an unreachable destination. */
    public static final int INFINITY = 0xFFFF;

    public Route {
      if (metric < 0 || metric > INFINITY) {
        throw new IllegalArgumentException("metric " + metric + " outside 0.." + INFINITY);
      }
    }
  }

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
   * newest version per origin and passes a newer one on to its other neighbours.
   */
  record PredicateAd(int sender, int origin, long epoch, long seq, EncodedPredicate predicate)
      implements Advertisement {
    public PredicateAd {
      Objects.requireNonNull(predicate, "predicate");
    }
  }

  /** A version of a router's encoded predicate, whole ({@link PredicateAd}) or as a change. */
  sealed interface Advertisement extends ControlMessage permits PredicateAd, PredicateDelta {
    int sender();

    int origin();

    long epoch();

    long seq();
  }

  /**
   * Version (epoch, seq) of router {@code origin}'s encoded predicate, as the change from version
   * (epoch, baseSeq): the filters {@code removed} from it and those {@code added}. Sent to a
   * neighbour known to hold the base version; one that does not asks for the whole advertisement
   * ({@link PredicateRequest}).
   */
  record PredicateDelta(
      int sender,
      int origin,
      long epoch,
      long baseSeq,
      long seq,
      EncodedPredicate removed,
      EncodedPredicate added)
      implements Advertisement {
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
   *  PREDICATE_BATCH | ... | count u16 | count x (kind u8 | an AD's or a DELTA's fields) |
   * </pre>
   *
   * Stateless.
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

    /** The length field of the frame that carries {@code a} alone. */
    public static long alone(Advertisement a) {
      return FRAME_HEAD + body(a);
    }

    /** The bytes {@code a} adds to a PREDICATE_BATCH (its kind byte included). */
    public static long inBatch(Advertisement a) {
      return 1 + body(a);
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
