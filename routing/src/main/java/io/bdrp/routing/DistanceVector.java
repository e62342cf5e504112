package io.bdrp.routing;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * UNICAST: a distance-vector protocol between configured neighbours that stays loop-free while it
 * converges, in the manner of Babel (RFC 8966).
 *
 * <p><b>Adjacencies.</b> A hello goes out on every configured link every {@code helloIntervalMs},
 * carrying this router's epoch and echoing the epoch last heard from the neighbour. The adjacency
 * is up while the neighbour has been heard within {@code deadIntervalMs} and its last hello echoed
 * this router's current epoch; it goes down on silence, on {@link #linkDown}, or when the neighbour
 * shows a new epoch (it restarted). Route updates and requests from a neighbour without an
 * adjacency are ignored. Links deliver in order, so anything a neighbour sent before it heard this
 * router's current epoch arrives before its echo and is ignored: a restarted router never accepts
 * routes computed from its previous life.
 *
 * <p><b>Routes.</b> Every router originates a route to itself with sequence (epoch, seqno), metric
 * 0. A route learned from neighbour n costs its advertised metric plus the cost of the link to n.
 * Full updates go to every neighbour each {@code updateIntervalMs}; triggered updates carry the
 * destinations whose selected route changed. To the neighbour that is the next hop, a route is sent
 * with the unreachable metric and {@link Route#viaReceiver()} set (split horizon with poisoned
 * reverse); the flag also tells that neighbour it is this router's parent in the tree of shortest
 * paths towards the destination ({@link #children}). A route not refreshed for {@code
 * routeExpiryMs} is dropped (checked every hello interval); a lost destination is advertised as
 * unreachable for {@code routeExpiryMs}, then no longer mentioned.
 *
 * <p><b>Feasibility.</b> For each destination the router keeps a feasibility distance FD = (seq,
 * metric): the newest sequence it has selected a route with and, for that sequence, the smallest
 * metric. An advertisement (s, m) is feasible when s is newer than FD's, or equal with m strictly
 * below FD's metric; only feasible routes are selected. Why this keeps the next-hop graph free of
 * loops at every instant: if A uses B, then B's advertised metric (at B's sequence) was below A's
 * FD, and B's own FD is at most what it advertised; going along next hops, sequences never get
 * older and, at equal sequence, FDs strictly decrease, so the walk cannot return to where it
 * started. When a destination has only infeasible routes left, the router sends a sequence-number
 * request towards it; the destination answers by originating a newer sequence, which every router
 * may accept. Feasibility distances of a destination without any route are forgotten after {@code
 * sourceGcMs}.
 *
 * <p><b>Threads.</b> Owned by one thread, which makes every call (the router's control thread or
 * the simulator). Faces must not call back into this object from {@link Face#send}.
 */
public final class DistanceVector {
  /**
   * Told about adjacencies and route changes, on the owning thread, during the call that did it.
   */
  public interface Listener {
    /** A two-way adjacency with {@code neighbour} came up. */
    void adjacencyUp(int neighbour);

    /** The adjacency with {@code neighbour} went down. */
    void adjacencyDown(int neighbour);

    /** Some selected route or tree of shortest paths changed; {@link #version()} grew. */
    void routesChanged();
  }

  private static final int INF = Route.INFINITY;

  /** A configured neighbour. */
  private static final class Neighbour {
    final Face face;
    int cost;
    long heardEpoch; // 0: never heard
    long lastHeard = Long.MIN_VALUE;
    boolean echoed; // its last hello echoed this router's epoch
    boolean up;
    long nextHello;
    long nextUpdate = Long.MAX_VALUE;
    final Map<Integer, Learned> routes = new HashMap<>();

    Neighbour(Face face, int cost) {
      this.face = face;
      this.cost = cost;
    }
  }

  /** A route as last advertised by a neighbour (finite metric only). */
  private static final class Learned {
    long epoch;
    int seqno;
    int metric;
    long refreshed;
  }

  /** What this router knows about one destination. */
  private static final class Dest {
    int nextHop = -1;
    int metric = INF;
    long epoch;
    int seqno;
    boolean hasFd;
    long fdEpoch;
    int fdSeqno;
    int fdMetric;
    long lostAt = Long.MIN_VALUE; // when the last route went, while unreachable
    long lastRequest = Long.MIN_VALUE;
    int[] children = new int[0]; // neighbours that route to this destination through this router
  }

  private final int self;
  private final long epoch;
  private final RoutingConfig config;
  private final Clock clock;
  private final Listener listener;
  private final TreeMap<Integer, Neighbour> neighbours = new TreeMap<>();
  private final TreeMap<Integer, Dest> dests = new TreeMap<>();
  private final Dest selfDest = new Dest();
  private int ownSeqno;
  private long version;
  private long nextHousekeeping;
  private int[] reachableCache;
  private long reachableVersion = -1;

  // Work collected during one call, sent when it returns.
  private final Set<Integer> changed = new LinkedHashSet<>();
  private boolean routesChanged;
  private int depth;

  public DistanceVector(
      int self, long epoch, RoutingConfig config, Clock clock, Listener listener) {
    if (self < 0 || self >= config.maxRouters()) {
      throw new IllegalArgumentException(
          "router number " + self + " outside 0.." + (config.maxRouters() - 1));
    }
    if (epoch <= 0) {
      throw new IllegalArgumentException("epoch must be positive, got " + epoch);
    }
    this.self = self;
    this.epoch = epoch;
    this.config = config;
    this.clock = clock;
    this.listener = listener;
    this.nextHousekeeping = clock.nowMillis() + config.helloIntervalMs();
  }

  /** This router's number. */
  public int self() {
    return self;
  }

  /** This router's epoch. */
  public long epoch() {
    return epoch;
  }

  /** A version that grows whenever a next hop, metric or children set changes. */
  public long version() {
    return version;
  }

  // ---- links ----

  /**
   * Configures a link to {@code face.neighbour()} at {@code cost}; the first hello goes out now.
   */
  public void addLink(Face face, int cost) {
    int n = face.neighbour();
    if (n == self || n < 0 || n >= config.maxRouters()) {
      throw new IllegalArgumentException("neighbour " + n + " is not a valid other router");
    }
    if (cost < 1 || cost >= INF) {
      throw new IllegalArgumentException("link cost must be in 1.." + (INF - 1) + ", got " + cost);
    }
    enter();
    try {
      Neighbour old = neighbours.get(n);
      if (old != null) {
        down(n, old);
      }
      Neighbour nb = new Neighbour(face, cost);
      neighbours.put(n, nb);
      sendHello(nb);
    } finally {
      exit();
    }
  }

  /** Removes the link to {@code neighbour}. */
  public void removeLink(int neighbour) {
    enter();
    try {
      Neighbour nb = neighbours.get(neighbour);
      if (nb != null) {
        down(neighbour, nb);
        neighbours.remove(neighbour);
      }
    } finally {
      exit();
    }
  }

  /** The transport to {@code neighbour} broke: the adjacency is down now. */
  public void linkDown(int neighbour) {
    enter();
    try {
      Neighbour nb = neighbours.get(neighbour);
      if (nb != null) {
        nb.lastHeard = Long.MIN_VALUE;
        nb.echoed = false;
        down(neighbour, nb);
      }
    } finally {
      exit();
    }
  }

  /** Whether the adjacency with {@code neighbour} is up. */
  public boolean isUp(int neighbour) {
    Neighbour nb = neighbours.get(neighbour);
    return nb != null && nb.up;
  }

  /** Neighbours with an adjacency, ascending. */
  public int[] upNeighbours() {
    return neighbours.entrySet().stream()
        .filter(e -> e.getValue().up)
        .mapToInt(Map.Entry::getKey)
        .toArray();
  }

  // ---- tables ----

  /** The next hop towards {@code destination}: itself for itself, -1 if none. */
  public int nextHop(int destination) {
    if (destination == self) {
      return self;
    }
    Dest d = dests.get(destination);
    return d == null ? -1 : d.nextHop;
  }

  /** The metric towards {@code destination}: 0 for itself, {@link Route#INFINITY} if none. */
  public int metric(int destination) {
    if (destination == self) {
      return 0;
    }
    Dest d = dests.get(destination);
    return d == null ? INF : d.metric;
  }

  /** Destinations with a route, ascending, this router excluded. */
  public int[] reachable() {
    if (reachableVersion != version || reachableCache == null) {
      int[] out = new int[dests.size()];
      int n = 0;
      for (Map.Entry<Integer, Dest> e : dests.entrySet()) {
        if (e.getValue().nextHop >= 0) {
          out[n++] = e.getKey();
        }
      }
      reachableCache = Arrays.copyOf(out, n);
      reachableVersion = version;
    }
    return reachableCache.clone();
  }

  /**
   * The neighbours whose selected route to {@code source} goes through this router, ascending: its
   * children in the tree of shortest paths towards {@code source}.
   */
  public int[] children(int source) {
    Dest d = source == self ? selfDest : dests.get(source);
    return d == null ? new int[0] : d.children.clone();
  }

  // ---- messages ----

  /**
   * Handles a hello, route update or sequence-number request from a neighbour. Returns false for
   * other message types and for senders that are not configured neighbours.
   */
  public boolean receive(ControlMessage m) {
    Neighbour nb = neighbours.get(m.sender());
    if (nb == null) {
      return false;
    }
    enter();
    try {
      switch (m) {
        case Hello h -> onHello(h.sender(), nb, h);
        case RouteUpdate u -> {
          if (nb.up) {
            onUpdate(u.sender(), nb, u);
          }
        }
        case SeqnoRequest r -> {
          if (nb.up) {
            onRequest(r.sender(), r);
          }
        }
        default -> {
          return false;
        }
      }
      return true;
    } finally {
      exit();
    }
  }

  private void onHello(int n, Neighbour nb, Hello h) {
    long now = clock.nowMillis();
    boolean reply = false;
    if (nb.heardEpoch != h.epoch()) {
      if (nb.heardEpoch != 0) {
        down(n, nb); // it restarted: nothing learned from its previous life stays
      }
      nb.heardEpoch = h.epoch();
      reply = true; // let it hear its new epoch echoed without waiting a hello interval
    }
    nb.lastHeard = now;
    nb.echoed = h.echoEpoch() == epoch;
    if (nb.echoed && !nb.up) {
      nb.up = true;
      version++;
      routesChanged = true;
      sendHello(nb);
      reply = false;
      listener.adjacencyUp(n);
      sendFull(n, nb);
      nb.nextUpdate = now + config.updateIntervalMs();
    } else if (!nb.echoed && nb.up) {
      down(n, nb);
    }
    if (reply) {
      sendHello(nb);
    }
  }

  private void onUpdate(int n, Neighbour nb, RouteUpdate u) {
    long now = clock.nowMillis();
    for (Route r : u.routes()) {
      int d = r.destination();
      if (d < 0 || d >= config.maxRouters()) {
        continue;
      }
      if (d == self) {
        setChild(selfDest, n, r.viaReceiver());
        if (r.epoch() == epoch && r.seqno() > ownSeqno) {
          ownSeqno = r.seqno(); // someone holds a newer sequence of this life: go past it
          changed.add(self);
        }
        continue;
      }
      Dest dest = dests.computeIfAbsent(d, k -> new Dest());
      setChild(dest, n, r.viaReceiver());
      if (r.metric() >= INF) {
        nb.routes.remove(d);
      } else {
        Learned l = nb.routes.computeIfAbsent(d, k -> new Learned());
        l.epoch = r.epoch();
        l.seqno = r.seqno();
        l.metric = r.metric();
        l.refreshed = now;
      }
      select(d, dest);
    }
  }

  private void onRequest(int n, SeqnoRequest r) {
    int d = r.destination();
    if (d == self) {
      if (r.epoch() == epoch && r.seqno() > ownSeqno) {
        ownSeqno = r.seqno();
        changed.add(self);
      } else if (r.epoch() > epoch) {
        changed.add(self); // cannot go past another life's epoch; answer with what there is
      } else {
        sendRoutes(n, neighbours.get(n), List.of(self));
      }
      return;
    }
    Dest dest = dests.get(d);
    if (dest == null || dest.nextHop < 0) {
      return;
    }
    if (!older(dest.epoch, dest.seqno, r.epoch(), r.seqno())) {
      sendRoutes(n, neighbours.get(n), List.of(d)); // what it asks for is here already
    } else if (r.hopCount() > 1 && dest.nextHop != n) {
      long now = clock.nowMillis();
      if (requestDue(dest, now)) {
        dest.lastRequest = now;
        neighbours
            .get(dest.nextHop)
            .face
            .send(new SeqnoRequest(self, d, r.epoch(), r.seqno(), r.hopCount() - 1));
      }
    }
  }

  /** Whether a request for {@code dest} may go out: at most one per hello interval. */
  private boolean requestDue(Dest dest, long now) {
    return dest.lastRequest == Long.MIN_VALUE || now - dest.lastRequest >= config.helloIntervalMs();
  }

  /** Whether sequence (e1, s1) is older than (e2, s2). */
  private static boolean older(long e1, int s1, long e2, int s2) {
    return e1 != e2 ? e1 < e2 : s1 < s2;
  }

  private void setChild(Dest dest, int n, boolean child) {
    int i = Arrays.binarySearch(dest.children, n);
    if (child && i < 0) {
      int[] c = Arrays.copyOf(dest.children, dest.children.length + 1);
      c[c.length - 1] = n;
      Arrays.sort(c);
      dest.children = c;
      version++;
      routesChanged = true;
    } else if (!child && i >= 0) {
      int[] c = new int[dest.children.length - 1];
      System.arraycopy(dest.children, 0, c, 0, i);
      System.arraycopy(dest.children, i + 1, c, i, c.length - i);
      dest.children = c;
      version++;
      routesChanged = true;
    }
  }

  /** Re-selects the route to {@code d} among feasible routes of up neighbours. */
  private void select(int d, Dest dest) {
    int bestHop = -1;
    int bestMetric = INF;
    Learned best = null;
    boolean infeasible = false;
    for (Map.Entry<Integer, Neighbour> e : neighbours.entrySet()) {
      Neighbour nb = e.getValue();
      if (!nb.up) {
        continue;
      }
      Learned l = nb.routes.get(d);
      if (l == null) {
        continue;
      }
      int m = Math.min(INF, l.metric + nb.cost);
      if (m >= INF) {
        continue;
      }
      boolean feasible =
          !dest.hasFd
              || older(dest.fdEpoch, dest.fdSeqno, l.epoch, l.seqno)
              || (dest.fdEpoch == l.epoch && dest.fdSeqno == l.seqno && l.metric < dest.fdMetric);
      if (!feasible) {
        infeasible = true;
        continue;
      }
      // Smallest metric; at equal metric keep the current next hop, then the lowest number.
      if (m < bestMetric || (m == bestMetric && e.getKey() == dest.nextHop)) {
        bestMetric = m;
        bestHop = e.getKey();
        best = l;
      }
    }
    long now = clock.nowMillis();
    if (best != null) {
      boolean moved = bestHop != dest.nextHop || bestMetric != dest.metric;
      boolean newer = dest.epoch != best.epoch || dest.seqno != best.seqno;
      dest.nextHop = bestHop;
      dest.metric = bestMetric;
      dest.epoch = best.epoch;
      dest.seqno = best.seqno;
      dest.lostAt = Long.MIN_VALUE;
      if (!dest.hasFd || older(dest.fdEpoch, dest.fdSeqno, best.epoch, best.seqno)) {
        dest.hasFd = true;
        dest.fdEpoch = best.epoch;
        dest.fdSeqno = best.seqno;
        dest.fdMetric = bestMetric;
      } else if (bestMetric < dest.fdMetric) {
        dest.fdMetric = bestMetric;
      }
      if (moved) {
        version++;
        routesChanged = true;
      }
      if (moved || newer) {
        changed.add(d);
      }
    } else {
      if (dest.nextHop >= 0) {
        dest.nextHop = -1;
        dest.metric = INF;
        dest.lostAt = now;
        version++;
        routesChanged = true;
        changed.add(d); // retraction
      }
      if (infeasible && dest.hasFd && requestDue(dest, now)) {
        dest.lastRequest = now;
        SeqnoRequest req =
            new SeqnoRequest(self, d, dest.fdEpoch, dest.fdSeqno + 1, config.seqnoRequestHops());
        for (Map.Entry<Integer, Neighbour> e : neighbours.entrySet()) {
          Neighbour nb = e.getValue();
          if (nb.up && nb.routes.containsKey(d)) {
            nb.face.send(req);
          }
        }
      }
    }
  }

  // ---- timers ----

  /** Runs every timer that is due. */
  public void tick() {
    enter();
    try {
      long now = clock.nowMillis();
      for (Map.Entry<Integer, Neighbour> e : neighbours.entrySet()) {
        Neighbour nb = e.getValue();
        if (nb.up && now - nb.lastHeard >= config.deadIntervalMs()) {
          nb.echoed = false;
          down(e.getKey(), nb);
        }
        if (now >= nb.nextHello) {
          sendHello(nb);
        }
        if (nb.up && now >= nb.nextUpdate) {
          sendFull(e.getKey(), nb);
          nb.nextUpdate = now + config.updateIntervalMs();
        }
      }
      if (now >= nextHousekeeping) {
        nextHousekeeping = now + config.helloIntervalMs();
        housekeeping(now);
      }
    } finally {
      exit();
    }
  }

  /** When {@link #tick()} next has work. */
  public long nextDeadlineMillis() {
    long next = nextHousekeeping;
    for (Neighbour nb : neighbours.values()) {
      next = Math.min(next, nb.nextHello);
      if (nb.up) {
        next = Math.min(next, nb.nextUpdate);
        next = Math.min(next, nb.lastHeard + config.deadIntervalMs());
      }
    }
    return next;
  }

  private void housekeeping(long now) {
    // Expire stale routes.
    for (Map.Entry<Integer, Neighbour> e : neighbours.entrySet()) {
      Neighbour nb = e.getValue();
      for (Iterator<Map.Entry<Integer, Learned>> it = nb.routes.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<Integer, Learned> r = it.next();
        if (now - r.getValue().refreshed >= config.routeExpiryMs()) {
          it.remove();
          Dest dest = dests.get(r.getKey());
          if (dest != null && dest.nextHop == e.getKey()) {
            select(r.getKey(), dest);
          }
        }
      }
    }
    // Forget destinations long gone.
    for (Iterator<Map.Entry<Integer, Dest>> it = dests.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Integer, Dest> e = it.next();
      Dest dest = e.getValue();
      if (dest.nextHop < 0
          && dest.lostAt != Long.MIN_VALUE
          && now - dest.lostAt >= config.sourceGcMs()
          && dest.children.length == 0
          && !anyLearned(e.getKey())) {
        it.remove();
      } else if (dest.nextHop < 0
          && dest.lostAt == Long.MIN_VALUE
          && !dest.hasFd
          && dest.children.length == 0
          && !anyLearned(e.getKey())) {
        it.remove(); // heard of only through retractions
      }
    }
  }

  private boolean anyLearned(int d) {
    for (Neighbour nb : neighbours.values()) {
      if (nb.routes.containsKey(d)) {
        return true;
      }
    }
    return false;
  }

  // ---- sending ----

  private void sendHello(Neighbour nb) {
    nb.face.send(new Hello(self, epoch, nb.heardEpoch));
    nb.nextHello = clock.nowMillis() + config.helloIntervalMs();
  }

  private void sendFull(int n, Neighbour nb) {
    List<Integer> all = new ArrayList<>(dests.size() + 1);
    all.add(self);
    all.addAll(dests.keySet());
    sendRoutes(n, nb, all);
  }

  /**
   * Sends the routes to {@code ds} as seen by neighbour {@code n}; skips what is not advertised.
   */
  private void sendRoutes(int n, Neighbour nb, Iterable<Integer> ds) {
    if (nb == null || !nb.up) {
      return;
    }
    long now = clock.nowMillis();
    List<Route> routes = new ArrayList<>();
    for (int d : ds) {
      if (d == self) {
        routes.add(new Route(self, epoch, ownSeqno, 0, false));
        continue;
      }
      Dest dest = dests.get(d);
      if (dest == null || !dest.hasFd) {
        continue;
      }
      if (dest.nextHop == n) {
        routes.add(new Route(d, dest.epoch, dest.seqno, INF, true));
      } else if (dest.nextHop >= 0) {
        routes.add(new Route(d, dest.epoch, dest.seqno, dest.metric, false));
      } else if (dest.lostAt != Long.MIN_VALUE && now - dest.lostAt < config.routeExpiryMs()) {
        routes.add(new Route(d, dest.fdEpoch, dest.fdSeqno, INF, false));
      }
    }
    if (!routes.isEmpty()) {
      nb.face.send(new ControlMessage.RouteUpdate(self, routes));
    }
  }

  private void down(int n, Neighbour nb) {
    boolean wasUp = nb.up;
    nb.up = false;
    nb.nextUpdate = Long.MAX_VALUE;
    if (!nb.routes.isEmpty()) {
      List<Integer> lost = new ArrayList<>(nb.routes.keySet());
      nb.routes.clear();
      for (int d : lost) {
        Dest dest = dests.get(d);
        if (dest != null && dest.nextHop == n) {
          select(d, dest);
        }
      }
    }
    setChild(selfDest, n, false);
    for (Dest dest : dests.values()) {
      setChild(dest, n, false);
    }
    if (wasUp) {
      version++;
      routesChanged = true;
      listener.adjacencyDown(n);
    }
  }

  // Calls nest (a listener may call back); triggered updates and notices go out once, at the end
  // of the outermost call.
  private void enter() {
    depth++;
  }

  private void exit() {
    if (--depth > 0) {
      return;
    }
    if (!changed.isEmpty()) {
      List<Integer> ds = new ArrayList<>(changed);
      changed.clear();
      for (Map.Entry<Integer, Neighbour> e : neighbours.entrySet()) {
        sendRoutes(e.getKey(), e.getValue(), ds);
      }
    }
    if (routesChanged) {
      routesChanged = false;
      listener.routesChanged();
    }
  }
}
