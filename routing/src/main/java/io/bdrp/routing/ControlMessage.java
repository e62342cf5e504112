package io.bdrp.routing;

import io.bdrp.encoding.bloom.EncodedPredicate;
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
}
