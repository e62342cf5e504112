package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.DataPlane.Drop;
import io.bdrp.topologies.Topology;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;
import java.util.function.IntUnaryOperator;

/**
 * A scenario language for the data plane: routers, links and hosts with predicates, wired in
 * memory, no sockets and no threads. Each router is a {@link RoutingNode} and a {@link DataPlane}
 * over it.
 *
 * <p>The control plane runs on a simulated clock: control messages travel over {@link Face}s
 * through one event queue ordered by (time, insertion order), and each router's timers run at its
 * {@link RoutingNode#nextDeadlineMillis()}. {@link #converge()} runs it until every router's routes
 * are shortest paths, its broadcast children agree with its neighbours' next hops and it holds
 * every other router's current predicate.
 *
 * <p>The data plane runs with the clock stopped: {@link #publish} hands a message to a router's
 * data plane, whose {@link DataPlane.Output} queues each DATA copy (header, a copy of D, payload)
 * on one FIFO queue, so copies on a link arrive in the order they were sent; the queue is drained
 * before {@link #publish} returns. A data link can be broken ({@link #breakDataLink}) without the
 * control plane noticing: the output then refuses copies for it.
 *
 * <p>Single-threaded and deterministic: every call runs on the caller's thread to completion.
 */
final class DataNet {
  /** The Bloom parameters of every router. */
  static final BloomParameters BLOOM = BloomParameters.DEFAULT;

  /** The latency of every control link, in simulated milliseconds. */
  private static final long LATENCY = 1;

  /** How long {@link #converge()} may run, in simulated milliseconds. */
  private static final long CONVERGENCE_LIMIT = 120_000;

  /** The data-plane handle of a message: the message, and a router where it does not decode. */
  record Payload(Message message, int undecodableAt) {
    static Payload of(Message m) {
      return new Payload(m, -1);
    }
  }

  /** A DATA packet's header as copied off a send: D is the sender's array, cloned. */
  record Header(int hopLimit, int sourceRouter, long messageId, long[] d)
      implements DataPlane.Packet {
    Header {
      d = d == null ? null : d.clone();
    }

    /** A header whose D holds {@code routers}, in {@code words} words. */
    static Header of(int hopLimit, int source, long messageId, int words, int... routers) {
      long[] d = new long[words];
      for (int r : routers) {
        d[r >>> 6] |= 1L << r;
      }
      return new Header(hopLimit, source, messageId, d);
    }

    @Override
    public boolean isBroadcast() {
      return d == null;
    }

    @Override
    public int destinations(long[] into) {
      return DataPlane.Packet.copyBitmap(d, into);
    }

    /** The routers of D, ascending. */
    List<Integer> destinations() {
      return bits(d);
    }
  }

  /** One DATA copy, as queued by a router's output. */
  record Copy(int from, int to, Header header, Payload payload) {}

  /** What a router's output was told about a message published there. */
  record Published(int router, Message message, List<Integer> d, boolean broadcast) {}

  private record Host(int router, Predicate predicate, List<Long> delivered) {}

  private record ControlEvent(long time, long order, int to, ControlMessage message) {}

