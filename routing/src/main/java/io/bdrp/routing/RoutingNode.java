package io.bdrp.routing;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateBatch;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The routing state of one router: UNICAST ({@link DistanceVector}), PREDICATES ({@link
 * PredicateTable}) and LOCAL-PREDICATES ({@link LocalPredicates}), wired together, and the {@link
 * RouteSnapshot} that the forwarding path reads.
 *
 * <p>The wiring: a new adjacency triggers the full exchange of advertisements; a change of the
 * hosts' aggregate re-advertises it; PREDICATES reads UNICAST to expire unreachable origins and to
 * ask for missing advertisements; any change of routes or predicates makes the next {@link
 * #snapshot()} a new one.
 *
 * <p>Owned by one thread (the router's control thread, or the simulator), which makes every call.
 * The driver delivers control messages with {@link #receive}, link events with {@link #addLink},
 * {@link #linkDown} and {@link #removeLink}, and calls {@link #tick()} at {@link
 * #nextDeadlineMillis()}.
 */
public final class RoutingNode {
  private final int self;
  private final RoutingConfig config;
  private final DistanceVector dv;
  private final PredicateTable predicates;
  private final LocalPredicates local;
  private final Map<Integer, Face> faces = new HashMap<>();
  private RouteSnapshot snapshot;
  private long builtRoutes = -1;
  private long builtPredicates = -1;
  private ForwardingTable table;
  private LongSupplier wallMillis; // null: epochs are not checked against a clock
  private long futureEpochs;

  private OriginAuthority authority = OriginAuthority.NONE;

  /** The certificate chain held per origin, this router's own included (only with an authority). */
  private final Map<Integer, byte[]> certificates = new HashMap<>();

  /** Neighbours with an adjacency up, to which certificates are flooded. */
  private final java.util.TreeSet<Integer> up = new java.util.TreeSet<>();

  /** When the first adjacency came up (routing clock), or -1. */
  private long firstAdjacencyAt = -1;

  private long certificatesRefused;

  public RoutingNode(
      int self, long epoch, RoutingConfig config, BloomParameters params, Clock clock) {
    if (self < 0 || self >= config.maxRouters()) {
      throw new IllegalArgumentException(
          "router number " + self + " outside 0.." + (config.maxRouters() - 1) + " (maxRouters)");
    }
    this.self = self;
    this.config = config;
    this.local = new LocalPredicates(params);
    this.predicates = new PredicateTable(self, epoch, params, config, clock, () -> {});
    DistanceVector unicast =
        new DistanceVector(
            self,
            epoch,
            config,
            clock,
            new DistanceVector.Listener() {
              @Override
              public void adjacencyUp(int neighbour) {
                Face f = faces.get(neighbour);
                if (f != null) {
                  up.add(neighbour);
                  if (firstAdjacencyAt < 0) {
                    firstAdjacencyAt = clock.nowMillis();
                  }
                  // Certificates first: what follows is signed with them.
                  for (Map.Entry<Integer, byte[]> c :
                      new java.util.TreeMap<>(certificates).entrySet()) {
                    if (c.getKey() != neighbour) { // not the neighbour's own
                      f.send(new ControlMessage.RouterCert(self, c.getKey(), c.getValue()));
                    }
                  }
                  predicates.adjacencyUp(f);
                }
              }

              @Override
              public void adjacencyDown(int neighbour) {
                up.remove(neighbour);
                predicates.adjacencyDown(neighbour);
              }

              @Override
              public void routesChanged() {
                // snapshot() sees the new version; PREDICATES looks at routes on its own timer.
              }
            });
    this.dv = unicast;
    predicates.useRoutes(unicast::nextHop, unicast::reachable, unicast::version);
  }

  /** This router's number. */
  public int self() {
    return self;
  }

  /** The configuration. */
  public RoutingConfig config() {
    return config;
  }

  /** UNICAST. */
  public DistanceVector unicast() {
    return dv;
  }

  /** PREDICATES. */
  public PredicateTable predicates() {
    return predicates;
  }

  /** LOCAL-PREDICATES. */
  public LocalPredicates local() {
    return local;
  }

  /** A configured link to a neighbour, at {@code cost}. */
  public void addLink(Face face, int cost) {
    faces.put(face.neighbour(), face);
    dv.addLink(face, cost);
  }

  /** Whether any link is configured. */
  public boolean hasLinks() {
    return !faces.isEmpty();
  }

  /** When this router's first adjacency came up, on the routing clock, or -1 if none has. */
  public long firstAdjacencyMillis() {
    return firstAdjacencyAt;
  }

  /** The link to {@code neighbour} is no longer configured. */
  public void removeLink(int neighbour) {
    dv.removeLink(neighbour);
    faces.remove(neighbour);
  }

  /** The transport to {@code neighbour} broke; the link stays configured. */
  public void linkDown(int neighbour) {
    dv.linkDown(neighbour);
  }

  /**
   * Something arrived from {@code neighbour} on its session: it is alive (see {@link
   * DistanceVector#heard}).
   */
  public void heard(int neighbour) {
    dv.heard(neighbour);
  }

  /**
   * Epochs are wall-clock milliseconds at start: from now on, a control message naming an epoch
   * more than {@link RoutingConfig#maxEpochAheadMs()} ahead of {@code wallMillis} is refused and
   * counted ({@link #futureEpochs()}). Without it (the simulator, whose epochs are counters), no
   * epoch is refused.
   */
  public void useWallClock(LongSupplier wallMillis) {
    this.wallMillis = wallMillis;
  }

  /** Control messages refused because they named an epoch too far ahead of the wall clock. */
  public long futureEpochs() {
    return futureEpochs;
  }

  /**
   * Signs this router's claims with {@code a} and verifies every other origin's before use (see
   * {@link OriginAuthority}; {@link OriginAuthority#NONE}, the default, signs and checks nothing).
   * This router's certificate ({@link OriginAuthority#ownCertificate()}) goes to each neighbour
   * when its adjacency comes up, ahead of the routes and advertisements it signs, and the
   * certificates of other routers ({@link ControlMessage.RouterCert}) are flooded: each one the
   * authority takes as new is passed on to every other neighbour. Set before any link is added.
   */
  public void useAuthority(OriginAuthority a) {
    authority = java.util.Objects.requireNonNull(a, "authority");
    dv.useAuthority(a);
    predicates.useAuthority(a);
    certificates.clear();
    byte[] own = a.enabled() ? a.ownCertificate() : null;
    if (own != null) {
      certificates.put(self, own);
    }
  }

  /** The authority in use. */
  public OriginAuthority authority() {
    return authority;
  }

  /**
   * This router's certificate was renewed: the new one is flooded, and the route to itself and its
   * advertisement go out again under new sequence numbers signed with the new key.
   */
  public void certificateRenewed() {
    byte[] own = authority.ownCertificate();
    if (!authority.enabled() || own == null) {
      return;
    }
    certificates.put(self, own);
    floodCertificate(self, own, -1);
    dv.resign();
    predicates.resign();
  }

  /** Certificates held, this router's own included. */
  public int certificatesHeld() {
    return certificates.size();
  }

  /** Certificates refused: not valid for the origin they came for, or not asked for. */
  public long certificatesRefused() {
    return certificatesRefused;
  }

  /** Claims refused for their signature, routes and advertisements together. */
  public long claimsRefused() {
    return dv.claimsRefused() + predicates.claimsRefused();
  }

  private void floodCertificate(int origin, byte[] chain, int except) {
    for (int n : up) {
      Face f = faces.get(n);
      if (n != except && f != null) {
        f.send(new ControlMessage.RouterCert(self, origin, chain));
      }
    }
  }

  private void receive(ControlMessage.RouterCert c) {
    int origin = c.origin();
    if (!authority.enabled() || origin == self || origin < 0 || origin >= config.maxRouters()) {
      return; // nothing to verify with; or this router's own, which it knows
    }
    byte[] chain = c.chain();
    switch (authority.offerCertificate(origin, chain)) {
      case NEW -> {
        certificates.put(origin, chain);
        floodCertificate(origin, chain, c.sender());
        predicates.certificateArrived(origin);
      }
      case KNOWN -> {}
      case BAD -> {
        certificatesRefused++;
        authority.refused(
            OriginAuthority.ClaimKind.CERTIFICATE,
            origin,
            c.sender(),
            OriginAuthority.Verdict.BAD_SIGNATURE);
      }
    }
  }

  /**
   * Handles a control message from a neighbour.
   *
   * @return false if it was refused for naming an epoch too far ahead of the wall clock
   */
  public boolean receive(ControlMessage m) {
    if (wallMillis != null && tooFarAhead(m, wallMillis.getAsLong() + config.maxEpochAheadMs())) {
      futureEpochs++;
      return false;
    }
    switch (m) {
      case Hello h -> dv.receive(h);
      case RouteUpdate u -> dv.receive(u);
      case SeqnoRequest r -> dv.receive(r);
      case ControlMessage.RouteDigest g -> dv.receive(g);
      case ControlMessage.TableRequest t -> dv.receive(t);
      case PredicateAd a -> predicates.receive(a);
      case ControlMessage.PredicateDelta d -> predicates.receive(d);
      case PredicateBatch b -> {
        for (ControlMessage.Advertisement a : b.ads()) {
          switch (a) {
            case PredicateAd ad -> predicates.receive(ad);
            case ControlMessage.PredicateDelta d -> predicates.receive(d);
          }
        }
      }
      case PredicateRequest r -> predicates.receive(r);
      case ControlMessage.RouterCert c -> receive(c);
    }
    return true;
  }

  private static boolean tooFarAhead(ControlMessage m, long ceiling) {
    return switch (m) {
      case Hello h -> h.epoch() > ceiling;
      case RouteUpdate u -> {
        for (ControlMessage.Route r : u.routes()) {
          if (r.epoch() > ceiling) {
            yield true;
          }
        }
        yield false;
      }
      case SeqnoRequest r -> r.epoch() > ceiling;
      case ControlMessage.RouteDigest g -> false;
      case ControlMessage.TableRequest t -> false;
      case ControlMessage.Advertisement a -> a.epoch() > ceiling;
      case PredicateBatch b -> {
        for (ControlMessage.Advertisement a : b.ads()) {
          if (a.epoch() > ceiling) {
            yield true;
          }
        }
        yield false;
      }
      case PredicateRequest r -> false;
      case ControlMessage.RouterCert c -> false;
    };
  }

  /** Runs due timers. */
  public void tick() {
    dv.tick();
    predicates.tick();
  }

  /** When {@link #tick()} next has work. */
  public long nextDeadlineMillis() {
    return Math.min(dv.nextDeadlineMillis(), predicates.nextDeadlineMillis());
  }

  /**
   * Sets the predicate of a local host ({@link Predicate#NONE} removes it); re-advertises the
   * router's aggregate if it changed.
   *
   * <p>An aggregate that exceeds a per-origin bound ({@link RoutingConfig#maxOriginFilters()},
   * {@link RoutingConfig#maxOriginFilterBytes()}) or could not be advertised in one frame ({@link
   * RoutingConfig#maxControlFrameBytes()}) is not taken: the host keeps the predicate it had (none,
   * if it had none), the aggregate advertised stays, the refusal is counted ({@link
   * PredicateTable#ownRefused()}) and returned, and the caller answers the host with an error
   * carrying {@link PredicateTable.Refusal#message()}. (Removing a predicate is never refused.)
   *
   * @return null when the predicate is in force, else why it was refused
   */
  public PredicateTable.Refusal setHost(int host, Predicate p) {
    return setHost(host, p, null);
  }

  /**
   * {@link #setHost(int, Predicate)} with the predicate's encoding made beforehand, off the thread
   * that owns this node (see {@link LocalPredicates#set(int, Predicate, EncodedPredicate)}); null:
   * encoded here.
   */
  public PredicateTable.Refusal setHost(int host, Predicate p, EncodedPredicate encoded) {
    Predicate held = local.predicate(host);
    Predicate before = held == null ? Predicate.NONE : held; // null for an unknown host
    if (!(encoded == null ? local.set(host, p) : local.set(host, p, encoded))) {
      return null;
    }
    PredicateTable.Refusal r = predicates.setOwn(local.aggregate());
    if (r != null && !p.equals(Predicate.NONE)) {
      local.set(host, before); // NONE removes it again
      return r;
    }
    return null;
  }

  /**
   * For a router that keeps its aggregate on another thread ({@link LocalAggregate}): sets the
   * predicate {@code host} is matched with here ({@link Predicate#NONE} removes it), without
   * touching the aggregate; {@link #setAggregate} then advertises what that thread made of it.
   */
  public void setHostMatch(int host, Predicate p) {
    local.setMatch(host, p);
  }

  /**
   * For a router that keeps its aggregate on another thread: advertises {@code aggregate} as this
   * router's, unless it breaks a bound of PREDICATES (then the advertised one stays, and the
   * refusal says why).
   */
  public PredicateTable.Refusal setAggregate(EncodedPredicate aggregate) {
    return predicates.setOwn(aggregate);
  }

  /**
   * Removes a local host. Its predicate goes at once from local matching; should the aggregate of
   * the remaining hosts exceed a bound (removing a filter that covered others exposes them), the
   * aggregate advertised stays (it matches every message the new one would: safe, with more false
   * positives) until a change that fits, and the refusal is counted ({@link
   * PredicateTable#ownRefused()}).
   */
  public void removeHost(int host) {
    if (local.remove(host)) {
      predicates.setOwn(local.aggregate());
    }
  }

  /**
   * The current snapshot for the forwarding path, UNICAST and PREDICATES; a new object only after a
   * change. Building the PREDICATES index costs a pass over every router's filters, so routers that
   * only relay read {@link #routes()} instead.
   */
  public RouteSnapshot snapshot() {
    ForwardingTable t = routes();
    long p = predicates.version();
    if (snapshot == null || snapshot.routes() != t || p != builtPredicates) {
      // While an index is built elsewhere, the one built last stands in (see
      // PredicateTable#buildIndexWith); the snapshot follows each index as it is installed.
      io.bdrp.encoding.bloom.EncodedIndex index = predicates.index();
      if (snapshot == null || snapshot.routes() != t || snapshot.predicates() != index) {
        snapshot = new RouteSnapshot(t, index);
      }
      if (predicates.indexReady()) {
        builtPredicates = p;
      }
    }
    return snapshot;
  }

  /** The current UNICAST snapshot, all that transit forwarding needs. */
  public ForwardingTable routes() {
    long r = dv.version();
    if (table == null || r != builtRoutes) {
      table = null; // not two tables at once while the new one is built
      snapshot = null; // nor the previous one kept by the snapshot: snapshot() makes a new one
      table = buildTable();
      builtRoutes = r;
    }
    return table;
  }

  private ForwardingTable buildTable() {
    int n = config.maxRouters();
    int[] hops = new int[n];
    int[][] kids = new int[n][];
    java.util.Arrays.fill(hops, -1);
    for (int r : dv.reachable()) {
      hops[r] = dv.nextHop(r);
      kids[r] = dv.children(r);
    }
    kids[self] = dv.children(self);
    return ForwardingTable.of(self, n, hops, kids, dv.formerParents());
  }
}
