package io.bdrp.routing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A discrete-event simulation of {@link DistanceVector}s joined by FIFO links with a fixed latency
 * each (in simulated milliseconds). One simulated clock; a queue of timed deliveries and timer
 * events ordered by (time, insertion order); every router's {@code tick()} runs at its {@code
 * nextDeadlineMillis()}. Links can be cut (with or without telling the routers), routers crashed
 * (everything to and from them is dropped) and restarted with a larger epoch. Single-threaded,
 * deterministic.
 */
final class DvNetwork {

  /** Called after every delivered message and every timer run. */
  interface Observer {
    void afterEvent(DvNetwork net);
  }

  final RoutingConfig config;
  final int size;
  private long now;
  private long order;
  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(
          (a, b) ->
              a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.order, b.order));
  private final DistanceVector[] routers;
  private final int[] incarnation;
  private final long[] timerAt;
  private final boolean[] timerPending;
  private final int[] loopState;
  private int loopMark;
  private boolean lastEventChanged;
  private final Map<Long, Link> links = new HashMap<>();
  private final List<List<String>> events = new ArrayList<>();
  private long nextEpoch = 1;
  long delivered;
  long routesDelivered;
  long requestsDelivered;
  long digestsDelivered;
  long tableRequestsDelivered;

  /** Whether routers send each other digests for periodic full updates that changed nothing. */
  boolean digests = true;

  private Observer observer = net -> {};

  /** One link: latency, whether it delivers, and the configured cost at each end. */
  static final class Link {
    final int a;
    final int b;
    final long latency;
    boolean working = true;
    int generation;
    int costAb;
    int costBa;

    Link(int a, int b, long latency, int costAb, int costBa) {
      this.a = a;
      this.b = b;
      this.latency = latency;
      this.costAb = costAb;
      this.costBa = costBa;
    }

    int cost(int from) {
      return from == a ? costAb : costBa;
    }
  }

  private record Event(
      long time,
      long order,
      int to,
      ControlMessage message,
      int fromIncarnation,
      int toIncarnation,
      Link link,
      int linkGeneration) {}

  DvNetwork(int size, RoutingConfig config) {
    this.size = size;
    this.config = config;
    routers = new DistanceVector[size];
    incarnation = new int[size];
    timerAt = new long[size];
    timerPending = new boolean[size];
    loopState = new int[size];
    for (int i = 0; i < size; i++) {
      events.add(new ArrayList<>());
    }
  }

  /** A config with short timers, for tests. */
  static RoutingConfig testConfig(int maxRouters) {
    return RoutingConfig.builder()
        .helloIntervalMs(100)
        .deadIntervalMs(350)
        .updateIntervalMs(400)
        .routeExpiryMs(1_300)
        .sourceGcMs(3_000)
        .maxRouters(maxRouters)
        .build();
  }

  /** What router i's listeners heard: "up n @incarnation", "down n @incarnation". */
  List<String> events(int i) {
    return events.get(i);
  }

  void observe(Observer o) {
    observer = o;
  }

  long now() {
    return now;
  }

  private static long key(int a, int b) {
    return ((long) Math.min(a, b) << 32) | Math.max(a, b);
  }

  Link link(int a, int b) {
    return links.get(key(a, b));
  }

  List<Link> links() {
    return new ArrayList<>(links.values());
  }

  /** Adds a link (to running routers too); costs as configured at a and at b. */
  void connect(int a, int b, long latency, int costAb, int costBa) {
    Link l =
        new Link(
            Math.min(a, b),
            Math.max(a, b),
            latency,
            a < b ? costAb : costBa,
            a < b ? costBa : costAb);
    links.put(key(a, b), l);
    if (routers[a] != null) {
      routers[a].addLink(face(a, b), costAb);
      routers[a].acceptsDigests(b, digests);
      reschedule(a);
    }
    if (routers[b] != null) {
      routers[b].addLink(face(b, a), costBa);
      routers[b].acceptsDigests(a, digests);
      reschedule(b);
    }
  }

  void connect(int a, int b, long latency) {
    connect(a, b, latency, 1, 1);
  }

  /** Starts (or restarts, with a larger epoch) router i with all its links. */
  void start(int i) {
    incarnation[i]++;
    timerPending[i] = false;
    int inc = incarnation[i];
    DistanceVector dv =
        new DistanceVector(
            i,
            nextEpoch++,
            config,
            () -> now,
            new DistanceVector.Listener() {
              @Override
              public void adjacencyUp(int n) {
                events.get(i).add("up " + n + " @" + inc);
              }

              @Override
              public void adjacencyDown(int n) {
                events.get(i).add("down " + n + " @" + inc);
              }

              @Override
              public void routesChanged() {}
            });
    routers[i] = dv;
    for (Link l : links.values()) {
      if (l.a == i || l.b == i) {
        int n = l.a == i ? l.b : l.a;
        dv.addLink(face(i, n), l.cost(i));
        dv.acceptsDigests(n, digests);
      }
    }
    reschedule(i);
  }

  void startAll() {
    for (int i = 0; i < size; i++) {
      start(i);
    }
  }

  /** Router i stops: nothing more is delivered to or from it, its state is gone. */
  void crash(int i) {
    routers[i] = null;
    incarnation[i]++;
    timerPending[i] = false;
  }

  boolean alive(int i) {
    return routers[i] != null;
  }

  DistanceVector router(int i) {
    return routers[i];
  }

  /** The transport of a link fails and both ends are told (linkDown). */
  void linkDown(int a, int b) {
    Link l = link(a, b);
    l.working = false;
    l.generation++;
    if (routers[a] != null) {
      routers[a].linkDown(b);
      reschedule(a);
    }
    if (routers[b] != null) {
      routers[b].linkDown(a);
      reschedule(b);
    }
  }

  /** The link silently stops delivering; only the dead interval can notice. */
  void cut(int a, int b) {
    Link l = link(a, b);
    l.working = false;
    l.generation++;
  }

  /** The link delivers again (hellos re-form the adjacency). */
  void restore(int a, int b) {
    link(a, b).working = true;
  }

  /** Router a's cost for its link to b changes. */
  void setCost(int a, int b, int cost) {
    Link l = link(a, b);
    if (a == l.a) {
      l.costAb = cost;
    } else {
      l.costBa = cost;
    }
    if (routers[a] != null) {
      routers[a].addLink(face(a, b), cost);
      reschedule(a);
    }
  }

  private Face face(int from, int to) {
    Link l = link(from, to);
    int fromInc = incarnation[from];
    return new Face() {
      @Override
      public int neighbour() {
        return to;
      }

      @Override
      public void send(ControlMessage message) {
        if (!l.working || incarnation[from] != fromInc) {
          return;
        }
        queue.add(
            new Event(
                now + l.latency, order++, to, message, fromInc, incarnation[to], l, l.generation));
      }
    };
  }

  private void reschedule(int i) {
    if (routers[i] == null) {
      return;
    }
    long t = Math.max(now, routers[i].nextDeadlineMillis());
    if (!timerPending[i] || t != timerAt[i]) {
      timerAt[i] = t;
      timerPending[i] = true;
      queue.add(new Event(t, order++, i, null, 0, incarnation[i], null, 0));
    }
  }

  /** Runs events until simulated time {@code until} (inclusive). */
  void runUntil(long until) {
    while (!queue.isEmpty() && queue.peek().time <= until) {
      Event e = queue.poll();
      now = e.time;
      int i = e.to;
      DistanceVector dv = routers[i];
      if (dv == null || incarnation[i] != e.toIncarnation) {
        continue;
      }
      long versionBefore = dv.version();
      if (e.message == null) {
        if (e.time != timerAt[i] || !timerPending[i]) {
          continue; // superseded timer
        }
        timerPending[i] = false;
        if (dv.nextDeadlineMillis() <= now) {
          dv.tick();
        }
      } else {
        if (!e.link.working || e.link.generation != e.linkGeneration) {
          continue;
        }
        int from = e.message.sender();
        if (incarnation[from] != e.fromIncarnation) {
          continue;
        }
        dv.receive(e.message);
        delivered++;
        if (e.message instanceof ControlMessage.RouteUpdate u) {
          routesDelivered += u.routes().size();
        } else if (e.message instanceof ControlMessage.SeqnoRequest) {
          requestsDelivered++;
        } else if (e.message instanceof ControlMessage.RouteDigest) {
          digestsDelivered++;
        } else if (e.message instanceof ControlMessage.TableRequest) {
          tableRequestsDelivered++;
        }
      }
      reschedule(i);
      lastEventChanged = dv.version() != versionBefore;
      observer.afterEvent(this);
    }
    now = Math.max(now, until);
  }

  void runFor(long ms) {
    runUntil(now + ms);
  }

  /** Shortest-path metrics towards {@code d} over working links between live routers. */
  long[] distancesTo(int d) {
    long[] dist = new long[size];
    Arrays.fill(dist, Long.MAX_VALUE);
    if (!alive(d)) {
      return dist;
    }
    List<List<Link>> adjacent = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      adjacent.add(new ArrayList<>());
    }
    for (Link l : links.values()) {
      if (l.working && alive(l.a) && alive(l.b)) {
        adjacent.get(l.a).add(l);
        adjacent.get(l.b).add(l);
      }
    }
    dist[d] = 0;
    PriorityQueue<long[]> pq = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
    pq.add(new long[] {0, d});
    while (!pq.isEmpty()) {
      long[] top = pq.poll();
      int v = (int) top[1];
      if (top[0] > dist[v]) {
        continue;
      }
      for (Link l : adjacent.get(v)) {
        int u = l.a == v ? l.b : l.a;
        long nd = dist[v] + l.cost(u); // u reaches v at u's cost of the link
        if (nd < dist[u]) {
          dist[u] = nd;
          pq.add(new long[] {nd, u});
        }
      }
    }
    return dist;
  }

  /** The cost router u configured for its link to v. */
  int cost(int u, int v) {
    return link(u, v).cost(u);
  }

  /**
   * A cycle in the graph of selected next hops towards some destination among live routers, as a
   * description, or null if there is none. O(routers^2), no allocation unless a loop is found.
   */
  String findLoop() {
    int[] state = loopState;
    for (int d = 0; d < size; d++) {
      int mark = ++loopMark; // state[v] == mark: on the current path; == -mark: done
      for (int start = 0; start < size; start++) {
        if (!alive(start) || state[start] == mark || state[start] == -mark) {
          continue;
        }
        int v = start;
        while (v >= 0 && v != d && alive(v) && state[v] != mark && state[v] != -mark) {
          state[v] = mark;
          v = routers[v].nextHop(d);
        }
        if (v >= 0 && v != d && alive(v) && state[v] == mark) {
          return "loop towards " + d + " at t=" + now + " through " + v;
        }
        for (int u = start; u >= 0 && u != d && alive(u) && state[u] == mark; ) {
          state[u] = -mark;
          u = routers[u].nextHop(d);
        }
      }
    }
    return null;
  }

  /** True if the last event changed the routes of the router it ran on. */
  boolean lastEventChangedRoutes() {
    return lastEventChanged;
  }
}
