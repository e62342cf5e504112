package io.bdrp.routing;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.Encoder;
import java.util.Arrays;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;

/**
 * The data plane of one router, independent of any link transport: a message published by a local
 * host is matched once here (exactly against LOCAL-PREDICATES for local delivery, and against every
 * other router's encoded predicate for its destination set D), D is split by next hop, and one copy
 * per hop goes out through {@link Output}; a DATA packet from a neighbour is only split, and
 * delivered to local hosts by exact matching when this router is in its D (or it is a broadcast).
 *
 * <p>The forwarding path reads in three files: this one (ingress match, transit, local delivery,
 * drop counters), {@link ForwardingTable} (the partition of D by next hop, the broadcast tree) and
 * {@link Partition} (the outcome of one decision).
 *
 * <p>It never sees a socket, a buffer or a thread. A message travels through it as an opaque handle
 * {@code M} that only the {@link Output} understands: the router's TCP and UDP links pass the
 * message's encoded bytes, the simulator and the in-memory tests the message itself. Output writes
 * the DATA header fields it is handed straight into its link's framing.
 *
 * <p><b>Faults are counters.</b> Nothing on the data path throws: a copy the output refuses (link
 * down, above its high water mark), a router of D without a route or beyond {@code maxRouters}, an
 * exhausted hop limit, a broadcast off its tree, a message that does not decode for local delivery,
 * a packet whose source is this router or a router it has no route to, each is counted by {@link
 * Drop} and the other copies and deliveries go ahead.
 *
 * <h2>Checks on DATA from neighbours</h2>
 *
 * A neighbour can put any source router and message id in the header it sends; without signatures
 * on DATA (there are none: transit routers never read the message) the checks below are those that
 * every copy a correct router sends passes, converged or not (with the one exception named in the
 * second), and each refusal is counted by its {@link Drop}:
 *
 * <ul>
 *   <li><b>The source is this router</b> ({@link Drop#OWN_SOURCE}): a message enters the network at
 *       its source, which delivers it to its own hosts at once and puts itself neither in D nor
 *       among the receivers of its broadcast; a correct router never sends a copy back to it. (A
 *       copy of D could pass back through its source only along a loop of next hops, which the
 *       distance vector never forms.) Without this check a forged broadcast naming the receiver as
 *       its source skipped the tree check below and went down the receiver's whole tree.
 *   <li><b>No route to the source</b> ({@link Drop#UNKNOWN_SOURCE}, also for a number not below
 *       {@code maxRouters}): a router's copies reach here only along routes, and routes are two-way
 *       (an adjacency is up only once each side hears the other), so a router that has no route to
 *       the source either never heard of it or lost it: the copy is then as undeliverable in spirit
 *       as one towards a router without a route, and it is refused rather than passed on unchecked.
 *       (The windows where a correct copy may meet this are the short time a router has a route one
 *       way and not yet the other: a restarted router's hold-down, or a route being re-established
 *       by a sequence-number request; and a broadcast that a neighbour sends as soon as it offers a
 *       route, before this router selected it (see "Broadcast trees while routes change" in {@link
 *       DistanceVector}); it is counted.)
 *   <li><b>A broadcast off its source's tree</b> ({@link Drop#NOT_ON_TREE}): a broadcast is taken
 *       only from the next hop towards its source (and, for a short grace after that next hop
 *       changed, from the former ones, which send until they learn of the change: see "Broadcast
 *       trees while routes change" in {@link DistanceVector}). A neighbour that offered a route
 *       this router did not take sends it broadcasts for a grace too; they are refused here. This
 *       check exists for loop freedom and also limits a neighbour to forging broadcasts of the
 *       sources whose tree reaches this router through it, which that neighbour can disrupt anyway
 *       by dropping their copies.
 * </ul>
 *
 * <p><b>No plausibility check on the neighbour a copy of D comes from.</b> A check of the form "a
 * copy from source S cannot come from neighbour N" would need to know the paths from S to this
 * router, and a copy of D follows the next hops <em>towards the routers of D</em>, not the reverse
 * of this router's route to S: with asymmetric link costs, with equal-cost ties (broken by router
 * number, which may pick different branches in the two directions) and while routes change, the
 * path from S here need not pass through this router's next hop towards S, nor through any
 * neighbour that this router could rule out. The only evidence of which neighbours send here is
 * their poisoned-reverse flags (a neighbour whose route to d goes through this router), but those
 * arrive paced, after the neighbour already forwards along its new route: checking copies against
 * them would drop correct copies during every change of routes. So the sound checks for DATA are
 * the three above; a neighbour that forges the source of a copy of D for a router that it may reach
 * is not detected here (the link's authentication is what keeps strangers out).
 *
 * <p><b>Threads.</b> Owned by one thread, the one that owns the {@link RoutingNode} it reads (the
 * router's event loop, or the simulator): routes and predicates come from the node's immutable
 * snapshots, and every call reuses this object's scratch space, so the hot path allocates nothing.
 *
 * @param <M> the message handle of the output: valid for the duration of one call; an output that
 *     keeps it longer (queues it on a link) takes its own reference
 */
