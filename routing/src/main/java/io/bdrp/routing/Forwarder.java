package io.bdrp.routing;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.Encoder;
import java.util.Arrays;

/**
 * The forwarding decisions of one forwarding thread, with its scratch space: at the ingress router
 * a message is matched once against PREDICATES to find its destination set D, and D is partitioned
 * by next hop (or, when D holds more than {@link RoutingConfig#broadcastFraction()} of the known
 * routers, the message is broadcast along the tree of shortest paths from this router); at a
 * transit router only the D carried by the packet is split. Local delivery is the caller's: it
 * matches the message exactly against LOCAL-PREDICATES when the decision says {@link
 * Partition#local()}, or always at the ingress router.
 *
 * <p>Owned by one thread. Allocates nothing per message once the partition has grown to the largest
 * number of next hops.
 */
public final class Forwarder {
  private final RoutingConfig config;
  private final Encoder encoder;
  private final long[] messageFilter;
  private final long[] destinations;
  private final int words;

  public Forwarder(RoutingConfig config, BloomParameters params) {
    this.config = config;
    this.encoder = new Encoder(params);
    this.messageFilter = params.newFilter();
    this.words = (config.maxRouters() + 63) >>> 6;
    this.destinations = new long[words];
  }

  /** A partition sized for this forwarder's destination sets. */
  public Partition newPartition() {
    return new Partition(words, 8);
  }

  /**
   * The ingress decision for message {@code m} published at this router. Afterwards {@link
   * #destinations()} holds D (this router excluded). {@code out.local()} is false: the caller
   * delivers to local hosts by exact matching regardless.
   *
   * @return the number of routers in D
   */
  public int ingress(RouteSnapshot s, Message m, Partition out) {
    ForwardingTable t = s.routes();
    if (s.predicates().routerCount() == 0) {
      // No other router has a predicate here: D is empty whatever the message; skip encoding it.
      if (!destinationsClear) {
        Arrays.fill(destinations, 0L);
        destinationsClear = true;
      }
      out.reset(false, false);
      return 0;
    }
    destinationsClear = false;
    encoder.encodeInto(m, messageFilter);
    Arrays.fill(destinations, 0L);
    s.predicates().match(messageFilter, destinations);
    int self = t.self();
    destinations[self >>> 6] &= ~(1L << self);
    int n = 0;
    for (long w : destinations) {
      n += Long.bitCount(w);
    }
    if (n > 0 && n > config.broadcastFraction() * t.reachableCount()) {
      t.broadcast(self, -1, Integer.MAX_VALUE, out);
    } else {
      t.partition(destinations, Integer.MAX_VALUE, out);
    }
    out.clearLocal();
    return n;
  }

  private boolean destinationsClear = true;

  /** D of the last {@link #ingress} call; reused by the next. */
  public long[] destinations() {
    return destinations;
  }

  /**
   * The transit decision for a packet that arrived with destination set {@code d} and hop limit
   * {@code hopLimit}; copies go out with {@code hopLimit - 1}.
   */
  public void transit(ForwardingTable routes, long[] d, int hopLimit, Partition out) {
    routes.partition(d, hopLimit, out);
  }

  /**
   * The decision for a broadcast packet from {@code source} that arrived from neighbour {@code
   * from} with hop limit {@code hopLimit}.
   */
  public void broadcast(ForwardingTable routes, int source, int from, int hopLimit, Partition out) {
    routes.broadcast(source, from, hopLimit, out);
  }

  /** The hop limit that the ingress router writes into a packet. */
  public int initialHopLimit() {
    return config.hopLimit();
  }
}
