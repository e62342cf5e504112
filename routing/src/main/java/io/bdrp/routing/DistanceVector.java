package io.bdrp.routing;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The UNICAST table of a router: a loop-free distance-vector protocol between configured
 * neighbours, in the spirit of Babel (RFC 8966). A pure state machine: no sockets, no threads;
 * messages go out through {@link Face}s, time comes from the injected {@link Clock}, and timers run
 * when the owner calls {@link #tick()} at (or after) {@link #nextDeadlineMillis()}.
 *
 * <p><b>Threading.</b> One thread owns an instance (the router's control event loop, or the
 * simulator): every method, including the read-only ones, must be called from it. {@link Listener}
 * callbacks run on that thread during the call that caused them; a listener may read the table but
 * must not call the mutating methods. The data plane must not read this class; it reads snapshots
 * built when {@link #version()} changes.
 *
 * <h2>Adjacencies: hellos and the epoch echo</h2>
 *
 * Every router draws a new, larger epoch each time it starts. Every {@code helloIntervalMs} it
 * sends on each configured link {@code Hello(self, epoch, echoEpoch)}, where {@code echoEpoch} is
 * the epoch it last heard from that neighbour (0 if none); it also answers at once when it learns a
 * neighbour's epoch, so an adjacency forms in about one round trip. The adjacency with n is up
 * while n has been heard within {@code deadIntervalMs} and n's last hello echoed our current epoch:
 * the link then works both ways, and n knows which incarnation of us it talks to.
 *
 * <p>A hello with a newer epoch than the one known means that n restarted: the adjacency goes down
 * (every route learned from n is dropped), and comes up again once n echoes our epoch. A hello that
 * no longer echoes our epoch means n forgot us (its transport failed, or it timed us out): the
 * adjacency goes down too. Route updates and sequence-number requests from a neighbour whose
 * adjacency is not up are ignored. With FIFO links this is what keeps a restarted router from
 * accepting stale routes that still point through its previous incarnation: anything n sends after
 * echoing our new epoch was sent after n dropped what it had learned from our old incarnation. On
 * adjacency up, each side sends the other its full table at once. {@link #linkDown} (the transport
 * reports the session lost) and the dead interval (silent failure) take the adjacency down and
 * forget the neighbour's epoch, so the neighbour, still hearing our hellos, sees its epoch no
 * longer echoed and takes its side down as well.
 *
 * <h2>Routes, sequence numbers and the feasibility condition</h2>
 *
 * Every router originates a route to itself at metric 0 with sequence number (epoch, seqno);
 * sequence numbers compare by epoch first, then seqno, and a larger one is <em>newer</em>. A route
 * to d advertised by neighbour n as (seq, m) gives the candidate metric {@code m + cost(n)}
 * (INFINITY if m is INFINITY or the sum reaches it), where cost(n) is this router's configured cost
 * of the link.
 *
 * <p>For each destination the router keeps a <em>feasibility distance</em> FD = (seq, metric): the
 * best route it has ever selected (and so advertised) with a finite metric, where newer sequence
 * numbers are better and, at equal sequence numbers, smaller metrics are. An advertised finite
 * route (s, m) is <em>feasible</em> iff there is no FD, or s is newer than FD.seq, or s equals
 * FD.seq and m &lt; FD.metric. The router selects, among the feasible, unexpired routes from up
 * neighbours, the one with the smallest candidate metric (ties go to the smallest neighbour number,
 * whatever the order routes arrived in: the trees of shortest paths that the routers' choices form
 * then agree as far as the ties allow, so that fewer copies of a message cross one router), and
 * never an unfeasible one. Selecting a finite route (s, M) lowers FD to (s, M) if that is better.
 *
 * <p><b>Why no loop can form, even during convergence.</b> Order (seq, metric) pairs as above and
 * write FD(x) for x's feasibility distance towards d; FD(x) only ever gets better, and it is at
 * least as good as anything x has advertised, since x updates it on selection, before advertising.
 * If x selected its route through y, the advertisement of y that x holds is strictly better than
 * FD(x) (feasibility when selected; FD(x) then moved to (s, m + cost) with cost &ge; 1, still
 * worse), and FD(y) is at least as good as that advertisement. So FD strictly improves along every
 * chain of next hops; a chain that came back to its start would make FD(x) strictly better than
 * itself. Two events could break "FD(y) is at least as good as what y advertised": y forgetting FD
 * and y restarting. FD is forgotten only {@code sourceGcMs} after the destination became
 * unreachable; by then y has advertised only retractions for longer than {@code routeExpiryMs}, so
 * no neighbour holds a finite route from y any more. A restarted router has no FD at all, and its
 * neighbours may still hold routes from its previous incarnation until they hear its new epoch (or
 * time it out). So a router <em>holds down</em> after it starts: it selects no route through a
 * neighbour until every configured neighbour has echoed its new epoch (each of them has then
 * dropped the routes of the previous incarnation) or until {@code deadIntervalMs + helloIntervalMs}
 * have passed (each neighbour has then timed the old incarnation out). This assumes a router
 * restarts with the same set of links.
 *
 * <h2>Updates</h2>
 *
 * When the selected route to d changes (next hop, metric or seq, or d becomes unreachable) the
 * router sends a triggered update to every up neighbour. Urgent changes (d became unreachable, or
 * its route has a newer sequence number than the one last advertised) go at once; the others are
 * paced, in RFC 8966's spirit: they go out at most once per {@code updatePacingMs}, all that
 * gathered meanwhile in one batch (an isolated change still goes at once). What is sent is the
 * selection at sending time, never worse than FD, so the loop-freedom argument below holds whatever
 * the delay. The changes of one call go out as one message per neighbour. Every {@code
 * updateIntervalMs} it sends each up neighbour its full table. Split horizon with poisoned reverse:
 * the route to d sent to the neighbour that is the next hop for d carries metric INFINITY and
 * {@code viaReceiver = true}, which also tells that neighbour it is our parent in the tree of
 * shortest paths towards d ({@link #children}). A destination that becomes unreachable is
 * advertised as a retraction (INFINITY with its last seq) for {@code routeExpiryMs}, then no longer
 * mentioned. A route not refreshed for {@code routeExpiryMs} expires.
 *
 * <h2>Sequence-number requests</h2>
 *
 * FD makes a router refuse routes that are worse than what it once advertised at the same seq, so
 * after a failure the only remaining routes may be unfeasible. The router then sends {@code
 * SeqnoRequest(self, d, FD.epoch, FD.seqno, seqnoRequestHops)}, asking for a route newer than FD:
 * to every up neighbour when it loses its selected route, and to the neighbour offering an
 * unfeasible route that would be better than the selected one (or than none). A router that
 * receives a request for itself whose sequence number is not older than its own bumps its seqno
 * past it and sends a triggered update; otherwise it answers the requester with its own route. A
 * router whose selected route is already newer than the request answers the requester with that
 * route; otherwise, while hops remain, it forwards the request towards d (its next hop, else the
 * neighbour offering the best unfeasible route), never back to the requester. A router sends or
 * forwards at most one request per destination and requested seq per hello interval, and repeats
 * its own requests at most once per hello interval while the condition lasts.
 *
 * <h2>Timers</h2>
 *
 * {@link #tick()} runs: hellos every {@code helloIntervalMs} per link; the dead interval of each
 * heard neighbour; a full update every {@code updateIntervalMs} per up neighbour; the end of the
 * start-up hold-down; and, every {@code helloIntervalMs}, a sweep over the table that removes
 * routes not refreshed for {@code routeExpiryMs}, ends retractions, forgets FDs {@code sourceGcMs}
 * after their destination became unreachable, and repeats pending sequence-number requests. Route
 * expiry is also checked on every selection, so it is exact; the sweep only notices it at most one
 * hello interval late.
 *
 * <p>Control state is one entry per (destination, neighbour) plus one record per destination, and
 * is freed when a destination has neither routes, nor FD, nor retraction: it grows with routers
 * times neighbours, never with time. Processing a route costs O(neighbours); building a full update
 * O(maxRouters).
 */
public final class DistanceVector {

  /**
   * Told about adjacency and route changes, on the owning thread, during the call that made them.
   */
  public interface Listener {
    /** The two-way adjacency with {@code neighbour} is established (new, or after its restart). */
    void adjacencyUp(int neighbour);

    /**
     * The adjacency with {@code neighbour} is lost: dead interval, transport down, link removed, or
     * the neighbour restarted (new epoch) or forgot us. Its routes are already dropped.
     */
    void adjacencyDown(int neighbour);

    /** A next hop, metric or children set changed; {@link #version()} was bumped. */
    void routesChanged();
  }

  private static final int INF = Route.INFINITY;

  private final int self;
  private final long epoch;
  private final RoutingConfig config;
  private final Clock clock;
  private final Listener listener;

  private int seqno;
  private final TreeMap<Integer, Nbr> links = new TreeMap<>();
  private final Dest[] dests;

  private boolean holdingDown = true;
  private final long holdDownUntil;
  private long nextSweepAt;

  private final int[] dirty;
  private int dirtyCount;

  /** Destinations whose non-urgent change waits for the next paced flush ({@link #finish}). */
  private final int[] paced;

  private int pacedCount;
  private final Pacer pacer;
  private boolean changed;
  private long version;

  /**
   * A fresh table of router {@code self} in its incarnation {@code epoch}.
   *
   * @param epoch larger than the epoch of any previous incarnation of this router; positive
   * @throws IllegalArgumentException if {@code self} is not a router number or epoch is not
   *     positive
   */
  public DistanceVector(
      int self, long epoch, RoutingConfig config, Clock clock, Listener listener) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.listener = Objects.requireNonNull(listener, "listener");
    if (self < 0 || self >= config.maxRouters()) {
      throw new IllegalArgumentException(
          "self " + self + " outside 0.." + (config.maxRouters() - 1));
    }
    if (epoch <= 0) {
      throw new IllegalArgumentException("epoch must be positive, got " + epoch);
    }
    this.self = self;
    this.epoch = epoch;
    this.dests = new Dest[config.maxRouters()];
    this.dirty = new int[config.maxRouters()];
    this.paced = new int[config.maxRouters()];
    this.pacer = new Pacer(config.updatePacingMs());
    long now = clock.nowMillis();
    this.holdDownUntil = now + config.deadIntervalMs() + config.helloIntervalMs();
    this.nextSweepAt = now + config.helloIntervalMs();
    dests[self] = new Dest(self);
  }

  /** This router's number. */
  public int self() {
    return self;
  }

  /** This router's incarnation. */
  public long epoch() {
    return epoch;
  }

  /** The seqno of the route this router originates to itself, in the current epoch. */
  public int seqno() {
    return seqno;
  }

  /** The table version: bumped whenever a next hop, metric or children set changes. */
  public long version() {
    return version;
  }

  /** True while this router, just started, selects no route through a neighbour (see above). */
  public boolean holdingDown() {
    return holdingDown;
  }

  // ---------------------------------------------------------------- configuration

  /**
   * Configures a link to {@code face.neighbour()} with this router's cost for it, and sends a hello
   * right away. Configuring a neighbour again replaces its face and cost; the adjacency is kept and
   * routes are re-selected with the new cost.
   *
   * @throws IllegalArgumentException if the neighbour is self or not a router number, or the cost
   *     is not in 1..INFINITY-1
   */
  public void addLink(Face face, int cost) {
    int n = face.neighbour();
    if (n < 0 || n >= config.maxRouters() || n == self) {
      throw new IllegalArgumentException("bad neighbour " + n + " for router " + self);
    }
    if (cost < 1 || cost >= INF) {
      throw new IllegalArgumentException("cost must be in 1.." + (INF - 1) + ", got " + cost);
    }
    Nbr nbr = links.get(n);
    long now = clock.nowMillis();
    if (nbr == null) {
      nbr = new Nbr(n, face, cost);
      links.put(n, nbr);
      sendHello(nbr, now);
    } else {
      nbr.face = face;
      if (nbr.cost != cost) {
        nbr.cost = cost;
        reselectAll();
      }
    }
    finish();
  }

  /** Unconfigures the link to {@code neighbour}: the adjacency goes down and is forgotten. */
  public void removeLink(int neighbour) {
    Nbr nbr = links.remove(neighbour);
    if (nbr != null) {
      if (nbr.up) {
        adjacencyDown(nbr);
      }
      finish();
    }
  }

  /**
   * The transport to {@code neighbour} is lost: the adjacency goes down now and its epoch is
   * forgotten. The link stays configured; hellos go on, and the adjacency forms again when the
   * transport delivers them.
   */
  public void linkDown(int neighbour) {
    Nbr nbr = links.get(neighbour);
    if (nbr != null) {
      forget(nbr);
      finish();
    }
  }

  /**
   * Something arrived from {@code neighbour} on its session (data or any control message): it is
   * alive. Counts as hearing it for the dead interval once its epoch is known, so that a link whose
   * queue holds hellos behind seconds of traffic is not taken for dead while it delivers.
   */
  public void heard(int neighbour) {
    Nbr nbr = links.get(neighbour);
    if (nbr != null && nbr.knownEpoch != 0) {
      nbr.lastHeard = clock.nowMillis();
    }
  }

  // ---------------------------------------------------------------- input

  /**
   * Handles a control message from neighbour {@code m.sender()}.
   *
   * @return true if the message was processed; false if it is not a distance-vector message (a
   *     predicate message, for another table), comes from a router that is not a configured
   *     neighbour, is a hello of an older incarnation, or is a route update or request from a
   *     neighbour whose adjacency is not up
   */
  public boolean receive(ControlMessage m) {
    Nbr nbr = links.get(m.sender());
    if (nbr == null) {
      return false;
    }
    boolean handled =
        switch (m) {
          case Hello h -> onHello(nbr, h);
          case RouteUpdate u -> nbr.up && onUpdate(nbr, u);
          case SeqnoRequest r -> nbr.up && onRequest(nbr, r);
          default -> false;
        };
    finish();
    return handled;
  }

  private boolean onHello(Nbr nbr, Hello h) {
    long now = clock.nowMillis();
    if (nbr.knownEpoch != 0 && h.epoch() != nbr.knownEpoch) {
      if (h.epoch() < nbr.knownEpoch) {
        return false;
      }
      if (nbr.up) {
        adjacencyDown(nbr); // the neighbour restarted
      }
      nbr.knownEpoch = 0;
    }
    boolean learned = nbr.knownEpoch != h.epoch();
    nbr.knownEpoch = h.epoch();
    nbr.lastHeard = now;
    boolean echoed = h.echoEpoch() == epoch;
    if (nbr.up && !echoed) {
      adjacencyDown(nbr); // the neighbour forgot us
    } else if (!nbr.up && echoed) {
      adjacencyUp(nbr);
    }
    if (learned) {
      sendHello(nbr, now); // echo at once: the adjacency forms in one round trip
    }
    return true;
  }

  private boolean onUpdate(Nbr nbr, RouteUpdate u) {
    long now = clock.nowMillis();
    int max = config.maxRouters();
    for (Route r : u.routes()) {
      int d = r.destination();
      if (d < 0 || d >= max) {
        continue;
      }
      Dest dd = dests[d];
      Entry e = dd == null ? null : dd.find(nbr);
      if (e == null) {
        if (r.metric() >= INF && !r.viaReceiver()) {
          continue; // a retraction of a route we do not hold
        }
        if (dd == null) {
          dd = dests[d] = new Dest(d);
        }
        e = dd.add(nbr);
      }
      if (e.via != r.viaReceiver()) {
        changed = true; // the children of d
        e.via = r.viaReceiver();
      }
      e.epoch = r.epoch();
      e.seqno = r.seqno();
      e.metric = r.metric();
      e.refreshedAt = now;
      if (d != self) {
        select(dd, now);
        if (r.metric() < INF && !feasible(dd, e) && betterThanSelected(dd, e)) {
          request(dd, now, nbr);
        }
      }
    }
    return true;
  }

  private boolean onRequest(Nbr from, SeqnoRequest r) {
    long now = clock.nowMillis();
    int d = r.destination();
    if (d < 0 || d >= config.maxRouters()) {
      return false;
    }
    if (d == self) {
      if (r.epoch() == epoch && r.seqno() >= seqno) {
        seqno = r.seqno() + 1;
        markDirty(self);
      } else if (r.epoch() > epoch) {
        seqno++; // cannot be newer than an epoch we never had; refresh anyway
        markDirty(self);
      } else {
        send(from, List.of(selfRoute()));
      }
      return true;
    }
    Dest dd = dests[d];
    if (dd == null) {
      return true;
    }
    if (dd.selected != null && compareSeq(dd.selEpoch, dd.selSeqno, r.epoch(), r.seqno()) > 0) {
      send(from, List.of(advert(dd, from, now)));
      return true;
    }
    if (r.hopCount() <= 1 || !rateOk(dd, now, r.epoch(), r.seqno())) {
      return true;
    }
    Nbr to = null;
    if (dd.selected != null && dd.selected.nbr != from) {
      to = dd.selected.nbr;
    } else {
      int best = INF;
      for (int i = 0; i < dd.count; i++) {
        Entry e = dd.entries[i];
        int c = candidate(e);
        if (e.nbr != from && c < best && !expired(e, now)) {
          best = c;
          to = e.nbr;
        }
      }
    }
    if (to != null) {
      to.face.send(new SeqnoRequest(self, d, r.epoch(), r.seqno(), r.hopCount() - 1));
    }
    return true;
  }

  // ---------------------------------------------------------------- timers

  /** Runs every timer that is due: hellos, dead intervals, full updates, hold-down, the sweep. */
  public void tick() {
    long now = clock.nowMillis();
    if (holdingDown && now >= holdDownUntil) {
      endHoldDown();
    }
    for (Nbr nbr : links.values()) {
      if (nbr.knownEpoch != 0 && now >= nbr.lastHeard + config.deadIntervalMs()) {
        forget(nbr);
      }
      if (now >= nbr.nextHelloAt) {
        sendHello(nbr, now);
      }
      if (nbr.up && now >= nbr.nextUpdateAt) {
        nbr.needFull = true;
      }
    }
    if (now >= nextSweepAt) {
      sweep(now);
      nextSweepAt = now + config.helloIntervalMs();
    }
    finish();
  }

  /** The time at which {@link #tick()} next has work to do. */
  public long nextDeadlineMillis() {
    long t = nextSweepAt;
    if (holdingDown) {
      t = Math.min(t, holdDownUntil);
    }
    for (Nbr nbr : links.values()) {
      t = Math.min(t, nbr.nextHelloAt);
      if (nbr.knownEpoch != 0) {
        t = Math.min(t, nbr.lastHeard + config.deadIntervalMs());
      }
      if (nbr.up) {
        t = Math.min(t, nbr.nextUpdateAt);
      }
    }
    if (pacedCount > 0) {
      t = Math.min(t, pacer.next());
    }
    return t;
  }

  private void sweep(long now) {
    for (Dest dd : dests) {
      if (dd == null) {
        continue;
      }
      boolean removed = false;
      for (int i = dd.count - 1; i >= 0; i--) {
        Entry e = dd.entries[i];
        if (expired(e, now)) {
          changed |= e.via;
          dd.remove(i);
          removed = true;
        }
      }
      int d = dd.destination;
      if (d == self) {
        continue;
      }
      if (removed) {
        select(dd, now);
      }
      if (dd.retracting && now >= dd.retractUntil) {
        dd.retracting = false;
      }
      if (dd.selected == null && dd.hasFd && now >= dd.unreachableSince + config.sourceGcMs()) {
        dd.hasFd = false;
        select(dd, now); // routes that were unfeasible may be selected now
      }
      if (dd.hasFd && !holdingDown) {
        for (int i = 0; i < dd.count; i++) {
          Entry e = dd.entries[i];
          if (e.metric < INF && !feasible(dd, e) && betterThanSelected(dd, e)) {
            request(dd, now, e.nbr);
          }
        }
      }
      if (dd.count == 0
          && dd.selected == null
          && !dd.hasFd
          && !dd.retracting
          && !dd.dirty
          && !dd.paced) {
        dests[d] = null;
      }
    }
  }

  // ---------------------------------------------------------------- queries

  /** True if the adjacency with {@code neighbour} is up. */
  public boolean isUp(int neighbour) {
    Nbr nbr = links.get(neighbour);
    return nbr != null && nbr.up;
  }

  /** The neighbours whose adjacency is up, sorted. */
  public int[] upNeighbours() {
    return links.values().stream().filter(n -> n.up).mapToInt(n -> n.id).toArray();
  }

  /** The next hop towards {@code destination}: self for self, -1 if unreachable. */
  public int nextHop(int destination) {
    if (destination == self) {
      return self;
    }
    Dest dd = dest(destination);
    return dd == null || dd.selected == null ? -1 : dd.selected.nbr.id;
  }

  /** The metric of the selected route to {@code destination}: 0 for self, INFINITY if none. */
  public int metric(int destination) {
    if (destination == self) {
      return 0;
    }
    Dest dd = dest(destination);
    return dd == null || dd.selected == null ? INF : dd.selMetric;
  }

  /** The destinations with a selected route, sorted, self excluded. */
  public int[] reachable() {
    int[] out = new int[dests.length];
    int k = 0;
    for (Dest dd : dests) {
      if (dd != null && dd.selected != null) {
        out[k++] = dd.destination;
      }
    }
    return Arrays.copyOf(out, k);
  }

  /**
   * The up neighbours whose latest route to {@code source} says their selected route goes through
   * this router ({@link Route#viaReceiver()}), sorted: this router's children in the tree of
   * shortest paths towards {@code source}, along which broadcasts from {@code source} travel.
   */
  public int[] children(int source) {
    Dest dd = dest(source);
    if (dd == null) {
      return new int[0];
    }
    int[] out = new int[dd.count];
    int k = 0;
    for (int i = 0; i < dd.count; i++) {
      Entry e = dd.entries[i];
      if (e.via && e.nbr.up) {
        out[k++] = e.nbr.id;
      }
    }
    out = Arrays.copyOf(out, k);
    Arrays.sort(out);
    return out;
  }

  private Dest dest(int d) {
    return d < 0 || d >= dests.length ? null : dests[d];
  }

  // ---------------------------------------------------------------- adjacencies

  private void adjacencyUp(Nbr nbr) {
    long now = clock.nowMillis();
    nbr.up = true;
    nbr.needFull = true;
    nbr.nextUpdateAt = now + config.updateIntervalMs();
    listener.adjacencyUp(nbr.id);
    if (holdingDown && allLinksUp()) {
      endHoldDown();
    }
  }

  private void adjacencyDown(Nbr nbr) {
    long now = clock.nowMillis();
    nbr.up = false;
    nbr.needFull = false;
    for (Dest dd : dests) {
      if (dd == null) {
        continue;
      }
      int i = dd.indexOf(nbr);
      if (i >= 0) {
        changed |= dd.entries[i].via;
        dd.remove(i);
        if (dd.destination != self) {
          select(dd, now);
        }
      }
    }
    listener.adjacencyDown(nbr.id);
  }

  /** Transport lost or dead interval: down, and forget the neighbour's epoch. */
  private void forget(Nbr nbr) {
    if (nbr.up) {
      adjacencyDown(nbr);
    }
    nbr.knownEpoch = 0;
    nbr.lastHeard = Long.MIN_VALUE;
  }

  private boolean allLinksUp() {
    if (links.isEmpty()) {
      return false;
    }
    for (Nbr n : links.values()) {
      if (!n.up) {
        return false;
      }
    }
    return true;
  }

  private void endHoldDown() {
    holdingDown = false;
    reselectAll();
  }

  private void reselectAll() {
    long now = clock.nowMillis();
    for (Dest dd : dests) {
      if (dd != null && dd.destination != self) {
        select(dd, now);
      }
    }
  }

  // ---------------------------------------------------------------- selection

  private static int compareSeq(long e1, int s1, long e2, int s2) {
    int c = Long.compare(e1, e2);
    return c != 0 ? c : Integer.compare(s1, s2);
  }

  private static int candidate(Entry e) {
    if (e.metric >= INF) {
      return INF;
    }
    int c = e.metric + e.nbr.cost;
    return c >= INF ? INF : c;
  }

  private boolean expired(Entry e, long now) {
    return now >= e.refreshedAt + config.routeExpiryMs();
  }

  private static boolean feasible(Dest dd, Entry e) {
    if (e.metric >= INF) {
      return false;
    }
    if (!dd.hasFd) {
      return true;
    }
    int c = compareSeq(e.epoch, e.seqno, dd.fdEpoch, dd.fdSeqno);
    return c > 0 || (c == 0 && e.metric < dd.fdMetric);
  }

  private static boolean betterThanSelected(Dest dd, Entry e) {
    return dd.selected == null || candidate(e) < dd.selMetric;
  }

  /** Re-runs route selection for one destination (not self), and reacts to the change. */
  private void select(Dest dd, long now) {
    Entry best = null;
    int bestCand = INF;
    if (!holdingDown) {
      for (int i = 0; i < dd.count; i++) {
        Entry e = dd.entries[i];
        int c = candidate(e);
        if (c >= INF || expired(e, now) || !feasible(dd, e)) {
          continue;
        }
        if (best == null || c < bestCand || (c == bestCand && e.nbr.id < best.nbr.id)) {
          best = e;
          bestCand = c;
        }
      }
    }
    Entry old = dd.selected;
    if (best == null) {
      if (old == null) {
        return;
      }
      dd.selected = null;
      dd.retracting = true;
      dd.retractUntil = now + config.routeExpiryMs();
      dd.unreachableSince = now;
      changed = true;
      markDirty(dd.destination);
      request(dd, now, null);
      return;
    }
    // FD moves to the selected route before anything is advertised.
    int c = dd.hasFd ? compareSeq(best.epoch, best.seqno, dd.fdEpoch, dd.fdSeqno) : 1;
    if (c > 0 || (c == 0 && bestCand < dd.fdMetric)) {
      dd.hasFd = true;
      dd.fdEpoch = best.epoch;
      dd.fdSeqno = best.seqno;
      dd.fdMetric = bestCand;
    }
    boolean routeChanged = old != best || dd.selMetric != bestCand;
    boolean seqChanged = dd.selEpoch != best.epoch || dd.selSeqno != best.seqno;
    dd.selected = best;
    dd.selMetric = bestCand;
    dd.selEpoch = best.epoch;
    dd.selSeqno = best.seqno;
    dd.retracting = false;
    if (old == null || routeChanged) {
      changed = true;
    }
    if (old == null || routeChanged || seqChanged) {
      markDirty(dd.destination);
    }
  }

  // ---------------------------------------------------------------- seqno requests

  private boolean rateOk(Dest dd, long now, long reqEpoch, int reqSeqno) {
    if (dd.requestedAt != Long.MIN_VALUE
        && now < dd.requestedAt + config.helloIntervalMs()
        && compareSeq(dd.reqEpoch, dd.reqSeqno, reqEpoch, reqSeqno) >= 0) {
      return false;
    }
    dd.requestedAt = now;
    dd.reqEpoch = reqEpoch;
    dd.reqSeqno = reqSeqno;
    return true;
  }

  /** Asks for a route to dd newer than its FD: from {@code to}, or every up neighbour if null. */
  private void request(Dest dd, long now, Nbr to) {
    if (!dd.hasFd || holdingDown || !rateOk(dd, now, dd.fdEpoch, dd.fdSeqno)) {
      return;
    }
    SeqnoRequest r =
        new SeqnoRequest(self, dd.destination, dd.fdEpoch, dd.fdSeqno, config.seqnoRequestHops());
    if (to != null) {
      to.face.send(r);
      return;
    }
    for (Nbr n : links.values()) {
      if (n.up) {
        n.face.send(r);
      }
    }
  }

  // ---------------------------------------------------------------- output

  private void sendHello(Nbr nbr, long now) {
    nbr.face.send(new Hello(self, epoch, nbr.knownEpoch));
    nbr.nextHelloAt = now + config.helloIntervalMs();
  }

  private Route selfRoute() {
    return new Route(self, epoch, seqno, 0, false);
  }

  /** What this router tells {@code to} about dd, or null if nothing. */
  private Route advert(Dest dd, Nbr to, long now) {
    if (dd.destination == self) {
      return selfRoute();
    }
    if (dd.selected != null) {
      boolean via = dd.selected.nbr == to;
      return new Route(dd.destination, dd.selEpoch, dd.selSeqno, via ? INF : dd.selMetric, via);
    }
    if (dd.retracting && now < dd.retractUntil) {
      return new Route(dd.destination, dd.selEpoch, dd.selSeqno, INF, false);
    }
    return null;
  }

  private void send(Nbr to, List<Route> routes) {
    if (!routes.isEmpty()) {
      to.face.send(new RouteUpdate(self, routes));
    }
  }

  private void markDirty(int d) {
    Dest dd = dests[d];
    if (!dd.dirty) {
      dd.dirty = true;
      dirty[dirtyCount++] = d;
    }
  }

  /**
   * Whether a change of dd goes out at once rather than with the next paced flush: a route that
   * became unreachable (its retraction), and a newer sequence number than the one last advertised
   * (an answer to a sequence-number request, which routers without a feasible route wait for).
   * Better or worse metrics, new next hops and first routes are paced.
   */
  private boolean urgent(Dest dd) {
    if (config.updatePacingMs() == 0) {
      return true;
    }
    long e;
    int s;
    if (dd.destination == self) {
      e = epoch;
      s = seqno;
    } else if (dd.selected == null) {
      return true;
    } else {
      e = dd.selEpoch;
      s = dd.selSeqno;
    }
    return dd.hasAdv && compareSeq(e, s, dd.advEpoch, dd.advSeqno) > 0;
  }

  /**
   * Ends every public mutator: sends the urgent changes at once and the others paced (at most one
   * paced flush per {@link RoutingConfig#updatePacingMs()}: a burst of changes, such as a cold
   * start where each router learns the network a few destinations at a time, goes out in a few
   * batched updates instead of one per change), and tells the listener.
   */
  private void finish() {
    long now = clock.nowMillis();
    int urgentCount = 0;
    for (int i = 0; i < dirtyCount; i++) {
      Dest dd = dests[dirty[i]];
      if (dd == null) {
        continue;
      }
      if (urgent(dd)) {
        dirty[urgentCount++] = dd.destination; // dd.dirty stays set until the end: in this update
      } else {
        dd.dirty = false;
        if (!dd.paced) {
          dd.paced = true;
          paced[pacedCount++] = dd.destination;
        }
      }
    }
    dirtyCount = 0;
    boolean flush = pacedCount > 0 && pacer.due(now);
    for (Nbr nbr : links.values()) {
      if (!nbr.up) {
        continue;
      }
      List<Route> routes = new ArrayList<>();
      if (nbr.needFull) {
        nbr.needFull = false;
        nbr.nextUpdateAt = now + config.updateIntervalMs();
        for (Dest dd : dests) {
          if (dd != null) {
            addAdvert(routes, dd, nbr, now);
          }
        }
      } else {
        for (int i = 0; i < urgentCount; i++) {
          addAdvert(routes, dests[dirty[i]], nbr, now);
        }
        if (flush) {
          for (int i = 0; i < pacedCount; i++) {
            Dest dd = dests[paced[i]];
            if (dd != null && !dd.dirty) { // not sent as urgent just above
              addAdvert(routes, dd, nbr, now);
            }
          }
        }
      }
      send(nbr, routes);
    }
    for (int i = 0; i < urgentCount; i++) {
      dests[dirty[i]].dirty = false;
    }
    if (flush) {
      for (int i = 0; i < pacedCount; i++) {
        Dest dd = dests[paced[i]];
        if (dd != null) {
          dd.paced = false;
        }
      }
      pacedCount = 0;
      pacer.sent(now);
    }
    if (changed) {
      changed = false;
      version++;
      listener.routesChanged();
    }
  }

  private void addAdvert(List<Route> routes, Dest dd, Nbr nbr, long now) {
    Route r = advert(dd, nbr, now);
    if (r != null) {
      routes.add(r);
      dd.hasAdv = true;
      dd.advEpoch = r.epoch();
      dd.advSeqno = r.seqno();
    }
  }

  // ---------------------------------------------------------------- state records

  /** A configured neighbour. */
  private static final class Nbr {
    final int id;
    Face face;
    int cost;
    long knownEpoch; // 0: not heard (or forgotten)
    long lastHeard = Long.MIN_VALUE;
    boolean up;
    boolean needFull;
    long nextHelloAt;
    long nextUpdateAt;

    Nbr(int id, Face face, int cost) {
      this.id = id;
      this.face = face;
      this.cost = cost;
    }
  }

  /** The latest route to one destination heard from one up neighbour. */
  private static final class Entry {
    final Nbr nbr;
    long epoch;
    int seqno;
    int metric;
    boolean via;
    long refreshedAt;

    Entry(Nbr nbr) {
      this.nbr = nbr;
    }
  }

  /** Everything known about one destination. */
  private static final class Dest {
    final int destination;
    Entry[] entries = new Entry[2];
    int count;

    Entry selected; // null: unreachable
    int selMetric = INF;
    long selEpoch; // also the seq of a retraction
    int selSeqno;

    boolean hasFd;
    long fdEpoch;
    int fdSeqno;
    int fdMetric;
    long unreachableSince;

    boolean retracting;
    long retractUntil;

    long requestedAt = Long.MIN_VALUE;
    long reqEpoch;
    int reqSeqno;

    boolean dirty;
    boolean paced; // in the paced list

    boolean hasAdv; // some update has carried a route to it: of (advEpoch, advSeqno)
    long advEpoch;
    int advSeqno;

    Dest(int destination) {
      this.destination = destination;
    }

    int indexOf(Nbr nbr) {
      for (int i = 0; i < count; i++) {
        if (entries[i].nbr == nbr) {
          return i;
        }
      }
      return -1;
    }

    Entry find(Nbr nbr) {
      int i = indexOf(nbr);
      return i < 0 ? null : entries[i];
    }

    Entry add(Nbr nbr) {
      if (count == entries.length) {
        entries = Arrays.copyOf(entries, count * 2);
      }
      Entry e = new Entry(nbr);
      entries[count++] = e;
      return e;
    }

    void remove(int i) {
      entries[i] = entries[--count];
      entries[count] = null;
      // selected may still point at e: the caller re-selects, which sees the loss
    }
  }
}