public final class DataPlane<M> {
  /**
   * Where the data plane sends: copies of DATA packets to neighbouring routers and deliveries to
   * local hosts. Implemented by each link transport. Calls must not block and must not call back
   * into the data plane.
   *
   * @param <M> the message handle
   */
  public interface Output<M> {
    /**
     * Sends one DATA copy to neighbour {@code neighbour}.
     *
     * @param hopLimit the hop limit the copy carries (1..255)
     * @param source the router where the message entered the network
     * @param messageId the message id, unique per source router
     * @param d the copy's destination set, {@code words} words (bit j of word i is router 64i+j),
     *     or null for a broadcast; reused after the call returns
     * @param message the message
     * @return false if the copy was not queued (no session, link down, above its high water mark);
     *     the data plane counts it as {@link Drop#LINK}
     */
    boolean send(int neighbour, int hopLimit, int source, long messageId, long[] d, M message);

    /**
     * Delivers {@code message} to local host {@code host}, whose predicate it satisfies.
     *
     * @return false if it was not queued (the host's session is gone or above its high water mark);
     *     counted as {@link Drop#HOST}
     */
    boolean deliver(int host, long messageId, M message);

    /**
     * The message, decoded for exact matching at a router of D, or null if it does not decode
     * (counted as {@link Drop#BAD_MESSAGE}; its copies to other routers still go out).
     */
    Message decode(M message);

    /**
     * The message's attributes for exact matching at a router of D, valid until the next call, or
     * null if it does not decode (as {@link #decode}). By default {@link #decode}; an output that
     * can read them in place, without building a {@link Message}, does so here.
     */
    default Attributes attributes(M message) {
      return decode(message);
    }

    /**
     * Called once per published message, after the match and before any copy or delivery.
     *
     * @param messageId the id this router gave it
     * @param d D, this router excluded ({@link DataPlane#words()} words); reused after the call
     * @param destinations |D|
     * @param broadcast whether it goes out as a broadcast
     * @param matchNanos time spent matching: the exact match against the local hosts, the match
     *     against every router's encoded predicate and the partition of D; measured for one
     *     published message in {@link DataPlane#MATCH_TIMED_EVERY}, -1 for the others
     */
    default void published(
        long messageId, long[] d, int destinations, boolean broadcast, long matchNanos) {}

    /** Called for each drop with its reason and count ({@link DataPlane#drops} totals them). */
    default void dropped(long messageId, Drop reason, int count) {}

    /**
     * Called when this router took the broadcast {@code (source, messageId)} from a neighbour into
     * its duplicate window, unless the kernel fast path took it first (a local-only copy): for a
     * fast path whose own window should know it too.
     */
    default void broadcastTaken(int source, long messageId) {}
  }

  /**
   * The view of a DATA packet's fixed header that forwarding reads; implemented by the wire
   * protocol's header flyweight, so that the header is read in place.
   */
  public interface Packet {
    /** Further hops the packet may take. */
    int hopLimit();

    /** Whether it is a broadcast along the tree of shortest paths from its source. */
    boolean isBroadcast();

    /**
     * Whether it is a broadcast whose copies were sent already (by the kernel fast path, which took
     * it from the source's tree parent and passes this one copy up): it is delivered locally,
     * unless a duplicate, and forwarded nowhere. See "Broadcasts in the kernel" in docs/router.md.
     */
    default boolean isLocalOnly() {
      return false;
    }

    /** The router where the message entered the network. */
    int sourceRouter();

    /** The message id, unique per source router. */
    long messageId();