  private final RoutingConfig config;
  private final Router[] routers;
  private final TreeSet<Integer> numbers = new TreeSet<>();
  private final Map<Integer, TreeSet<Integer>> neighbours = new HashMap<>();
  private final Map<Long, Boolean> dataLinkUp = new HashMap<>();
  private final PriorityQueue<ControlEvent> control =
      new PriorityQueue<>(
          (a, b) ->
              a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.order, b.order));
  private final ArrayDeque<Copy> data = new ArrayDeque<>();
  private final List<Copy> copies = new ArrayList<>();
  private final Map<Integer, Host> hosts = new LinkedHashMap<>();
  private final Map<Long, Published> published = new LinkedHashMap<>();
  private long now;
  private long order;
  private int nextHost;

  /** One router: its routing state, its data plane and what its output saw. */
  private final class Router implements DataPlane.Output<Payload> {
    final int self;
    final RoutingNode node;
    final DataPlane<Payload> plane;
    final Map<Long, Integer> receives = new HashMap<>();
    final long[] dropHook = new long[Drop.values().length];

    /** (source, message id) of each broadcast the data plane told its output it took. */
    final List<List<Long>> taken = new ArrayList<>();

    /** The match time the data plane gave for each message published here, in order. */
    final List<Long> matchNanos = new ArrayList<>();

    long timerAt;
    boolean timerPending;

    Router(int self) {
      this.self = self;
      this.node = new RoutingNode(self, 1L + self, config, BLOOM, () -> now);
      // One seeded key for every router: ids are distinct across routers and runs repeat.
      this.plane =
          new DataPlane<>(node, this, () -> now * 1_000_000L, MessageIds.seeded(7, self, 0));
    }

    @Override
    public boolean send(
        int neighbour, int hopLimit, int source, long messageId, long[] d, Payload message) {
      if (!neighbours.get(self).contains(neighbour)) {
        throw new AssertionError("router " + self + " sent a copy to non-neighbour " + neighbour);
      }
      if (hopLimit < 1 || hopLimit > 255) {
        throw new AssertionError("router " + self + " sent a copy with hop limit " + hopLimit);
      }
      if (d != null && d.length != plane.words()) {
        throw new AssertionError("router " + self + " sent a D of " + d.length + " words");
      }
      if (!dataLinkUp.get(key(self, neighbour))) {
        return false;
      }
      Copy c = new Copy(self, neighbour, new Header(hopLimit, source, messageId, d), message);
      data.add(c);
      copies.add(c);
      return true;
    }

    @Override
    public boolean deliver(int host, long messageId, Payload message) {
      Host h = hosts.get(host);
      if (h == null || h.router != self) {
        throw new AssertionError("router " + self + " delivered to host " + host + " not its own");
      }
      h.delivered.add(messageId);
      return true;
    }

    @Override
    public Message decode(Payload message) {
      return message.undecodableAt() == self ? null : message.message();
    }

    @Override
    public void published(
        long messageId, long[] d, int destinations, boolean broadcast, long matchNanos) {
      List<Integer> set = bits(d);
      if (set.size() != destinations) {
        throw new AssertionError("|D| " + destinations + " but D holds " + set);
      }
      if (published.containsKey(messageId)) {
        throw new AssertionError("message id " + messageId + " given twice");
      }
      published.put(messageId, new Published(self, null, set, broadcast));
      this.matchNanos.add(matchNanos);
    }

    @Override
    public void broadcastTaken(int source, long messageId) {
      taken.add(List.of((long) source, messageId));
    }

    @Override
    public void dropped(long messageId, Drop reason, int count) {
      if (count <= 0) {
        throw new AssertionError("drop of " + count + " for " + reason);
      }
      dropHook[reason.ordinal()] += count;
    }
  }

  /** An empty network. */
  DataNet(RoutingConfig config) {
    this.config = config;
    this.routers = new Router[config.maxRouters()];
  }

  /** A config with short timers and destination sets of {@code maxRouters} bits. */
  static RoutingConfig.Builder testConfig(int maxRouters) {
    return RoutingConfig.builder()
        .helloIntervalMs(100)
        .deadIntervalMs(350)
        .updateIntervalMs(400)
        .routeExpiryMs(1_300)
        .sourceGcMs(3_000)
        .maxRouters(maxRouters);
  }

  /** A network of {@code t}'s routers and links; router r of t gets number {@code number(r)}. */
  static DataNet of(Topology t, RoutingConfig config, IntUnaryOperator number) {
    DataNet net = new DataNet(config);
    for (int r = 0; r < t.nodeCount(); r++) {
      net.router(number.applyAsInt(r));
    }
    for (int r = 0; r < t.nodeCount(); r++) {
      for (int n : t.neighbours(r)) {
        if (r < n) {
          net.link(number.applyAsInt(r), number.applyAsInt(n));
        }
      }
    }
    return net;
  }

  /** A line of routers 0 - 1 - ... - (n-1). */
  static DataNet line(int n, RoutingConfig config) {
    DataNet net = new DataNet(config);
    for (int r = 0; r < n; r++) {
      net.router(r);
    }
    for (int r = 1; r < n; r++) {
      net.link(r - 1, r);
    }
    return net;
  }

  // ---------------------------------------------------------------- building

  /** Adds router {@code r}. */
  DataNet router(int r) {
    if (routers[r] != null) {
      throw new IllegalArgumentException("router " + r + " exists");
    }
    routers[r] = new Router(r);
    numbers.add(r);
    neighbours.put(r, new TreeSet<>());
    reschedule(r);
    return this;
  }

  /** Links routers {@code a} and {@code b} (cost 1 each way), control and data. */
  DataNet link(int a, int b) {
    if (a == b || routers[a] == null || routers[b] == null || neighbours.get(a).contains(b)) {
      throw new IllegalArgumentException("cannot link " + a + " and " + b);
    }
    neighbours.get(a).add(b);
    neighbours.get(b).add(a);
    dataLinkUp.put(key(a, b), true);
    routers[a].node.addLink(face(a, b), 1);
    routers[b].node.addLink(face(b, a), 1);
    reschedule(a);
    reschedule(b);
    return this;
  }

  /**
   * Unconfigures the link between {@code a} and {@code b} at both ends (control and data): their
   * routes through it go at once, and the control plane spreads the change as time runs ({@link
   * #runFor}).
   */
  DataNet unlink(int a, int b) {
    if (!neighbours.get(a).remove(b) || !neighbours.get(b).remove(a)) {
      throw new IllegalArgumentException("no link " + a + " - " + b);
    }
    dataLinkUp.remove(key(a, b));
    routers[a].node.removeLink(b);
    routers[b].node.removeLink(a);
    reschedule(a);
    reschedule(b);
    return this;
  }

  /** Runs the control plane for {@code ms} simulated milliseconds, converged or not. */
  DataNet runFor(long ms) {
    runUntil(now + ms);
    return this;
  }

  /** Adds a host with predicate {@code p} at {@code router}; returns its number. */
  int host(int router, Predicate p) {
    int h = nextHost++;
    hosts.put(h, new Host(router, p, new ArrayList<>()));
    routers[router].node.setHost(h, p);
    reschedule(router);
    return h;
  }

  /** Adds a host with predicate {@code p} (in the predicate language) at {@code router}. */
  int host(int router, String p) {
    return host(router, Predicate.parse(p));
  }

  /** The routers, ascending. */
  List<Integer> routers() {
    return List.copyOf(numbers);
  }

  /** The data plane of {@code router}. */
  DataPlane<Payload> plane(int router) {
    return routers[router].plane;
  }

  /** The routing state of {@code router}. */
  RoutingNode node(int router) {
    return routers[router].node;
  }

  // ---------------------------------------------------------------- control plane

  private Face face(int from, int to) {
    return new Face() {
      @Override
      public int neighbour() {
        return to;
      }

      @Override
      public void send(ControlMessage message) {
        control.add(new ControlEvent(now + LATENCY, order++, to, message));
      }
    };
  }

  private void reschedule(int r) {
    Router x = routers[r];
    long t = Math.max(now, x.node.nextDeadlineMillis());
    if (!x.timerPending || t != x.timerAt) {
      x.timerAt = t;
      x.timerPending = true;
      control.add(new ControlEvent(t, order++, r, null));
    }
  }

  private void runUntil(long until) {
    while (!control.isEmpty() && control.peek().time <= until) {
      ControlEvent e = control.poll();
      now = e.time;
      Router x = routers[e.to];
      if (e.message == null) {
        if (!x.timerPending || e.time != x.timerAt) {
          continue;
        }
        x.timerPending = false;
        if (x.node.nextDeadlineMillis() <= now) {
          x.node.tick();
        }
      } else {
        x.node.receive(e.message);
      }
      reschedule(e.to);
    }
    now = Math.max(now, until);
  }

  /**
   * Runs the control plane until routes and predicates have converged (see the class comment);
   * fails the test if they have not within two simulated minutes.
   */
  DataNet converge() {
    long limit = now + CONVERGENCE_LIMIT;
    Map<Integer, int[]> dist = new HashMap<>();
    for (int r : numbers) {
      dist.put(r, hopDistances(r));
    }
    String why;
    while ((why = notConverged(dist)) != null) {
      if (now >= limit) {
        fail("not converged at t=" + now + " ms: " + why);
      }
      runUntil(now + 10);
    }
    return this;
  }

  private int[] hopDistances(int from) {
    int[] dist = new int[routers.length];
    Arrays.fill(dist, -1);
    ArrayDeque<Integer> queue = new ArrayDeque<>();
    dist[from] = 0;
    queue.add(from);
    while (!queue.isEmpty()) {
      int u = queue.poll();
      for (int v : neighbours.get(u)) {
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          queue.add(v);
        }
      }
    }
    return dist;
  }

  private String notConverged(Map<Integer, int[]> dist) {
    EncodedPredicate empty = EncodedPredicate.empty(BLOOM);
    for (int r : numbers) {
      RoutingNode node = routers[r].node;
      ForwardingTable t = node.routes();
      for (int d : numbers) {
        if (d == r) {
          continue;
        }
        int want = dist.get(r)[d];
        int hop = t.nextHop(d);
        if (want < 0) {
          if (hop >= 0) {
            return "router " + r + " has a route to unreachable " + d;
          }
          continue;
        }
        if (hop < 0 || !neighbours.get(r).contains(hop) || dist.get(hop)[d] != want - 1) {
          return "router " + r + " routes to " + d + " via " + hop;
        }
        if (node.unicast().metric(d) != want) {
          return "router " + r + " has metric " + node.unicast().metric(d) + " to " + d;
        }
      }
      for (int s : numbers) {
        int[] want =
            neighbours.get(r).stream()
                .filter(n -> routers[n].node.routes().nextHop(s) == r)
                .mapToInt(Integer::intValue)
                .toArray();
        if (!Arrays.equals(want, t.childrenOf(s))) {
          return "router " + r + " has children " + Arrays.toString(t.childrenOf(s)) + " for " + s;
        }
      }
      for (int o : numbers) {
        if (o == r) {
          continue;
        }
        EncodedPredicate want = routers[o].node.local().aggregate();
        EncodedPredicate have = node.predicates().get(o);
        boolean ok = want.equals(empty) ? have == null || have.equals(empty) : want.equals(have);
        if (!ok) {
          return "router " + r + " lacks the current predicate of " + o;
        }
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- data plane

  /** Router {@code router}'s local host publishes {@code m}; returns its message id. */
  long publish(int router, Message m) {
    return publish(router, Payload.of(m));
  }

  /** Publishes {@code p.message()} at {@code router} with handle {@code p}; runs the data plane. */
  long publish(int router, Payload p) {
    long id = routers[router].plane.publish(p.message(), p);
    Published info = published.get(id);
    assertNotNull(info, "no published() call for message " + id);
    published.put(id, new Published(router, p.message(), info.d(), info.broadcast()));
    drain();
    return id;
  }

  /** Hands {@code router} a DATA packet from neighbour {@code from}; runs the data plane. */
  void inject(int router, int from, Header header, Payload p) {
    routers[router].receives.merge(header.messageId(), 1, Integer::sum);
    routers[router].plane.receive(from, header, p);
    drain();
  }

  /**
   * As {@link #inject}, for a broadcast marked for local delivery only ({@link
   * DataPlane.Packet#isLocalOnly}), as the kernel fast path passes one up.
   */
  void injectLocalOnly(int router, int from, Header header, Payload p) {
    DataPlane.Packet local =
        new DataPlane.Packet() {
          @Override
          public int hopLimit() {
            return header.hopLimit();
          }

          @Override
          public boolean isBroadcast() {
            return header.isBroadcast();
          }

          @Override
          public boolean isLocalOnly() {
            return true;
          }

          @Override
          public int sourceRouter() {
            return header.sourceRouter();
          }

          @Override
          public long messageId() {
            return header.messageId();
          }

          @Override
          public int destinations(long[] into) {
            return header.destinations(into);
          }
        };
    routers[router].receives.merge(header.messageId(), 1, Integer::sum);
    routers[router].plane.receive(from, local, p);
    drain();
  }

  private void drain() {
    int steps = 0;
    while (!data.isEmpty()) {
      if (++steps > 10_000_000) {
        fail("the data plane does not quiesce");
      }
      Copy c = data.poll();
      Router to = routers[c.to];
      to.receives.merge(c.header.messageId(), 1, Integer::sum);
      to.plane.receive(c.from, c.header, c.payload);
    }
  }

  /**
   * The data link between {@code a} and {@code b} breaks: both outputs refuse copies for it. The
   * control plane is not told.
   */
  void breakDataLink(int a, int b) {
    if (dataLinkUp.replace(key(a, b), false) == null) {
      throw new IllegalArgumentException("no link " + a + " - " + b);
    }
  }

  // ---------------------------------------------------------------- observations

  /** What the publishing router's output was told about message {@code id}. */
  Published published(long id) {
    return published.get(id);
  }

  /** The messages published so far, by id, in order. */
  Map<Long, Published> published() {
    return published;
  }

  /** The ids of the messages delivered to {@code host}, in delivery order. */
  List<Long> delivered(int host) {
    return List.copyOf(hosts.get(host).delivered);
  }

  /** DATA packets of message {@code id} that {@code router} received. */
  int receives(int router, long id) {
    return routers[router].receives.getOrDefault(id, 0);
  }

  /** The copies {@code from} sent to {@code to}, in order. */
  List<Header> copies(int from, int to) {
    return copies.stream().filter(c -> c.from == from && c.to == to).map(Copy::header).toList();
  }

  /** The hop limits of the copies of message {@code id} that {@code from} sent to {@code to}. */
  List<Integer> hopLimits(int from, int to, long id) {
    return copies(from, to).stream()
        .filter(h -> h.messageId() == id)
        .map(Header::hopLimit)
        .toList();
  }

  /** Deliveries to hosts at a router other than the one where the message was published. */
  long remoteDeliveries() {
    long n = 0;
    for (Host h : hosts.values()) {
      for (long id : h.delivered) {
        n += published.get(id).router() == h.router ? 0 : 1;
      }
    }
    return n;
  }

  /** Messages published so far that went out as broadcasts. */
  long broadcasts() {
    return published.values().stream().filter(Published::broadcast).count();
  }

  // ---------------------------------------------------------------- expectations

  /** {@code host} got exactly the messages {@code ids}, each once, in that order. */
  void expectDelivered(int host, Long... ids) {
    assertEquals(List.of(ids), delivered(host), "deliveries to host " + host);
  }

  /**
   * The oracle: every host got exactly the published messages its predicate matches, each once, and
   * nothing else.
   */
  void expectDeliveriesMatchPredicates() {
    for (var e : hosts.entrySet()) {
      Host h = e.getValue();
      List<Long> want = new ArrayList<>();
      for (var p : published.entrySet()) {
        if (h.predicate.matches(p.getValue().message())) {
          want.add(p.getKey());
        }
      }
      List<Long> have = new ArrayList<>(h.delivered);
      have.sort(null);
      want.sort(null);
      assertEquals(want, have, "host " + e.getKey() + " at router " + h.router);
    }
  }

  /** {@code router} counted {@code n} drops for {@code why}, in its counter and its hook. */
  void expectDrops(int router, Drop why, long n) {
    Router x = routers[router];
    assertEquals(n, x.plane.drops(why), why + " at router " + router);
    assertEquals(n, x.dropHook[why.ordinal()], why + " reported by router " + router);
  }

  /** The match time given for each message published at {@code router}, in order. */
  List<Long> matchNanos(int router) {
    return routers[router].matchNanos;
  }

  /** The broadcasts (source, message id) router {@code router} told its output it took itself. */
  List<List<Long>> taken(int router) {
    return routers[router].taken;
  }

  /** {@code router} counted no drop other than those named in {@code expected}. */
  void expectOnlyDrops(int router, Map<Drop, Long> expected) {
    for (Drop why : Drop.values()) {
      expectDrops(router, why, expected.getOrDefault(why, 0L));
    }
  }

  /** No router counted any drop. */
  void expectNoDrops() {
    for (int r : numbers) {
      expectOnlyDrops(r, Map.of());
    }
  }

  /**
   * Each router received each message at most once, and every router of a message's D exactly once;
   * every router but the source exactly once for a broadcast.
   */
  void expectEachRouterReceivesOnce() {
    for (var e : published.entrySet()) {
      long id = e.getKey();
      Published p = e.getValue();
      for (int r : numbers) {
        int n = receives(r, id);
        String where = "message " + id + " from " + p.router + " at router " + r;
        if (r == p.router) {
          assertEquals(0, n, where);
        } else if (p.broadcast || p.d.contains(r)) {
          assertEquals(1, n, where);
        } else {
          assertTrue(n <= 1, where + " received " + n + " times");
        }
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private static long key(int a, int b) {
    return ((long) Math.min(a, b) << 32) | Math.max(a, b);
  }

  private static List<Integer> bits(long[] d) {
    List<Integer> out = new ArrayList<>();
    if (d != null) {
      for (int w = 0; w < d.length; w++) {
        for (long x = d[w]; x != 0; x &= x - 1) {
          out.add(64 * w + Long.numberOfTrailingZeros(x));
        }
      }
    }
    return out;
  }
}
