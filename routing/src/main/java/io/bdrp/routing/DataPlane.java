package io.bdrp.routing;

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
 * each is counted by {@link Drop} and the other copies and deliveries go ahead.
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
     * Called once per published message, after the match and before any copy or delivery.
     *
     * @param messageId the id this router gave it
     * @param d D, this router excluded ({@link DataPlane#words()} words); reused after the call
     * @param destinations |D|
     * @param broadcast whether it goes out as a broadcast
     * @param matchNanos time spent matching: the exact match against the local hosts, the match
     *     against every router's encoded predicate and the partition of D
     */
    default void published(
        long messageId, long[] d, int destinations, boolean broadcast, long matchNanos) {}

    /** Called for each drop with its reason and count ({@link DataPlane#drops} totals them). */
    default void dropped(long messageId, Drop reason, int count) {}
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

    /** The router where the message entered the network. */
    int sourceRouter();

    /** The message id, unique per source router. */
    long messageId();

    /** Words of D (0 for a broadcast). */
    int destinationWords();

    /** Word {@code i} of D: routers 64i..64i+63. */
    long destinationWord(int i);
  }

  /** Why a copy, a delivery or a router of D went nowhere. */
  public enum Drop {
    /** A packet whose hop limit ran out while it still had routers to reach (one per packet). */
    HOP_LIMIT,
    /**
     * A broadcast that arrived from a neighbour other than the next hop towards its source: the
     * tree does not carry it here, seen only while routes change (one per packet).
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
    DUPLICATE
  }

  private static final Drop[] DROPS = Drop.values();

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
  private long nextSequence;

  private final long[] drops = new long[DROPS.length];
  private long published;
  private long received;
  private long copies;
  private long delivered;
  private long localMatches;
  private long destinationSum;

  /**
   * A data plane over {@code node}'s tables, sending through {@code out}.
   *
   * @param nanoClock a monotonic clock in nanoseconds, for {@link Output#published}'s match time
   */
  public DataPlane(RoutingNode node, Output<M> out, LongSupplier nanoClock) {
    this(node, out, nanoClock, 0);
  }

  /**
   * A data plane whose first published message gets sequence number {@code firstSequence} (ids are
   * {@code self << 48 | sequence}): a driver that restarts a router can carry its numbering on, so
   * that ids stay unique across the router's runs.
   */
  public DataPlane(RoutingNode node, Output<M> out, LongSupplier nanoClock, long firstSequence) {
    this.nextSequence = firstSequence;
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
    this.broadcasts = new BroadcastWindow(config.maxRouters());
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
  public long publish(Message m, M payload) {
    published++;
    long id = ((long) self << 48) | (nextSequence++ & 0xFFFF_FFFF_FFFFL);
    long t0 = nanoClock.getAsLong();
    hostCount = 0;
    node.local().match(m, collectHost);
    int inD = ingress(node.snapshot(), m);
    long t1 = nanoClock.getAsLong();
    destinationSum += inD;
    out.published(id, destinations, inD, partition.broadcast(), t1 - t0);
    if (partition.broadcast()) {
      broadcasts.first(self, id); // a copy that comes back to its source is not delivered twice
    }
    sendCopies(self, id, hopLimit, payload);
    deliverCollected(id, payload);
    countDrops(id);
    return id;
  }

  /**
   * D for {@code m} from {@code s}, into {@link #destinations}, and its partition: by next hop, or
   * the broadcast tree when D holds more than the broadcast fraction of the reachable routers.
   */
  private int ingress(RouteSnapshot s, Message m) {
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
    encoder.encodeInto(m, messageFilter);
    Arrays.fill(destinations, 0L);
    s.predicates().match(messageFilter, destinations);
    destinations[self >>> 6] &= ~(1L << self);
    int n = 0;
    for (long w : destinations) {
      n += Long.bitCount(w);
    }
    if (n > 0 && broadcastFraction < 1 && n > broadcastFraction * t.reachableCount()) {
      t.broadcast(self, -1, Integer.MAX_VALUE, partition);
    } else {
      t.partition(destinations, Integer.MAX_VALUE, partition);
    }
    partition.clearLocal(); // local delivery at the ingress router is by exact match, done already
    return n;
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
    ForwardingTable routes = node.routes();
    if (p.isBroadcast()) {
      routes.broadcast(p.sourceRouter(), from, limit, partition);
      if (partition.local() && !broadcasts.first(p.sourceRouter(), id)) {
        drop(id, Drop.DUPLICATE, 1);
        return;
      }
    } else {
      int n = p.destinationWords();
      int common = Math.min(n, words);
      for (int i = 0; i < common; i++) {
        transitD[i] = p.destinationWord(i);
      }
      Arrays.fill(transitD, common, words, 0L);
      int unknown = 0;
      for (int i = common; i < n; i++) {
        unknown += Long.bitCount(p.destinationWord(i));
      }
      if (common == words) {
        unknown += Long.bitCount(transitD[words - 1] & ~lastWordMask);
        transitD[words - 1] &= lastWordMask;
      }
      if (unknown > 0) {
        drop(id, Drop.UNKNOWN_ROUTER, unknown);
      }
      routes.partition(transitD, limit, partition);
    }
    sendCopies(p.sourceRouter(), id, limit - 1, payload);
    if (partition.local()) {
      Message m = out.decode(payload);
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