    /**
     * Writes D as a bitmap into {@code into} (bit j of word i: router 64i + j), every word of it,
     * zero where D names no router; returns how many routers D names past its end. Not called for a
     * broadcast.
     */
    int destinations(long[] into);

    /**
     * {@link #destinations} for a packet that holds D as the bitmap {@code d}: its words copied
     * into {@code into}, the routers of those beyond counted.
     */
    static int copyBitmap(long[] d, long[] into) {
      int common = Math.min(d.length, into.length);
      System.arraycopy(d, 0, into, 0, common);
      Arrays.fill(into, common, into.length, 0L);
      int beyond = 0;
      for (int i = common; i < d.length; i++) {
        beyond += Long.bitCount(d[i]);
      }
      return beyond;
    }
  }

  /** Why a copy, a delivery or a router of D went nowhere. */
  public enum Drop {
    /** A packet whose hop limit ran out while it still had routers to reach (one per packet). */
    HOP_LIMIT,
    /**
     * A broadcast that arrived from a neighbour other than the next hop towards its source (or a
     * former one within its grace): the tree does not carry it here, seen only while routes change,
     * as when a neighbour that offered a route this router did not take sends for a grace (one per
     * packet).
     */
    NOT_ON_TREE,
    /** A router of D that this router has no route to (one per router). */
    NO_ROUTE,
    /** A router of D whose number is not below this network's {@code maxRouters} (per router). */
    UNKNOWN_ROUTER,
    /** A copy that the output did not queue: link down, or above its high water mark. */
    LINK,
    /** A delivery that the output did not queue: host gone, or above its high water mark. */
    HOST,
    /** A message that does not decode, at a router of its D (one per packet). */
    BAD_MESSAGE,
    /**
     * A broadcast this router has already taken, arriving again by another branch of its source's
     * tree while routes change (one per packet).
     */
    DUPLICATE,
    /**
     * A packet from a neighbour that names this router as its source (one per packet): no copy of a
     * message ever goes back to the router it entered the network at (see "Checks on DATA from
     * neighbours").
     */
    OWN_SOURCE,
    /**
     * A packet whose source router this router has no route to, or whose number is not below {@code
     * maxRouters} (one per packet).
     */
    UNKNOWN_SOURCE
  }

  private static final Drop[] DROPS = Drop.values();

  /**
   * One published message in this many (a power of two) has its match timed ({@link
   * Output#published}), the first among them: two clock reads cost as much as a tenth of a small
   * match, and a sample of that size gives the distribution of match times as well.
   */
  public static final int MATCH_TIMED_EVERY = 16;

  private final int self;
  private final RoutingNode node;
  private final Output<M> out;
  private final LongSupplier nanoClock;
  private final int hopLimit;
  private final double broadcastFraction;
  private final int words;
  private final long lastWordMask; // the routers of D's last word that are below maxRouters
  private final Encoder encoder;
  private final long[] messageFilter;
  private final long[] destinations;
  private boolean destinationsClear = true;
  private final long[] transitD;
  private final Partition partition;
  private final BroadcastWindow broadcasts;
  private int[] hosts = new int[16];
  private int hostCount;
  private final IntConsumer collectHost = this::collectHost;
  private final MessageIds ids;

  private final long[] drops = new long[DROPS.length];
  private long published;
  private long received;
  private long copies;

  private long delivered;
  private long localMatches;
  private long destinationSum;

  /**
   * A data plane over {@code node}'s tables, sending through {@code out}, whose message ids come
   * from a key drawn now from {@link java.security.SecureRandom} ({@link MessageIds#secure}).
   *
   * @param nanoClock a monotonic clock in nanoseconds, for {@link Output#published}'s match time
   */
  public DataPlane(RoutingNode node, Output<M> out, LongSupplier nanoClock) {
    this(node, out, nanoClock, MessageIds.secure(node.self(), 0));
  }

