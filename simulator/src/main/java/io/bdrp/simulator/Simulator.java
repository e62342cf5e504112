package io.bdrp.simulator;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.routing.Clock;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Face;
import io.bdrp.routing.MessageIds;
import io.bdrp.routing.PredicateTable;
import io.bdrp.routing.Reliable;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.routing.Trace;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.RouterFrameCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * A deterministic discrete-event simulation of a B-DRP network: one {@link RoutingNode} — the same
 * state machines the router daemon runs — per router of a topology, joined by links that deliver
 * control messages and data packets in order after the link's latency, with link failures and
 * recoveries and router crashes and restarts as events. Data packets go through the router's own
 * {@link DataPlane}, one per running router over its node's current snapshots, exactly as in the
 * router daemon; every local delivery, copy and drop it reports is recorded in a {@link
 * DeliveryLog}.
 *
 * <p>Traffic is counted in the bytes the router's wire protocol would put on each link: control
 * messages by {@link RouterFrameCodec#encodedLength}, data copies by {@link DataHeader#frameLength}
 * over the message's binary encoding.
 *
 * <p>Time is simulated in microseconds; routers see it in milliseconds through their {@link Clock}.
 * Events at the same time run in the order they were scheduled, so a run depends only on its
 * inputs. A message in flight on a link that goes down, or towards a router that crashes, is lost.
 *
 * <p>Single-threaded: the thread that calls {@link #run} owns everything.
 */
public final class Simulator {
  /** Called after every event, with the simulator in a consistent state. */
  @FunctionalInterface
  public interface Observer {
    void afterEvent(Simulator sim);
  }

  /** Called for every delivery to a host, by either service, in the order they happen. */
  @FunctionalInterface
  public interface DeliveryObserver {
    void delivered(int host, int router, long messageId);
  }

  /** Told what becomes of each message published reliably. */
  public interface ReliableObserver {
    /** Every router of the message's D acknowledged it. */
    void confirmed(int ingress, long messageId, long publisher, long publisherSeq);

    /** Its retention ended before routers {@code unreached} (a bitmap) acknowledged it. */
    void failed(int ingress, long messageId, long publisher, long publisherSeq, long[] unreached);
  }

  /** Called for every control message a router sends, once it is counted. */
  @FunctionalInterface
  public interface ControlObserver {
    /**
     * Router {@code from} sent {@code message} to its neighbour {@code to}; it arrives after the
     * link's latency unless the link or {@code to} goes down first.
     */
    void sent(int from, int to, ControlMessage message);
  }

  /**
   * How to simulate.
   *
   * @param routing the routers' timers and limits
   * @param bloom the network's Bloom parameters
   * @param latencyMs latency of a link whose file gives no delay (or when file delays are off)
   * @param fileDelays use each edge's delay from the BRITE file when it is positive
   * @param carrierLoss when a link goes down (or a router crashes) its ends are told at once, as a
   *     TCP reset would; otherwise they find out by the dead interval
   * @param cost the cost of each link
   * @param reliable the reliable service's bounds and timers
   */
  public record Options(
      RoutingConfig routing,
      BloomParameters bloom,
      double latencyMs,
      boolean fileDelays,
      boolean carrierLoss,
      ToIntFunction<Edge> cost,
      Reliable.Config reliable) {
    /**
     * Defaults: default routing timers, default Bloom parameters, 1 ms links, unit costs, the
     * reliable service's defaults.
     */
    public static Options defaults() {
      return new Options(
          RoutingConfig.DEFAULT,
          BloomParameters.DEFAULT,
          1.0,
          true,
          true,
          e -> 1,
          Reliable.Config.DEFAULT);
    }

    public Options(
        RoutingConfig routing,
        BloomParameters bloom,
        double latencyMs,
        boolean fileDelays,
        boolean carrierLoss,
        ToIntFunction<Edge> cost) {
      this(routing, bloom, latencyMs, fileDelays, carrierLoss, cost, Reliable.Config.DEFAULT);
    }

    public Options withReliable(Reliable.Config c) {
      return new Options(routing, bloom, latencyMs, fileDelays, carrierLoss, cost, c);
    }

    public Options withRouting(RoutingConfig r) {
      return new Options(r, bloom, latencyMs, fileDelays, carrierLoss, cost, reliable);
    }

    public Options withBloom(BloomParameters b) {
      return new Options(routing, b, latencyMs, fileDelays, carrierLoss, cost, reliable);
    }

    public Options withCarrierLoss(boolean c) {
      return new Options(routing, bloom, latencyMs, fileDelays, c, cost, reliable);
    }

    public Options withCost(ToIntFunction<Edge> c) {
      return new Options(routing, bloom, latencyMs, fileDelays, carrierLoss, c, reliable);
    }

    public Options withLatency(double ms, boolean useFileDelays) {
      return new Options(routing, bloom, ms, useFileDelays, carrierLoss, cost, reliable);
    }
  }

  private record Event(long time, long seq, Runnable action) {}

  /**
   * A data packet on a simulated link: the DATA header fields and the message.
   *
   * @param destinations D, or null for a broadcast
   */
  private record SimPacket(
      int hopLimit,
      int sourceRouter,
      long messageId,
      long[] destinations,
      Message message,
      Reliable.Header header)
      implements DataPlane.Packet {
    @Override
    public boolean isBroadcast() {
      return destinations == null;
    }

    @Override
    public int destinations(long[] into) {
      return DataPlane.Packet.copyBitmap(destinations, into);
    }
  }

  /** Both directions of one link. */
  private static final class Link {
    final int a;
    final int b;
    final long latencyMicros;
    final int cost;
    boolean up = true;
    long gen;
    long lastArrivalAb;
    long lastArrivalBa;

    Link(int a, int b, long latencyMicros, int cost) {
      this.a = a;
      this.b = b;
      this.latencyMicros = latencyMicros;
      this.cost = cost;
    }
  }

  /**
   * The key of every simulated router's message ids: a simulation has no adversary, and repeats.
   */
  private static final long MESSAGE_ID_SEED = 0x6264_7270L;

  private final Topology topology;
  private final Options options;
  private final int n;
  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(
          (x, y) -> x.time != y.time ? Long.compare(x.time, y.time) : Long.compare(x.seq, y.seq));
  private long seq;
  private long now;
  private final Clock clock = () -> now / 1000;

  private final RoutingNode[] nodes;
  private final DataPlane<Message>[] dataPlanes;
  private final Reliable<Message>[] reliables;
  private final SimOutput[] outputs;
  private final long[] nextSequence; // of each router's next published message, across restarts
  private final long[] epochs;
  private final long[] incarnation;
  private final long[] armed;
  private final long[] seenRoutes;
  private final long[] seenPredicates;
  private long lastChange;
  private boolean firing;
  private final Map<Long, Link> links = new HashMap<>();
  private final int[][] neighbours;

  private final long[] controlBytes;
  private final long[] controlMessages;
  private final long[] adBytes;
  private final long[] adMessages;
  private final long[] adBitmapBytes;
  private final long[] adWholeBytes;
  private final long[] dataBytes;
  private final long[] dataCopies;
  private final long[] ackBytes;
  private final long[] reliableHeaderBytes;
  private long events;
  private final List<Observer> observers = new ArrayList<>();
  private final List<ControlObserver> controlObservers = new ArrayList<>();
  private final List<DeliveryObserver> deliveryObservers = new ArrayList<>();
  private final List<ReliableObserver> reliableObservers = new ArrayList<>();

  // Hosts: global host number -> router and predicate.
  private final Map<Integer, Integer> hostRouter = new HashMap<>();
  private final Map<Integer, Predicate> hostPredicate = new HashMap<>();
  private final DeliveryLog log = new DeliveryLog();

  /** A network of the topology's routers, all started at time 0 with every link up. */
  public Simulator(Topology topology, Options options) {
    this.topology = topology;
    this.options = options;
    this.n = topology.nodeCount();
    if (n > options.routing().maxRouters()) {
      throw new IllegalArgumentException(
          "topology has "
              + n
              + " routers, routing config allows "
              + options.routing().maxRouters()
              + " (maxRouters)");
    }
    nodes = new RoutingNode[n];
    sharedVersions = new PredicateTable.SharedVersions(n);
    @SuppressWarnings("unchecked")
    DataPlane<Message>[] planes = (DataPlane<Message>[]) new DataPlane<?>[n];
    dataPlanes = planes;
    @SuppressWarnings("unchecked")
    Reliable<Message>[] rel = (Reliable<Message>[]) new Reliable<?>[n];
    reliables = rel;
    outputs = new SimOutput[n];
    nextSequence = new long[n];
    epochs = new long[n];
    incarnation = new long[n];
    armed = new long[n];
    seenRoutes = new long[n];
    seenPredicates = new long[n];
    controlBytes = new long[n];
    controlMessages = new long[n];
    adBytes = new long[n];
    adMessages = new long[n];
    adBitmapBytes = new long[n];
    adWholeBytes = new long[n];
    dataBytes = new long[n];
    dataCopies = new long[n];
    ackBytes = new long[n];
    reliableHeaderBytes = new long[n];
    neighbours = new int[n][];
    for (int r = 0; r < n; r++) {
      neighbours[r] = topology.neighbours(r);
    }
    for (Edge e : topology.edges()) {
      int a = topology.routerOf(e.from());
      int b = topology.routerOf(e.to());
      if (a == b) {
        continue;
      }
      double ms =
          options.fileDelays() && e.delay() > 0 && Double.isFinite(e.delay())
              ? e.delay()
              : options.latencyMs();
      long micros = Math.max(1, Math.round(ms * 1000));
      int cost = options.cost().applyAsInt(e);
      links.putIfAbsent(key(a, b), new Link(Math.min(a, b), Math.max(a, b), micros, cost));
    }
    Arrays.fill(armed, Long.MAX_VALUE);
    for (int r = 0; r < n; r++) {
      start(r, 1);
    }
  }

  private static long key(int a, int b) {
    return ((long) Math.min(a, b) << 32) | Math.max(a, b);
  }

  // ---- accessors ----

  /** The topology simulated. */
  public Topology topology() {
    return topology;
  }

  /** The number of routers. */
  public int routerCount() {
    return n;
  }

  /** Simulated time in milliseconds. */
  public double nowMillis() {
    return now / 1000.0;
  }

  /** The routing state of router {@code r}, or null while it is crashed. */
  public RoutingNode node(int r) {
    return nodes[r];
  }

  /** Whether router {@code r} is running. */
  public boolean alive(int r) {
    return nodes[r] != null;
  }

  /** Whether the link between {@code a} and {@code b} is up. */
  public boolean isLinkUp(int a, int b) {
    Link l = links.get(key(a, b));
    return l != null && l.up;
  }

  /** The cost of the link between {@code a} and {@code b}. */
  public int linkCost(int a, int b) {
    return link(a, b).cost;
  }

  /** Control bytes router {@code r} has sent, framed as on a router link. */
  public long controlBytes(int r) {
    return controlBytes[r];
  }

  /** Control messages router {@code r} has sent. */
  public long controlMessages(int r) {
    return controlMessages[r];
  }

  /**
   * Of {@link #controlBytes}, the bytes of the PREDICATE_AD, PREDICATE_DELTA and PREDICATE_BATCH
   * frames.
   */
  public long advertisementBytes(int r) {
    return adBytes[r];
  }

  /**
   * What {@link #advertisementBytes} would have been with every filter sent as an M-bit bitmap
   * (router-link protocol 2), for comparison.
   */
  public long advertisementBitmapBytes(int r) {
    return adBitmapBytes[r];
  }

  /**
   * What {@link #advertisementBytes} would have been with every change (PREDICATE_DELTA) sent as
   * the whole version it stands for, for comparison.
   */
  public long advertisementWholeBytes(int r) {
    return adWholeBytes[r];
  }

  /** Of {@link #controlMessages}, the PREDICATE_AD, PREDICATE_DELTA and PREDICATE_BATCH frames. */
  public long advertisements(int r) {
    return adMessages[r];
  }

  /** Bytes of the DATA frames router {@code r} has sent, framed as on a router link. */
  public long dataBytes(int r) {
    return dataBytes[r];
  }

  /** DATA copies router {@code r} has sent over its links. */
  public long dataCopies(int r) {
    return dataCopies[r];
  }

  /** Events run so far. */
  public long events() {
    return events;
  }

  /** The simulated time (ms) of the last change of any router's routes or predicates. */
  public double lastChangeMillis() {
    return lastChange / 1000.0;
  }

  /** The record of published messages and their deliveries. */
  public DeliveryLog log() {
    return log;
  }

  /** Adds an observer called after every event. */
  public void observe(Observer o) {
    observers.add(o);
  }

  /** Adds an observer called for every control message sent. */
  public void observeControl(ControlObserver o) {
    controlObservers.add(o);
  }

  // ---- running ----

  /** Schedules {@code action} at simulated time {@code atMillis}. */
  public void at(double atMillis, Runnable action) {
    schedule(Math.max(now, Math.round(atMillis * 1000)), action);
  }

  /** Runs events until simulated time {@code untilMillis} (events at that time included). */
  public void run(double untilMillis) {
    long until = Math.round(untilMillis * 1000);
    while (!queue.isEmpty() && queue.peek().time <= until) {
      step();
    }
    now = Math.max(now, until);
  }

  /**
   * Runs until no router's routes or predicates have changed for {@code quietMillis}, or until
   * {@code limitMillis}. Returns the time of the last change in milliseconds, or -1 if still
   * changing at the limit.
   */
  public double runUntilStable(double quietMillis, double limitMillis) {
    long quiet = Math.round(quietMillis * 1000);
    long limit = Math.round(limitMillis * 1000);
    while (!queue.isEmpty() && queue.peek().time <= limit) {
      if (queue.peek().time - lastChange > quiet && now - lastChange >= 0) {
        now = Math.max(now, lastChange + quiet);
        return lastChange / 1000.0;
      }
      step();
    }
    return now - lastChange >= quiet ? lastChange / 1000.0 : -1;
  }

  private void step() {
    Event e = queue.poll();
    now = e.time;
    e.action.run();
    events++;
    for (Observer o : observers) {
      o.afterEvent(this);
    }
  }

  private final PredicateTable.SharedVersions sharedVersions;

  private void schedule(long time, Runnable action) {
    queue.add(new Event(time, seq++, action));
  }

  // ---- routers ----

  private void start(int r, long epoch) {
    epochs[r] = epoch;
    RoutingNode node = new RoutingNode(r, epoch, options.routing(), options.bloom(), clock);
    // The index is built when a message first needs it: the waves of advertisements of a cold start
    // are hundreds of simulated milliseconds apart, and building ahead would rebuild every router's
    // index over all the others' filters after each of them.
    node.predicates().buildIndexAhead(false);
    // Every router holds every origin's advertisement: one object per version, not one per router.
    node.predicates().shareVersions(sharedVersions);
    nodes[r] = node;
    outputs[r] = new SimOutput(r);
    dataPlanes[r] =
        new DataPlane<>(
            node,
            outputs[r],
            () -> now * 1000,
            MessageIds.seeded(MESSAGE_ID_SEED, r, nextSequence[r]));
    reliables[r] =
        new Reliable<>(dataPlanes[r], node, epoch, clock, options.reliable(), outputs[r]);
    long inc = incarnation[r];
    for (int b : neighbours[r]) {
      node.addLink(new SimFace(r, b, inc), link(r, b).cost);
      node.unicast().acceptsDigests(b, true);
    }
    for (Map.Entry<Integer, Integer> h : hostRouter.entrySet()) {
      if (h.getValue() == r) {
        node.setHost(h.getKey(), hostPredicate.get(h.getKey()));
      }
    }
    touched(r);
  }

  /** Crashes router {@code r} now: its state is lost and messages towards it are dropped. */
  public void crash(int r) {
    if (nodes[r] == null) {
      return;
    }
    nodes[r] = null;
    // Ids come from one generator per router for both services.
    nextSequence[r] += dataPlanes[r].published() + reliables[r].published();
    dataPlanes[r] = null;
    reliables[r].close();
    reliables[r] = null;
    outputs[r] = null;
    incarnation[r]++;
    armed[r] = Long.MAX_VALUE;
    lastChange = now;
    if (options.carrierLoss()) {
      for (int b : neighbours[r]) {
        if (nodes[b] != null && link(r, b).up) {
          nodes[b].linkDown(r);
          touched(b);
        }
      }
    }
  }

  /** Restarts a crashed router with a new, larger epoch; its hosts register again. */
  public void restart(int r) {
    if (nodes[r] != null) {
      throw new IllegalStateException("router " + r + " is running");
    }
    start(r, Math.max(epochs[r] + 1, now / 1000 + 1));
  }

  /** Takes the link between {@code a} and {@code b} down now. */
  public void linkDown(int a, int b) {
    Link l = link(a, b);
    if (!l.up) {
      return;
    }
    l.up = false;
    l.gen++;
    if (options.carrierLoss()) {
      for (int[] ends : new int[][] {{a, b}, {b, a}}) {
        RoutingNode x = nodes[ends[0]];
        if (x != null) {
          x.linkDown(ends[1]);
          touched(ends[0]);
        }
      }
    }
  }

  /** Brings the link between {@code a} and {@code b} up now. */
  public void linkUp(int a, int b) {
    Link l = link(a, b);
    if (l.up) {
      return;
    }
    l.up = true;
    l.gen++;
  }

  private Link link(int a, int b) {
    Link l = links.get(key(a, b));
    if (l == null) {
      throw new IllegalArgumentException("no link between routers " + a + " and " + b);
    }
    return l;
  }

  /** After anything touched router r: note changes and re-arm its timer. */
  private void touched(int r) {
    RoutingNode node = nodes[r];
    if (node == null) {
      return;
    }
    long rv = node.unicast().version();
    long pv = node.predicates().version();
    if (rv != seenRoutes[r] || pv != seenPredicates[r]) {
      seenRoutes[r] = rv;
      seenPredicates[r] = pv;
      lastChange = now;
    }
    long deadline = Math.min(node.nextDeadlineMillis(), reliables[r].nextDeadlineMillis());
    if (deadline == Long.MAX_VALUE) {
      armed[r] = Long.MAX_VALUE;
      return;
    }
    long at = Math.max(now, deadline * 1000);
    if (firing && at <= now) {
      at = now + 1000; // the tick just run left work due now: run it a millisecond later, not in a
      // loop
    }
    if (at < armed[r]) {
      armed[r] = at;
      long inc = incarnation[r];
      long when = at;
      schedule(at, () -> fire(r, inc, when));
    }
  }

  private void fire(int r, long inc, long at) {
    if (incarnation[r] != inc || armed[r] != at || nodes[r] == null) {
      return; // superseded by an earlier timer, or the router crashed
    }
    armed[r] = Long.MAX_VALUE;
    firing = true;
    try {
      nodes[r].tick();
      reliables[r].tick();
      touched(r);
    } finally {
      firing = false;
    }
  }

  /** A router's face towards a neighbour: sends over the link's simulated wire. */
  private final class SimFace implements Face {
    private final int self;
    private final int neighbour;
    private final long inc;

    SimFace(int self, int neighbour, long inc) {
      this.self = self;
      this.neighbour = neighbour;
      this.inc = inc;
    }

    @Override
    public int neighbour() {
      return neighbour;
    }

    @Override
    public void send(ControlMessage message) {
      if (incarnation[self] != inc) {
        return;
      }
      int bytes = RouterFrameCodec.encodedLength(message);
      controlBytes[self] += bytes;
      controlMessages[self]++;
      List<ControlMessage.Advertisement> ads =
          switch (message) {
            case ControlMessage.Advertisement ad -> List.of(ad);
            case ControlMessage.PredicateBatch b -> b.ads();
            default -> List.of();
          };
      if (!ads.isEmpty()) {
        adBytes[self] += bytes;
        adMessages[self]++;
        adBitmapBytes[self] += bytes;
        adWholeBytes[self] += bytes;
        for (ControlMessage.Advertisement a : ads) {
          // Counted as the whole version it stands for: compact, and as M-bit bitmaps after the
          // 5-byte header of router-link protocol 2.
          int sent = filterBytes(a);
          EncodedPredicate whole =
              a instanceof ControlMessage.PredicateAd ad
                  ? ad.predicate()
                  : nodes[self].predicates().get(a.origin());
          adWholeBytes[self] +=
              (whole == null ? 0 : EncodedPredicateCodec.encodedLength(whole)) - sent;
          adBitmapBytes[self] += 5 + (whole == null ? 0 : whole.bitmapByteSize()) - sent;
        }
      }
      for (ControlObserver o : controlObservers) {
        o.sent(self, neighbour, message);
      }
      transmit(
          self,
          neighbour,
          () -> {
            nodes[neighbour].receive(message);
            touched(neighbour);
          });
    }
  }

  /** Bytes of an advertisement after its version: its filters, or its base and two sets. */
  private static int filterBytes(ControlMessage.Advertisement a) {
    return switch (a) {
      case ControlMessage.PredicateAd ad -> EncodedPredicateCodec.encodedLength(ad.predicate());
      case ControlMessage.PredicateDelta d ->
          Long.BYTES
              + EncodedPredicateCodec.encodedLength(d.removed())
              + EncodedPredicateCodec.encodedLength(d.added());
    };
  }

  /**
   * Carries something from a to b: after the link's latency, in order with everything else sent a →
   * b, and only if the link stays up and b stays the same incarnation.
   */
  private void transmit(int a, int b, Runnable atArrival) {
    Link l = link(a, b);
    if (!l.up || nodes[b] == null) {
      return;
    }
    long gen = l.gen;
    long toInc = incarnation[b];
    long arrival = now + l.latencyMicros;
    if (a == l.a) {
      arrival = Math.max(arrival, l.lastArrivalAb);
      l.lastArrivalAb = arrival;
    } else {
      arrival = Math.max(arrival, l.lastArrivalBa);
      l.lastArrivalBa = arrival;
    }
    schedule(
        arrival,
        () -> {
          if (l.gen == gen && incarnation[b] == toInc && nodes[b] != null) {
            atArrival.run();
          }
        });
  }

  // ---- hosts and data ----

  /**
   * Attaches host {@code host} to router {@code router} with predicate {@code p} (or changes its
   * predicate); takes effect now.
   */
  public void setHost(int host, int router, Predicate p) {
    Integer old = hostRouter.put(host, router);
    hostPredicate.put(host, p);
    if (old != null && old != router && nodes[old] != null) {
      nodes[old].removeHost(host);
      touched(old);
    }
    if (nodes[router] != null) {
      nodes[router].setHost(host, p);
      touched(router);
    }
  }

  /** Detaches host {@code host}. */
  public void removeHost(int host) {
    Integer r = hostRouter.remove(host);
    hostPredicate.remove(host);
    if (r != null && nodes[r] != null) {
      nodes[r].removeHost(host);
      touched(r);
    }
  }

  /** The hosts and their predicates (unmodifiable view). */
  public Map<Integer, Predicate> hostPredicates() {
    return java.util.Collections.unmodifiableMap(hostPredicate);
  }

  /** The router of each host (unmodifiable view). */
  public Map<Integer, Integer> hostRouters() {
    return java.util.Collections.unmodifiableMap(hostRouter);
  }

  /**
   * Publishes {@code m} at router {@code router} now, through its data plane; returns the message's
   * id in the log.
   *
   * <p>The id is the one the data plane gives it: a permutation, under one fixed key for every
   * router of every simulation ({@link MessageIds#seeded}), of {@code router << 48 | sequence},
   * with the sequence running on over the router's restarts, so that ids are unique over the whole
   * run and the same from one run to the next.
   */
  public long publish(int router, Message m) {
    DataPlane<Message> plane = dataPlanes[router];
    if (plane == null) {
      throw new IllegalStateException("router " + router + " is down");
    }
    SimOutput out = outputs[router];
    out.begin(m);
    try {
      return plane.publish(m, m);
    } finally {
      out.end();
    }
  }

  /**
   * Traces {@code m} at router {@code router} now (see {@link Trace}): a trace-only copy goes
   * through the routers' data planes as the message would, over the links with their latency,
   * delivered to no host and counted nowhere; {@code steps} hears what each router did, the
   * ingress's at once and the others as the copies arrive while the simulation runs.
   */
  public void trace(int router, Message m, Consumer<Trace.Step> steps) {
    DataPlane<Message> plane = dataPlanes[router];
    if (plane == null) {
      throw new IllegalStateException("router " + router + " is down");
    }
    steps.accept(plane.trace(m, m, traceOutput(router, steps)));
  }

  /** Where router {@code self}'s trace copies go: over the link, to the neighbour's data plane. */
  private Trace.Output<Message> traceOutput(int self, Consumer<Trace.Step> steps) {
    return (neighbour, hopLimit, source, traceId, d, message) -> {
      Link l = link(self, neighbour);
      if (!l.up || nodes[neighbour] == null) {
        return false;
      }
      SimPacket p =
          new SimPacket(hopLimit, source, traceId, d == null ? null : d.clone(), message, null);
      transmit(
          self,
          neighbour,
          () -> {
            DataPlane<Message> q = dataPlanes[neighbour];
            if (q != null) {
              steps.accept(q.traceReceive(self, p, message, traceOutput(neighbour, steps)));
            }
          });
      return true;
    };
  }

  /**
   * Publishes {@code m} at router {@code router} now through its reliable service, as publisher
   * {@code publisher}'s message number {@code publisherSeq} (publisher 0: none); returns the
   * message's id in the log, or null if the router's retention is full.
   */
  public Long publishReliable(int router, Message m, long publisher, long publisherSeq) {
    Reliable<Message> rel = reliables[router];
    if (rel == null) {
      throw new IllegalStateException("router " + router + " is down");
    }
    SimOutput out = outputs[router];
    out.begin(m);
    try {
      return rel.hasRoom(MessageCodec.encodedLength(m))
          ? rel.publish(m, m, publisher, publisherSeq)
          : null;
    } finally {
      out.end();
      touched(router);
    }
  }

  private void receiveData(int r, int from, SimPacket p) {
    log.received(p.messageId(), r);
    SimOutput out = outputs[r];
    out.begin(p.message());
    try {
      if (p.header() != null) {
        reliables[r].receive(from, p, p.header(), p.message());
        touched(r);
        return;
      }
      DataPlane<Message> plane = dataPlanes[r];
      plane.receive(from, p, p.message());
      if (plane.lastLocal()) {
        log.localAt(p.messageId(), r);
      }
    } finally {
      out.end();
    }
  }

  /** The reliable service of router {@code r}, or null while it is crashed. */
  public Reliable<Message> reliable(int r) {
    return reliables[r];
  }

  /** Bytes of the acknowledgements router {@code r} has sent or passed on. */
  public long ackBytes(int r) {
    return ackBytes[r];
  }

  /** Bytes of the reliable headers in the DATA copies router {@code r} has sent. */
  public long reliableHeaderBytes(int r) {
    return reliableHeaderBytes[r];
  }

  /** Adds an observer of every delivery to a host. */
  public void observeDeliveries(DeliveryObserver o) {
    deliveryObservers.add(o);
  }

  /** Adds an observer of what becomes of reliable messages. */
  public void observeReliable(ReliableObserver o) {
    reliableObservers.add(o);
  }

  /**
   * An acknowledgement frame as a router would send it: length (4), version and type (2), source
   * (2), epoch (8), router (2), through (8).
   */
  static final int ACK_FRAME_BYTES = io.bdrp.transport.ReliableFrames.ACK_BYTES;

  /**
   * Router {@code self}'s links and hosts as its data plane sees them: copies go over the simulated
   * links, deliveries and drops into the log. Called only from inside {@link #publish} and {@link
   * #receiveData}, which say which message is under way.
   */
  private final class SimOutput implements DataPlane.Output<Message>, Reliable.Output<Message> {
    private final int self;
    private Message current;
    private int messageBytes;

    SimOutput(int self) {
      this.self = self;
    }

    /** A data plane call for {@code m} starts. */
    void begin(Message m) {
      current = m;
      messageBytes = MessageCodec.encodedLength(m);
    }

    void end() {
      current = null;
    }

    @Override
    public boolean send(
        int neighbour, int hopLimit, int source, long messageId, long[] d, Message message) {
      return carry(
          neighbour,
          new SimPacket(hopLimit, source, messageId, d == null ? null : d.clone(), message, null),
          DataHeader.frameLength(DataHeader.layoutOf(d), messageBytes));
    }

    /** Puts DATA copy {@code p} of {@code bytes} on the link to {@code neighbour}, if it is up. */
    private boolean carry(int neighbour, SimPacket p, int bytes) {
      Link l = link(self, neighbour);
      if (!l.up || nodes[neighbour] == null) {
        return false;
      }
      dataBytes[self] += bytes;
      dataCopies[self]++;
      log.copy(p.messageId());
      transmit(self, neighbour, () -> receiveData(neighbour, self, p));
      return true;
    }

    @Override
    public boolean deliver(int host, long messageId, Message message) {
      log.delivered(messageId, host, self);
      for (DeliveryObserver o : deliveryObservers) {
        o.delivered(host, self, messageId);
      }
      return true;
    }

    @Override
    public boolean send(
        int neighbour,
        int hopLimit,
        int source,
        long messageId,
        long[] d,
        Reliable.Header h,
        Message message) {
      long[] part = d.clone();
      int header = h.encodedLength(part);
      boolean sent =
          carry(
              neighbour,
              new SimPacket(hopLimit, source, messageId, part, message, h),
              DataHeader.frameLength(DataHeader.layoutOf(part), MessageCodec.encodedLength(message))
                  + header);
      if (sent) {
        reliableHeaderBytes[self] += header;
      }
      return sent;
    }

    @Override
    public boolean sendAck(int neighbour, Reliable.Ack ack) {
      Link l = link(self, neighbour);
      if (!l.up || nodes[neighbour] == null) {
        return false;
      }
      ackBytes[self] += ACK_FRAME_BYTES;
      transmit(
          self,
          neighbour,
          () -> {
            reliables[neighbour].receiveAck(self, ack);
            touched(neighbour);
          });
      return true;
    }

    @Override
    public Message keep(Message message) {
      return message;
    }

    @Override
    public void release(Message message) {}

    @Override
    public int size(Message message) {
      return MessageCodec.encodedLength(message);
    }

    @Override
    public void published(long messageId, long[] d, int destinations) {
      log.published(messageId, self, current, d, destinations, false);
      log.localAt(messageId, self);
    }

    @Override
    public void confirmed(long messageId, long publisher, long publisherSeq) {
      for (ReliableObserver o : reliableObservers) {
        o.confirmed(self, messageId, publisher, publisherSeq);
      }
    }

    @Override
    public void failed(long messageId, long publisher, long publisherSeq, long[] unreached) {
      for (ReliableObserver o : reliableObservers) {
        o.failed(self, messageId, publisher, publisherSeq, unreached);
      }
    }

    @Override
    public Message decode(Message message) {
      return message;
    }

    @Override
    public void published(
        long messageId, long[] d, int destinations, boolean broadcast, long matchNanos) {
      log.published(messageId, self, current, d, destinations, broadcast);
      log.localAt(messageId, self);
    }

    @Override
    public void dropped(long messageId, DataPlane.Drop reason, int count) {
      log.dropped(messageId, reason, count);
    }
  }

  // ---- reference ----

  /**
   * Shortest-path distances from {@code from} over running routers and up links (Dijkstra), with -1
   * for routers it cannot reach.
   */
  public long[] shortestDistances(int from) {
    long[] dist = new long[n];
    Arrays.fill(dist, Long.MAX_VALUE);
    if (nodes[from] == null) {
      Arrays.fill(dist, -1);
      return dist;
    }
    dist[from] = 0;
    PriorityQueue<long[]> pq = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
    pq.add(new long[] {0, from});
    while (!pq.isEmpty()) {
      long[] top = pq.poll();
      int u = (int) top[1];
      if (top[0] > dist[u]) {
        continue;
      }
      for (int v : neighbours[u]) {
        Link l = link(u, v);
        if (!l.up || nodes[v] == null) {
          continue;
        }
        long nd = dist[u] + l.cost;
        if (nd < dist[v]) {
          dist[v] = nd;
          pq.add(new long[] {nd, v});
        }
      }
    }
    for (int i = 0; i < n; i++) {
      if (dist[i] == Long.MAX_VALUE) {
        dist[i] = -1;
      }
    }
    return dist;
  }

  /**
   * The first router on a forwarding loop towards {@code destination} in the routers' current next
   * hops, or -1 if following next hops from every router ends (at the destination or at a router
   * without a route).
   */
  public int loopTowards(int destination) {
    byte[] state = new byte[n]; // 0 unvisited, 1 on the current walk, 2 done
    for (int start = 0; start < n; start++) {
      int u = start;
      while (u >= 0 && state[u] == 0) {
        state[u] = 1;
        RoutingNode node = nodes[u];
        u = node == null || u == destination ? -1 : node.unicast().nextHop(destination);
      }
      if (u >= 0 && state[u] == 1) {
        return u;
      }
      for (int v = start; v >= 0 && state[v] == 1; ) {
        state[v] = 2;
        RoutingNode node = nodes[v];
        v = node == null || v == destination ? -1 : node.unicast().nextHop(destination);
      }
    }
    return -1;
  }
}