  /**
   * A data plane whose published messages take their ids from {@code ids} (see {@link MessageIds});
   * its duplicate window is keyed from the same key. A router uses {@link MessageIds#secure}; a
   * simulator, which must repeat, {@link MessageIds#seeded} with the counter carried on over a
   * router's restarts.
   */
  public DataPlane(RoutingNode node, Output<M> out, LongSupplier nanoClock, MessageIds ids) {
    this.ids = java.util.Objects.requireNonNull(ids, "ids");
    this.node = node;
    this.self = node.self();
    this.out = out;
    this.nanoClock = nanoClock;
    RoutingConfig config = node.config();
    this.hopLimit = config.hopLimit();
    this.broadcastFraction = config.broadcastFraction();
    this.words = (config.maxRouters() + 63) >>> 6;
    this.lastWordMask = (config.maxRouters() & 63) == 0 ? -1L : (1L << config.maxRouters()) - 1;
    this.encoder = new Encoder(node.local().parameters());
    this.messageFilter = node.local().parameters().newFilter();
    this.destinations = new long[words];
    this.transitD = new long[words];
    this.partition = new Partition(words, 8);
    this.broadcasts = new BroadcastWindow(config.maxRouters(), ids.derive(1), ids.derive(2));
  }

  /** A new message id of this router (for {@link Reliable}, which shares the generator). */
  long newMessageId() {
    return ids.next();
  }

  /** Words of every destination set here: {@code ceil(maxRouters / 64)}. */
  public int words() {
    return words;
  }

  /**
   * A local host published {@code m}: delivers it to the local hosts it matches and sends one copy
   * per next hop towards D.
   *
   * @param payload the message's handle for the output (its encoded bytes, for a router)
   * @return the message id given to it
   */
  public long publish(Attributes m, M payload) {
    published++;
    long id = ids.next();
    boolean timed = (published & (MATCH_TIMED_EVERY - 1)) == 1;
    long t0 = timed ? nanoClock.getAsLong() : 0;
    hostCount = 0;
    node.local().match(m, collectHost);
    int inD = ingress(node.snapshot(), m);
    long matchNanos = timed ? nanoClock.getAsLong() - t0 : -1;
    destinationSum += inD;
    out.published(id, destinations, inD, partition.broadcast(), matchNanos);
    sendCopies(self, id, hopLimit, payload);
    deliverCollected(id, payload);
    countDrops(id);
    return id;
  }

  /**
   * D for {@code m} from {@code s}, into {@link #destinations}, and its partition: by next hop, or
   * the broadcast tree when the routers of D that have a route hold more than the broadcast
   * fraction of the reachable routers (routers of D without a route count for neither).
   */
  private int ingress(RouteSnapshot s, Attributes m) {
    ForwardingTable t = s.routes();
    if (s.predicates().routerCount() == 0) {
      // No other router has a predicate here: D is empty whatever the message; skip encoding it.
      if (!destinationsClear) {
        Arrays.fill(destinations, 0L);
        destinationsClear = true;
      }
      partition.reset(false, false);
      return 0;
    }
    destinationsClear = false;
    int n = destinationsOf(s, m, destinations);
    // The threshold counts only the routers of D that can be reached: a router whose predicate is
    // still held after its route was lost would otherwise push messages into broadcasts.
    int reachable = n == 0 ? 0 : t.reachableIn(destinations);
    if (reachable > 0
        && broadcastFraction < 1
        && reachable > broadcastFraction * t.reachableCount()) {
      t.broadcast(self, -1, Integer.MAX_VALUE, partition);
    } else {
      t.partition(destinations, Integer.MAX_VALUE, partition);
    }
    partition.clearLocal(); // local delivery at the ingress router is by exact match, done already
    return n;
  }

  /**
   * D for {@code m} from {@code s}'s PREDICATES, this router excluded, into {@code into} ({@link
   * #words} words); returns |D|. Shared with {@link Reliable}, on the same thread.
   */
  int destinationsOf(RouteSnapshot s, Attributes m, long[] into) {
    Arrays.fill(into, 0L);
    if (s.predicates().routerCount() == 0) {
      return 0; // no other router has a predicate here: D is empty whatever the message
    }
    encoder.encodeInto(m, messageFilter);
    s.predicates().match(messageFilter, into);
    into[self >>> 6] &= ~(1L << self);
    int n = 0;
    for (long w : into) {
      n += Long.bitCount(w);
    }
    return n;
  }

  /**
   * The D of packet {@code p} into {@code into} ({@link #words} words), without the routers this
   * network does not have (at or above {@code maxRouters}); returns how many of those it named.
   * Shared with {@link Reliable}.
   */
  int destinationsOf(Packet p, long[] into) {
    int unknown = p.destinations(into);
    unknown += Long.bitCount(into[words - 1] & ~lastWordMask);
    into[words - 1] &= lastWordMask;
    return unknown;
  }

  /**
   * A DATA packet arrived from neighbour {@code from}: copies go on towards the rest of its D (or
   * down the broadcast tree) with one hop less, then, if this router is in D, the message is
   * delivered to the local hosts it matches exactly.
   *
   * @param payload the message's handle for the output
   */
  public void receive(int from, Packet p, M payload) {
    received++;
    long id = p.messageId();
    int limit = p.hopLimit();
    int source = p.sourceRouter();
    ForwardingTable routes = node.routes();
    if (source == self || routes.nextHop(source) < 0) {
      // See "Checks on DATA from neighbours": never from this router, never from a stranger.
      partition.reset(false, p.isBroadcast());
      drop(id, source == self ? Drop.OWN_SOURCE : Drop.UNKNOWN_SOURCE, 1);
      return;
    }
    if (p.isBroadcast()) {
      if (p.isLocalOnly()) {
        // The kernel sent its copies and checked the tree; its window and this one both see it.
        partition.reset(true, true);
      } else {
        routes.broadcast(source, from, limit, partition);
      }
      if (partition.local()) {
        if (!broadcasts.first(source, id)) {
          drop(id, Drop.DUPLICATE, 1);
          return;
        }
        if (!p.isLocalOnly()) {
          out.broadcastTaken(source, id);
        }
      }
    } else {
      int unknown = destinationsOf(p, transitD);
      if (unknown > 0) {
        drop(id, Drop.UNKNOWN_ROUTER, unknown);
      }
      routes.partition(transitD, limit, partition);
    }
    sendCopies(source, id, limit - 1, payload);
    if (partition.local()) {
      Attributes m = out.attributes(payload);
      if (m == null) {
        drop(id, Drop.BAD_MESSAGE, 1);
      } else {
        hostCount = 0;
        node.local().match(m, collectHost);
        deliverCollected(id, payload);
      }
    }
    countDrops(id);
  }

  /**
   * Traces {@code m} as if a local host published it (see {@link Trace}): matches it once, as
   * {@link #publish} does, and sends one trace copy per next hop (or tree child) through {@code
   * to}; nothing is delivered and nothing is counted.
   *
   * @param payload the message's handle for {@code to}
   * @return what was done; its trace id is a new message id of this router
   */
  public Trace.Step trace(Message m, M payload, Trace.Output<M> to) {
    long id = ids.next();
    Trace.Builder b = new Trace.Builder(id, self, -1, hopLimit, false);
    hostCount = 0;
    node.local().match(m, collectHost);
    b.hosts(hosts, hostCount);
    hostCount = 0;
    RouteSnapshot s = node.snapshot();
    ingress(s, m);
    b.broadcast = partition.broadcast();
    b.destinations = destinations.clone();
    b.local = true;
    traceCopies(b, self, id, hopLimit, payload, to);
    traceDrops(b, s.routes(), partition.broadcast() ? null : destinations);
    return b.build();
  }

  /**
   * A trace copy arrived from neighbour {@code from}: handled as {@link #receive} handles DATA (the
   * same checks, split and exact match), but its copies go through {@code to}, nothing is delivered
   * and nothing is counted.
   */
  public Trace.Step traceReceive(int from, Packet p, M payload, Trace.Output<M> to) {
    long id = p.messageId();
    int limit = p.hopLimit();
    int source = p.sourceRouter();
    ForwardingTable routes = node.routes();
    Trace.Builder b = new Trace.Builder(id, source, from, limit, p.isBroadcast());
    if (source == self || routes.nextHop(source) < 0) {
      b.drop(source == self ? Drop.OWN_SOURCE : Drop.UNKNOWN_SOURCE, 1, source);
      return b.build();
    }
    long[] d = null;
    if (p.isBroadcast()) {
      routes.broadcast(source, from, limit, partition);
      // Trace ids are message ids of their source, so they share its window without a clash.
      if (partition.local() && !broadcasts.first(source, id)) {
        b.drop(Drop.DUPLICATE, 1);
        return b.build();
      }
    } else {
      int unknown = destinationsOf(p, transitD);
      if (unknown > 0) {
        b.drop(Drop.UNKNOWN_ROUTER, unknown);
      }
      routes.partition(transitD, limit, partition);
      d = transitD;
    }
    traceCopies(b, source, id, limit - 1, payload, to);
    if (partition.local()) {
      b.local = true;
      Attributes m = out.attributes(payload);
      if (m == null) {
        b.drop(Drop.BAD_MESSAGE, 1);
      } else {
        hostCount = 0;
        node.local().match(m, collectHost);
        b.hosts(hosts, hostCount);
        hostCount = 0;
      }
    }
    traceDrops(b, routes, d);
    return b.build();
  }

  private void traceCopies(
      Trace.Builder b, int source, long id, int copyHopLimit, M payload, Trace.Output<M> to) {
    boolean broadcast = partition.broadcast();
    for (int i = 0; i < partition.count(); i++) {
      int hop = partition.hop(i);
      long[] set = broadcast ? null : partition.set(i);
      boolean sent = to.send(hop, copyHopLimit, source, id, set, payload);
      b.copies.add(new Trace.Copy(hop, set == null ? null : set.clone(), sent));
      if (!sent) {
        b.drop(Drop.LINK, 1, hop);
      }
    }
  }

  /** The drops of the last partition, as {@link #countDrops} counts them, into {@code b}. */
  private void traceDrops(Trace.Builder b, ForwardingTable routes, long[] d) {
    switch (partition.drop()) {
      case HOP_LIMIT -> b.drop(Drop.HOP_LIMIT, 1);
      case NOT_ON_TREE -> b.drop(Drop.NOT_ON_TREE, 1);
      case NONE -> {}
    }
    if (partition.unreachable() > 0) {
      int[] unreachable = new int[0];
      if (d != null) {
        unreachable =
            java.util.stream.IntStream.range(0, d.length * 64)
                .filter(r -> r != self && (d[r >>> 6] & (1L << r)) != 0 && routes.nextHop(r) < 0)
                .toArray();
      }
      b.drop(Drop.NO_ROUTE, partition.unreachable(), unreachable);
    }
  }

  /** Whether the last {@link #receive} delivered locally (this router in D, or a broadcast). */
  public boolean lastLocal() {
    return partition.local();
  }

  private void sendCopies(int source, long id, int copyHopLimit, M payload) {
    boolean broadcast = partition.broadcast();
    for (int i = 0; i < partition.count(); i++) {
      if (out.send(
          partition.hop(i),
          copyHopLimit,
          source,
          id,
          broadcast ? null : partition.set(i),
          payload)) {
        copies++;
      } else {
        drop(id, Drop.LINK, 1);
      }
    }
  }

  private void collectHost(int host) {
    if (hostCount == hosts.length) {
      hosts = Arrays.copyOf(hosts, hosts.length * 2); // only when more hosts match than ever before
    }
    hosts[hostCount++] = host;
  }

  private void deliverCollected(long id, M payload) {
    if (hostCount == 0) {
      return;
    }
    localMatches++;
    for (int i = 0; i < hostCount; i++) {
      if (out.deliver(hosts[i], id, payload)) {
        delivered++;
      } else {
        drop(id, Drop.HOST, 1);
      }
    }
    hostCount = 0;
  }

  private void countDrops(long id) {
    switch (partition.drop()) {
      case HOP_LIMIT -> drop(id, Drop.HOP_LIMIT, 1);
      case NOT_ON_TREE -> drop(id, Drop.NOT_ON_TREE, 1);
      case NONE -> {}
    }
    if (partition.unreachable() > 0) {
      drop(id, Drop.NO_ROUTE, partition.unreachable());
    }
  }

  private void drop(long id, Drop why, int n) {
    drops[why.ordinal()] += n;
    out.dropped(id, why, n);
  }

  // ---- counters (read on the owning thread) ----

  /** Drops so far for {@code why}, in the unit its {@link Drop} constant names. */
  public long drops(Drop why) {
    return drops[why.ordinal()];
  }

  /** Messages published by local hosts. */
  public long published() {
    return published;
  }

  /** DATA packets received from neighbours. */
  public long received() {
    return received;
  }

  /** DATA copies the output queued. */
  public long copies() {
    return copies;
  }

  /** Deliveries the output queued to local hosts. */
  public long delivered() {
    return delivered;
  }

  /** Messages, published here or received, that matched at least one local host. */
  public long localMatches() {
    return localMatches;
  }

  /** The sum of |D| over the messages published here. */
  public long destinationSum() {
    return destinationSum;
  }
}
