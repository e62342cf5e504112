package io.bdrp.routing;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteDigest;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import io.bdrp.routing.ControlMessage.TableRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.agrona.collections.Long2LongHashMap;

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
 * Every router originates a route to itself at metric 0 with sequence number (epoch, seqno), which
 * starts at (its incarnation's epoch, 0); sequence numbers compare by epoch first, then seqno, and
 * a larger one is <em>newer</em>. A route to d advertised by neighbour n as (seq, m) gives the
 * candidate metric {@code m + cost(n)} (INFINITY if m is INFINITY or the sum reaches it), where
 * cost(n) is this router's configured cost of the link.
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
 * updateIntervalMs} (less a jitter of up to a quarter of it) it sends each up neighbour its full
 * table. Split horizon with poisoned reverse: the route to d sent to the neighbour that is the next
 * hop for d carries metric INFINITY and {@code viaReceiver = true}, which also tells that neighbour
 * it is our parent in the tree of shortest paths towards d ({@link #children}). A destination that
 * becomes unreachable is advertised as a retraction (INFINITY with its last seq) for {@code
 * routeExpiryMs}, then no longer mentioned. A route not refreshed for {@code routeExpiryMs}
 * expires.
 *
 * <p>A periodic full update that would tell the neighbour nothing new goes as a {@link RouteDigest}
 * (a count and a sum of hashes of the routes it would carry) to a neighbour that takes them ({@link
 * #acceptsDigests}): when no retraction is among its routes, every route's seq has been advertised,
 * every finite route has been offered to that neighbour and every infinite one not (sending it
 * again would start no tentative child), no change waits to be sent, and routes are not signed. The
 * receiver compares it with the same over the routes it holds from the sender, retractions left out
 * (the sender may have stopped mentioning them): when they agree it refreshes those routes, as a
 * full update of the same routes would; otherwise it sends a {@link TableRequest}, which the sender
 * answers with its full table, at most one per hello interval. The full update that follows an
 * adjacency coming up is always whole. Each side keeps the last digest it computed (the sender of
 * what it would send, the receiver of what it holds from that neighbour) while nothing it covers
 * has changed. So a quiet network's periodic update costs a few bytes on the link, nothing more on
 * the sender and one pass over the neighbour's entries on the receiver (to refresh them), not a
 * list of every route built, sent and taken in.
 *
 * <h2>Broadcast trees while routes change</h2>
 *
 * A router sends a broadcast from source d to its children for d: the neighbours whose latest route
 * to d says {@code viaReceiver}. When neighbour n changes its next hop for d from p to q, it takes
 * broadcasts from q at once, but q learns that it is n's parent only from n's next update (paced:
 * up to {@code updatePacingMs} later, plus the link), and p stops sending to n when it learns the
 * same. Without more, the broadcasts of that window reach neither n nor the routers below it, and
 * nothing counts them. So the change is made before it is broken: n still takes d's broadcasts from
 * p for {@code updatePacingMs + 2 * helloIntervalMs} after the change ({@link #formerParents}), and
 * p, once it hears that n no longer goes through it, still sends them to n for a hello interval
 * ({@link #children}); q starts as soon as it hears. Copies that come twice meanwhile are the
 * receiver's duplicates ({@link DataPlane.Drop#DUPLICATE}), not deliveries.
 *
 * <p>A router that changes again before its first former parent stops sending (p, then q, then r
 * within the grace) takes copies from every former next hop still in its grace.
 *
 * <p>A router n that had no route to d before (it just started, or d just became reachable: a
 * partition healed) has no former parent, so the sender makes before breaking. A neighbour whose
 * latest word about d is that it has no route (a retraction, or nothing yet since the adjacency
 * came up: its table may be on its way) and that holds a finite route to d offered by this router
 * is a <em>tentative child</em> of d: it is sent d's broadcasts from the offer (or from its "no
 * route", if that came after the offer). That ends when it says anything else about d: "through
 * you" makes it a child; a route through another neighbour keeps it a child for {@code
 * updatePacingMs + 2 * helloIntervalMs} more, since that word may have crossed the offer, which n
 * then took; and if it says nothing, after {@code deadIntervalMs + updatePacingMs + 2 *
 * helloIntervalMs} (a router that just started selects no route during its hold-down, which ends at
 * most {@code deadIntervalMs + helloIntervalMs} after it started, before the offer; then its paced
 * update crosses the link). n takes the copies once the offering router is its next hop: every
 * broadcast that its source sends after n selected the route reaches it, since a copy can reach the
 * offering router only after the offer went out. Copies that come before n selects the route are
 * counted ({@link DataPlane.Drop#UNKNOWN_SOURCE}), as are those of an offer n did not take ({@link
 * DataPlane.Drop#NOT_ON_TREE}); after an adjacency comes up that is about a round trip plus a grace
 * of every offered source's broadcasts. A neighbour is made a tentative child once per offer and
 * once per "no route" it says, not by every periodic update: one that cannot take the offer
 * (unfeasible there) costs one grace of copies, not a stream. Not covered: a router whose next hop
 * loses its route and that moves straight to another neighbour, without saying "no route" first;
 * that neighbour starts when it hears (see docs/reliability.md).
 *
 * <h2>Sequence-number requests</h2>
 *
 * FD makes a router refuse routes that are worse than what it once advertised at the same seq, so
 * after a failure the only remaining routes may be unfeasible. The router then sends {@code
 * SeqnoRequest(self, d, FD.epoch, FD.seqno, seqnoRequestHops)}, asking for a route newer than FD:
 * to every up neighbour when it loses its selected route, and to the neighbour offering an
 * unfeasible route that would be better than the selected one (or than none). A router that
 * receives a request for itself whose sequence number is not older than its own moves its own past
 * it (below) and sends a triggered update; otherwise it answers the requester with its own route. A
 * router whose selected route is already newer than the request answers the requester with that
 * route; otherwise, while hops remain, it forwards the request towards d (its next hop, else the
 * neighbour offering the best unfeasible route), never back to the requester. A router sends or
 * forwards at most one request per destination and requested seq per hello interval, and repeats
 * its own requests at most once per hello interval while the condition lasts.
 *
 * <h2>Claims about itself</h2>
 *
 * A route to this router (in any update, a retraction too) or a request for a route to it that
 * names a sequence number newer than the one it originates is a claim it never made: a forged
 * route, a previous life whose epoch was ahead of this one's (a clock stepped back), a
 * misconfigured twin. Routers that believed the claim hold an FD at that sequence number and would
 * refuse every route the real router originates below it until the FD is forgotten ({@code
 * sourceGcMs} after the claim's routes vanish). So the router moves its own sequence number past
 * the claim, to the claim's successor (below), and sends the change at once as an urgent update:
 * its route is then the newest everywhere and replaces the claim within one update per hop, and
 * routers left with an FD at the claim's sequence number ask for, and get, a newer route. The epoch
 * of the route to itself ({@link #routeEpoch()}) may so move ahead of its incarnation's epoch; its
 * hellos keep the incarnation's, which is what its neighbours' adjacencies know it by. A router
 * moves past claims at most once per {@code helloIntervalMs}: a claim heard sooner is moved past a
 * hello interval after the previous one (the newest of those heard meanwhile), so a neighbour that
 * sends one claim after another cannot make it flood the network with a triggered update for each
 * ({@link #claimsOvertaken()} counts the claims that were newer than its own). How far ahead of the
 * wall clock a claim's epoch may be is bounded by the {@link RoutingNode}.
 *
 * <h2>Signed claims</h2>
 *
 * With an {@link OriginAuthority} that signs (routers with mutual TLS), a route's sequence number
 * is its destination's claim: the destination signs (destination, epoch, seqno) of its route to
 * itself once per sequence number, and every router passes that signature on with the routes it
 * advertises for the destination (the metric, which changes at each hop, is not signed). A route
 * whose signature the authority does not confirm (missing, bad, or of a destination whose
 * certificate is not held yet: the next periodic update brings it again) is dropped and counted
 * ({@link #claimsRefused()}); a retraction is the neighbour's own word about its path and is taken
 * all the same, but at the sequence number held from that neighbour, not the one it names. So no
 * neighbour can make a destination's sequence number move, or a router move past a claim about
 * itself, that the destination did not sign. A full update longer than the frame limit is cut into
 * several.
 *
 * <h2>Sequence-number arithmetic</h2>
 *
 * Sequence numbers are pairs (epoch: signed 64 bits, seqno: signed 32 bits) compared
 * lexicographically as signed integers ({@link #compareSeq}): a total order, so the feasibility
 * argument above holds whatever a neighbour sends, and never modular (RFC 8966 compares 16-bit
 * seqnos modulo 2^16, which a neighbour naming a seqno half the range ahead could turn around).
 * Nothing ever increments a seqno in place: the successor of (e, s) is (e, s + 1) when s is below
 * 2^31 - 1 and (e + 1, 0) when s is 2^31 - 1, so a request or a claim naming the largest seqno
 * moves the router into the next epoch instead of overflowing to a negative, older seqno. (The pair
 * (2^63 - 1, 2^31 - 1) has no successor; a router moves past nothing beyond it. With a wall clock
 * the {@link RoutingNode} refuses such epochs long before.) Negative seqnos on the wire are simply
 * older than 0.
 *
 * <h2>Timers</h2>
 *
 * {@link #tick()} runs: hellos every {@code helloIntervalMs} per link; the dead interval of each
 * heard neighbour; a full update every {@code updateIntervalMs} per up neighbour; the end of the
 * start-up hold-down; the move past a claim held back by the limit of one per hello interval; and,
 * every {@code helloIntervalMs}, a sweep over the table that removes routes not refreshed for
 * {@code routeExpiryMs}, ends retractions, forgets FDs {@code sourceGcMs} after their destination
 * became unreachable, and repeats pending sequence-number requests (it skips the table when none of
 * these can be due, as in a quiet network). Route expiry is also checked on every selection, so it
 * is exact; the sweep only notices it at most one hello interval late.
 *
 * <p>Control state is held in primitive arrays by router number: one record per destination
 * (selection, FD, last advertised seq) and one entry per (destination, neighbour), at {@code
 * destination * slots + slot} where each configured neighbour has a slot. There are no objects per
 * route, so the table of a router in a network of 10,000 routers is a few megabytes and selection
 * reads one contiguous run of entries. The state of a destination is cleared when it has neither
 * routes, nor FD, nor retraction; the rarely used fields (retraction and request timers) live in a
 * small map only while they matter. It grows with routers times neighbours, never with time.
 * Processing a route costs O(neighbours); building a full update or a digest O(maxRouters).
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

  /** The size of the lists of changed destinations between bursts. */
  private static final int SMALL = 16;

  // Flags of a destination.
  private static final int KNOWN = 1; // has state
  private static final int HAS_FD = 2;
  private static final int RETRACTING = 4;
  private static final int DIRTY = 8; // in the dirty list
  private static final int PACED = 16; // in the paced list
  private static final int ADVERTISED = 32; // some update has carried a route to it
  // The selected seq is newer than the one the last update carried. The selected seq never goes
  // back while an FD exists (a selected route is feasible: not older than FD, which holds the
  // newest seq ever selected), so one bit set when it moves forward tells what comparing it with
  // the seq last advertised would.
  private static final int SEQ_UNSENT = 64;
  // The selected route's and the feasibility distance's seqs (epochs and seqnos) are their own, in
  // selEpochs, selSeqnos, fdEpochs and fdSeqnos, not both the destination's common one (dEpoch,
  // dSeqno).
  private static final int SEQS_APART = 128;

  // Flags of an entry.
  private static final int PRESENT = 1;
  private static final int VIA = 2;
  // This router's last update to the neighbour carried a finite route to the destination (since the
  // adjacency came up): the neighbour knows a route through it.
  private static final int OFFERED = 4;
  // A tentative child (see "Broadcast trees while routes change"): the neighbour said it has no
  // route, was offered one, and is sent the broadcasts until it answers or its eTentative +
  // grace.
  private static final int TENTATIVE = 8;
  // The entry's seq (epoch and seqno) is its own, in entryEpochs and entrySeqnos, not the
  // destination's common one (dEpoch, dSeqno).
  private static final int OWN_SEQ = 16;
  // Make before break (see "Broadcast trees while routes change"): the neighbour stopped choosing
  // this router for the destination and is still sent its broadcasts until eChildUntil; it was
  // this router's next hop, and broadcasts from the destination are still taken from it until
  // eParentUntil.
  private static final int FORMER_CHILD = 32;
  private static final int FORMER_PARENT = 64;

  private final int self;
  private final long epoch;
  private final RoutingConfig config;
  private final Clock clock;
  private final Listener listener;
  private final int maxRouters;

  // The sequence number of the route to itself: (ownEpoch, seqno). ownEpoch starts at the
  // incarnation's epoch and only moves past claims about this router (see "Claims about itself").
  private long ownEpoch;
  private int seqno;
  // A claim heard within a hello interval of the last move past one: moved past at pendingAt.
  private boolean claimPending;
  private long claimEpoch;
  private int claimSeqno;
  private long lastMovedAt = Long.MIN_VALUE;
  private long claimsOvertaken;
  private final TreeMap<Integer, Nbr> links = new TreeMap<>();

  // Per destination, by router number.
  private final byte[] flags;
  private final short[] selSlot; // slot of the selected route; -1: unreachable
  private final char[] selMetric;
  private final char[] fdMetric;

  /** Retraction and request timers of the destinations that have one running. */
  private HashMap<Integer, Timers> timers = new HashMap<>();

  // Make-before-break of the broadcast trees (see "Broadcast trees while routes change"), by entry
  // (destination * slots + slot) with FORMER_CHILD or FORMER_PARENT: until when a neighbour that
  // stopped choosing this router is still sent broadcasts, and until when broadcasts are still
  // taken from a former next hop (every former one within its grace: a router may change twice
  // before the first former one stops sending). In units of 2^graceShift ms, low 16 bits, compared
  // by difference (the unit keeps the graces below a quarter of the wrap, and the sweep ends each
  // at its time). Dense, like eTentative: a cold start changes nearly every destination's next hop
  // and children, which as maps took 25 to 50 bytes an entry (a third of a 3,000-router
  // simulation's heap at its peak). Empty while no grace runs: the sweep that ends the last gives
  // them back.
  private char[] eChildUntil = new char[0];
  private char[] eParentUntil = new char[0];
  private final int graceShift;
  // The earliest end of a grace as of the last look (ms): the sweep looks no sooner.
  private long gracesDueAt = Long.MAX_VALUE;

  private int timersPeak;

  // Per (destination, slot), at destination * slots + slot: the latest route heard from the
  // neighbour in that slot.
  private int slots;
  private Nbr[] bySlot = new Nbr[0];
  private byte[] eFlags = new byte[0];
  private char[] eMetric = new char[0];
  // When the route was last heard, in units of 2^refreshShift ms (low 16 bits, compared by
  // difference; the unit keeps the route expiry below a quarter of the wrap, and the sweep, every
  // hello interval, takes expired routes out long before a wrap).
  private char[] eRefreshed = new char[0];
  private final int refreshShift;

  // An entry's seq: almost every route to a destination carries the seq (epoch, seqno) of the
  // destination's latest route, so it is kept once per destination (dEpoch, dSeqno) and an entry
  // that carries another (OWN_SEQ: heard from a neighbour still behind a restart or a seqno
  // request, or ahead of the others) has it in maps. With times in 16 bits, entries are 7 bytes
  // rather than 23: an entry per destination and neighbour is most of a router's heap in a large
  // network.
  private long[] dEpoch;
  private int[] dSeqno;
  private final Long2LongHashMap entryEpochs = byEntryMap();
  private final Long2LongHashMap entrySeqnos = byEntryMap();
  // By destination, for those with SEQS_APART: the seq of the selected (or retracted) route and
  // that of the feasibility distance. Almost always both are the destination's common seq, which
  // saves 24 bytes a destination (240 KB a router at 10,000 routers).
  private final Long2LongHashMap selEpochs = byEntryMap();
  private final Long2LongHashMap selSeqnos = byEntryMap();
  private final Long2LongHashMap fdEpochs = byEntryMap();
  private final Long2LongHashMap fdSeqnos = byEntryMap();

  // By entry: when TENTATIVE was set, in units of 2^tentativeShift ms (low 16 bits, compared by
  // difference; the unit keeps the grace below a quarter of the wrap, and the sweep ends every
  // tentative child at its grace). Dense: a cold start offers a route to every neighbour for
  // nearly every destination before they answer, which as a map took 25 bytes an entry. Empty while
  // no entry is tentative (a settled network): the sweep gives it back, startTentative takes it.
  private char[] eTentative = new char[0];
  private final int tentativeShift;

  // Signed claims (see "Signed claims"): null unless an authority signs. Per destination, the
  // signature of the selected (or retracted) route's seq; per entry, that of the entry's seq.
  private OriginAuthority authority = OriginAuthority.NONE;
  private OriginSignature[] selSig;
  private OriginSignature[] eSig;
  private OriginSignature ownSig; // over (ownSigEpoch, ownSigSeqno)
  private long ownSigEpoch;
  private int ownSigSeqno;
  private long claimsRefused;
  private long digestsSent;
  private long digestsAgreed;
  private long digestsDisagreed;
  private long tablesRequested;
  // Moves with whatever a digest's routes or conditions read may have changed, besides the
  // selections and children that set `changed` (and so move `version` at the end of the call).
  private long advertsStamp;
  // Moves whenever an entry's route may have changed (not when it is only refreshed).
  private long entriesStamp;

  private boolean holdingDown = true;
  private final long holdDownUntil;
  private long nextSweepAt;
  // The sweep looks at the table only when something may be due (see sweep): a destination was
  // selected anew or lost entries, a tentative child started or ended, or a paced batch went out
  // since the last look; a timer is running; or an entry's expiry or tentative grace may have come.
  private boolean sweepWanted = true;
  private long entriesDueAt;

  /** Destinations changed by the current call (grown as needed, made small again after). */
  private int[] dirty = new int[SMALL];

  private int dirtyCount;

  /** Destinations whose non-urgent change waits for the next paced flush ({@link #finish}). */
  private int[] paced = new int[SMALL];

  private int pacedCount;
  private final Pacer pacer;
  private final SplittableRandom jitter;
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
    this.ownEpoch = epoch;
    this.maxRouters = config.maxRouters();
    int n = maxRouters;
    this.flags = new byte[n];
    this.selSlot = new short[n];
    Arrays.fill(selSlot, (short) -1);
    this.selMetric = new char[n];
    Arrays.fill(selMetric, (char) INF);
    this.dEpoch = new long[n];
    this.dSeqno = new int[n];
    this.fdMetric = new char[n];
    this.pacer = new Pacer(config.updatePacingMs());
    // The smallest unit that keeps the grace below 2^14 units, a quarter of the char's wrap.
    this.refreshShift = Math.max(0, 64 - Long.numberOfLeadingZeros(config.routeExpiryMs()) - 14);
    this.tentativeShift = Math.max(0, 64 - Long.numberOfLeadingZeros(tentativeGraceMs()) - 14);
    this.graceShift =
        Math.max(0, 64 - Long.numberOfLeadingZeros(Math.max(parentGraceMs(), childGraceMs())) - 14);
    this.jitter = new SplittableRandom(epoch * 31 + self);
    long now = clock.nowMillis();
    this.holdDownUntil = now + config.deadIntervalMs() + config.helloIntervalMs();
    this.nextSweepAt = now + config.helloIntervalMs();
    flags[self] = KNOWN;
  }

  /** This router's number. */
  public int self() {
    return self;
  }

  /** This router's incarnation. */
  public long epoch() {
    return epoch;
  }

  /** The seqno of the route this router originates to itself, in {@link #routeEpoch()}. */
  public int seqno() {
    return seqno;
  }

  /**
   * The epoch of the route this router originates to itself: its {@link #epoch()} until a claim
   * about it named a newer sequence number, then the epoch of the last such claim moved past (see
   * "Claims about itself" above). Hellos always carry {@link #epoch()}.
   */
  public long routeEpoch() {
    return ownEpoch;
  }

  /**
   * How many times this router moved its own sequence number past a claim about itself that was
   * newer than its own: a route to it or a request for it naming a later (epoch, seqno) than it
   * ever originated (a forged route, a previous life whose clock ran ahead, a misconfigured twin).
   * Zero in a healthy network, apart from restarts after a clock step backwards.
   */
  public long claimsOvertaken() {
    return claimsOvertaken;
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
    if (n < 0 || n >= maxRouters || n == self) {
      throw new IllegalArgumentException("bad neighbour " + n + " for router " + self);
    }
    if (cost < 1 || cost >= INF) {
      throw new IllegalArgumentException("cost must be in 1.." + (INF - 1) + ", got " + cost);
    }
    Nbr nbr = links.get(n);
    long now = clock.nowMillis();
    if (nbr == null) {
      nbr = new Nbr(n, takeSlot(), face, cost);
      bySlot[nbr.slot] = nbr;
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
      bySlot[nbr.slot] = null; // its entries went with the adjacency: the slot is free
      finish();
    }
  }

  /**
   * A map by entry (or by destination and slot) of a time or an epoch: primitive keys and values,
   * since a cold start of a large network holds tens of millions of them across its routers for a
   * while (a boxed map took 70 bytes an entry, 3.4 GB at 5,000 routers). Keys are the int key
   * widened; {@link #NONE} is never a value.
   */
  private static Long2LongHashMap byEntryMap() {
    return new Long2LongHashMap(NONE);
  }

  private static final long NONE = Long.MIN_VALUE;

  private static void renumberEntries(Long2LongHashMap byEntry, int old, int grown) {
    if (byEntry.isEmpty()) {
      return;
    }
    Long2LongHashMap moved = byEntryMap();
    byEntry.forEachLong(
        (k, v) -> {
          int e = (int) k;
          moved.put(e / old * grown + e % old, v);
        });
    byEntry.clear();
    byEntry.putAll(moved);
  }

  /** The epoch of destination {@code d}'s selected (or retracted) route's seq. */
  private long selEpoch(int d) {
    return (flags[d] & SEQS_APART) != 0 ? selEpochs.get(d) : dEpoch[d];
  }

  /** The seqno of destination {@code d}'s selected (or retracted) route's seq. */
  private int selSeqno(int d) {
    return (flags[d] & SEQS_APART) != 0 ? (int) selSeqnos.get(d) : dSeqno[d];
  }

  /** The epoch of destination {@code d}'s feasibility distance. */
  private long fdEpoch(int d) {
    return (flags[d] & SEQS_APART) != 0 ? fdEpochs.get(d) : dEpoch[d];
  }

  /** The seqno of destination {@code d}'s feasibility distance. */
  private int fdSeqno(int d) {
    return (flags[d] & SEQS_APART) != 0 ? (int) fdSeqnos.get(d) : dSeqno[d];
  }

  /** Sets the seqs of {@code d}'s selected route and feasibility distance. */
  private void setSeqs(int d, long selE, int selS, long fdE, int fdS) {
    long e = dEpoch[d];
    int s = dSeqno[d];
    if (selE == e && selS == s && fdE == e && fdS == s) {
      forgetSeqs(d);
    } else {
      set(d, SEQS_APART);
      selEpochs.put(d, selE);
      selSeqnos.put(d, selS);
      fdEpochs.put(d, fdE);
      fdSeqnos.put(d, fdS);
    }
  }

  private void forgetSeqs(int d) {
    if ((flags[d] & SEQS_APART) != 0) {
      clear(d, SEQS_APART);
      selEpochs.remove(d);
      selSeqnos.remove(d);
      fdEpochs.remove(d);
      fdSeqnos.remove(d);
    }
  }

  /** Entry {@code e}'s epoch, {@code d} its destination (meaningful while it is PRESENT). */
  private long epochOf(int e, int d) {
    return (eFlags[e] & OWN_SEQ) != 0 ? entryEpochs.get(e) : dEpoch[d];
  }

  /** Entry {@code e}'s seqno, {@code d} its destination (meaningful while it is PRESENT). */
  private int seqnoOf(int e, int d) {
    return (eFlags[e] & OWN_SEQ) != 0 ? (int) entrySeqnos.get(e) : dSeqno[d];
  }

  /**
   * Sets entry {@code e}'s seq. A newer seq of the destination than its common one becomes the
   * common one; the destination's other entries keep theirs, in the maps.
   */
  private void setSeq(int e, long epoch, int seqno) {
    int d = e / slots;
    if (compareSeq(epoch, seqno, dEpoch[d], dSeqno[d]) > 0) {
      for (int s = 0, base = d * slots; s < slots; s++) {
        int x = base + s;
        if (x != e && (eFlags[x] & (PRESENT | OWN_SEQ)) == PRESENT) {
          eFlags[x] |= OWN_SEQ;
          entryEpochs.put(x, dEpoch[d]);
          entrySeqnos.put(x, dSeqno[d]);
        }
      }
      long selE = selEpoch(d);
      int selS = selSeqno(d);
      long fdE = fdEpoch(d);
      int fdS = fdSeqno(d);
      dEpoch[d] = epoch;
      dSeqno[d] = seqno;
      setSeqs(d, selE, selS, fdE, fdS);
    }
    if (epoch == dEpoch[d] && seqno == dSeqno[d]) {
      if ((eFlags[e] & OWN_SEQ) != 0) {
        eFlags[e] &= ~OWN_SEQ;
        entryEpochs.remove(e);
        entrySeqnos.remove(e);
      }
    } else {
      eFlags[e] |= OWN_SEQ;
      entryEpochs.put(e, epoch);
      entrySeqnos.put(e, seqno);
    }
  }

  /** Forgets what the maps by entry hold for entry {@code e}, whose flags are being cleared. */
  private void dropEntryMaps(int e) {
    if ((eFlags[e] & OWN_SEQ) != 0) {
      entryEpochs.remove(e);
      entrySeqnos.remove(e);
    }
  }

  /** A free slot for a new neighbour, adding one to every destination's entries if none is. */
  private int takeSlot() {
    entriesStamp++;
    for (int s = 0; s < slots; s++) {
      if (bySlot[s] == null) {
        return s;
      }
    }
    int old = slots;
    int grown = old + 1;
    int size = Math.multiplyExact(maxRouters, grown);
    byte[] f = new byte[size];
    char[] me = new char[size];
    char[] rf = new char[size];
    char[] tt = eTentative.length == 0 ? eTentative : new char[size];
    char[] cu = eChildUntil.length == 0 ? eChildUntil : new char[size];
    char[] pu = eParentUntil.length == 0 ? eParentUntil : new char[size];
    OriginSignature[] sg = eSig == null ? null : new OriginSignature[size];
    for (int d = 0; d < maxRouters; d++) {
      if (sg != null) {
        System.arraycopy(eSig, d * old, sg, d * grown, old);
      }
      System.arraycopy(eFlags, d * old, f, d * grown, old);
      System.arraycopy(eMetric, d * old, me, d * grown, old);
      System.arraycopy(eRefreshed, d * old, rf, d * grown, old);
      if (tt.length > 0) {
        System.arraycopy(eTentative, d * old, tt, d * grown, old);
      }
      if (cu.length > 0) {
        System.arraycopy(eChildUntil, d * old, cu, d * grown, old);
      }
      if (pu.length > 0) {
        System.arraycopy(eParentUntil, d * old, pu, d * grown, old);
      }
    }
    eFlags = f;
    eMetric = me;
    eRefreshed = rf;
    eTentative = tt;
    eChildUntil = cu;
    eParentUntil = pu;
    eSig = sg;
    // The maps by entry follow their entries to the wider layout.
    renumberEntries(entryEpochs, old, grown);
    renumberEntries(entrySeqnos, old, grown);
    bySlot = Arrays.copyOf(bySlot, grown);
    slots = grown;
    return old;
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

  // ---------------------------------------------------------------- signed claims

  /**
   * Signs this router's route to itself with {@code a} and takes others' routes only with their
   * destination's valid signature from now on (see "Signed claims"); {@link OriginAuthority#NONE}
   * (the default) signs and checks nothing. Set before any link is added.
   */
  public void useAuthority(OriginAuthority a) {
    authority = Objects.requireNonNull(a, "authority");
    if (a.enabled()) {
      selSig = new OriginSignature[maxRouters];
      eSig = new OriginSignature[eFlags.length];
    } else {
      selSig = null;
      eSig = null;
    }
    ownSig = null;
  }

  /**
   * Routes refused for their destination's signature: missing, bad, or of a destination whose
   * certificate is not held yet (retractions not counted: they are taken without the claim).
   */
  public long claimsRefused() {
    return claimsRefused;
  }

  /**
   * Whether {@code neighbour} takes {@link RouteDigest}s (and answers {@link TableRequest}s): its
   * periodic full updates are then sent as a digest when every route they would carry was already
   * sent (see "Updates"). False until set; the router sets it from the link's hello, for each
   * session. Digests are never sent where routes are signed.
   */
  public void acceptsDigests(int neighbour, boolean accepts) {
    Nbr nbr = links.get(neighbour);
    if (nbr != null) {
      nbr.digests = accepts;
    }
  }

  /** Periodic full updates sent as a {@link RouteDigest}. */
  public long digestsSent() {
    return digestsSent;
  }

  /** Digests received that agreed with the routes held from their sender, which they refreshed. */
  public long digestsAgreed() {
    return digestsAgreed;
  }

  /** Digests received that did not agree: the full table was asked for instead. */
  public long digestsDisagreed() {
    return digestsDisagreed;
  }

  /** Full tables that neighbours asked for ({@link TableRequest}). */
  public long tablesRequested() {
    return tablesRequested;
  }

  /**
   * Moves this router's own sequence number to its successor and sends it at once: a renewed
   * certificate signs a route that every router verifies with it.
   */
  public void resign() {
    if (seqno == Integer.MAX_VALUE) {
      ownEpoch++;
      seqno = 0;
    } else {
      seqno++;
    }
    ownSeqnoMoved();
    finish();
  }

  /**
   * {@code r} as it may be used, or null if it is refused: a route whose claim the authority does
   * not confirm is dropped (counted and reported), except a retraction, which a neighbour may
   * always make about its own path: it is kept at the sequence number already held from that
   * neighbour, never at the one it names. A route whose signature is the one already held for entry
   * {@code e} at the same sequence number is not verified again.
   */
  private Route checked(Nbr nbr, Route r, int e) {
    int d = r.destination();
    boolean present = (eFlags[e] & PRESENT) != 0;
    if (present
        && epochOf(e, d) == r.epoch()
        && seqnoOf(e, d) == r.seqno()
        && r.signature() != null
        && r.signature().equals(eSig[e])) {
      return r;
    }
    OriginAuthority.Verdict v =
        d == self && r.signature() != null && r.signature().equals(ownSignature())
            ? OriginAuthority.Verdict.OK
            : authority.verify(
                d, OriginAuthority.routeClaim(d, r.epoch(), r.seqno()), r.signature());
    if (v == OriginAuthority.Verdict.OK) {
      return r;
    }
    if (r.metric() >= INF) {
      if (!present) {
        return r.viaReceiver() ? new Route(d, 0, 0, INF, true, null) : null;
      }
      return new Route(d, epochOf(e, d), seqnoOf(e, d), INF, r.viaReceiver(), eSig[e]);
    }
    claimsRefused++;
    authority.refused(OriginAuthority.ClaimKind.ROUTE, d, nbr.id, v);
    return null;
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
          case RouteDigest g -> nbr.up && onDigest(nbr, g);
          case TableRequest t -> nbr.up && onTableRequest(nbr);
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
    for (Route r : u.routes()) {
      int d = r.destination();
      if (d < 0 || d >= maxRouters) {
        continue;
      }
      int e = d * slots + nbr.slot;
      OriginSignature sig = null;
      if (eSig != null) {
        r = checked(nbr, r, e);
        if (r == null) {
          continue;
        }
        sig = r.signature();
      }
      if (d == self && compareSeq(r.epoch(), r.seqno(), ownEpoch, seqno) > 0) {
        claim(r.epoch(), r.seqno(), now); // a newer route to us than we ever originated
      }
      boolean hadNone = saysNoRoute(e);
      if ((eFlags[e] & PRESENT) == 0) {
        if (r.metric() >= INF && !r.viaReceiver()) {
          continue; // a retraction of a route we do not hold
        }
        flags[d] |= KNOWN;
        eFlags[e] |= PRESENT;
        entriesStamp++;
      } else if (!expired(e, now)
          && epochOf(e, d) == r.epoch()
          && seqnoOf(e, d) == r.seqno()
          && eMetric[e] == r.metric()
          && ((eFlags[e] & VIA) != 0) == r.viaReceiver()
          && (eSig == null || java.util.Objects.equals(eSig[e], sig))) {
        // The same route again (most of a full update): refreshed, and nothing to select anew.
        // The sweep still asks for a newer seq if it is unfeasible and better than the selection.
        eRefreshed[e] = (char) (now >>> refreshShift);
        continue;
      }
      entriesStamp++;
      boolean via = (eFlags[e] & VIA) != 0;
      if (via != r.viaReceiver()) {
        changed = true; // the children of d
        eFlags[e] = (byte) (r.viaReceiver() ? eFlags[e] | VIA : eFlags[e] & ~VIA);
        if (via) {
          startFormerChild(e, now + childGraceMs()); // make before break: still sent to a while
        } else {
          eFlags[e] &= ~FORMER_CHILD;
        }
      }
      setSeq(e, r.epoch(), r.seqno());
      eMetric[e] = (char) r.metric();
      eRefreshed[e] = (char) (now >>> refreshShift);
      if (eSig != null) {
        eSig[e] = sig;
      }
      wordChanged(e, hadNone, now);
      if (d != self) {
        selectAfter(d, nbr.slot, now);
        if (r.metric() < INF && !feasible(d, e) && betterThanSelected(d, e)) {
          request(d, now, nbr);
        }
      }
    }
    return true;
  }

  /**
   * Whether the latest word of the neighbour in entry {@code e} is that it has no route to the
   * entry's destination: a retraction, or no word at all since the adjacency came up (its table may
   * still be on its way: until it comes, the neighbour is taken to have none).
   */
  private boolean saysNoRoute(int e) {
    int f = eFlags[e];
    return (f & PRESENT) == 0 || ((f & VIA) == 0 && eMetric[e] >= INF);
  }

  /**
   * The neighbour's word in entry {@code e} may have changed ({@code hadNone}: it said it had no
   * route before): a neighbour that now says it has none while it holds a route offered by this
   * router becomes a tentative child; one that now has a route is one no longer. Through this
   * router, it is a child. Through another, the word may have crossed the offer: sent before the
   * neighbour took the offer and moved here, and the update saying so still to come (paced, then
   * the link); so it is still sent broadcasts for as long as a former parent is ({@link
   * #parentGraceMs}).
   */
  private void wordChanged(int e, boolean hadNone, long now) {
    boolean none = saysNoRoute(e);
    if (none && !hadNone && (eFlags[e] & (OFFERED | TENTATIVE)) == OFFERED) {
      startTentative(e, now);
    } else if (!none && (eFlags[e] & TENTATIVE) != 0) {
      endTentative(e);
      if ((eFlags[e] & VIA) == 0) {
        startFormerChild(e, now + parentGraceMs());
      }
    }
  }

  private void startTentative(int e, long now) {
    if (eTentative.length == 0) {
      eTentative = new char[eFlags.length]; // given back by the sweep that finds none tentative
    }
    eFlags[e] |= TENTATIVE;
    eTentative[e] = (char) (now >>> tentativeShift);
    changed = true;
    sweepWanted = true;
  }

  /** Neighbour entry {@code e} is still sent broadcasts until {@code untilMs}. */
  private void startFormerChild(int e, long untilMs) {
    if (eChildUntil.length == 0) {
      eChildUntil = new char[eFlags.length]; // given back by the sweep that ends the last grace
    }
    eFlags[e] |= FORMER_CHILD;
    eChildUntil[e] = graceUnits(untilMs);
    gracesDueAt = Math.min(gracesDueAt, untilMs);
  }

  /**
   * Broadcasts from entry {@code e}'s destination are still taken from its neighbour until then.
   */
  private void startFormerParent(int e, long untilMs) {
    if (eParentUntil.length == 0) {
      eParentUntil = new char[eFlags.length];
    }
    eFlags[e] |= FORMER_PARENT;
    eParentUntil[e] = graceUnits(untilMs);
    gracesDueAt = Math.min(gracesDueAt, untilMs);
  }

  /** {@code ms} in grace units, rounded up (a grace never ends early), low 16 bits. */
  private char graceUnits(long ms) {
    return (char) ((ms + (1L << graceShift) - 1) >>> graceShift);
  }

  /** Whether a grace until {@code until} (grace units) has ended at {@code now} (ms). */
  private boolean graceEnded(char until, long now) {
    return (char) ((now >>> graceShift) - until) < 0x8000;
  }

  private void endTentative(int e) {
    if ((eFlags[e] & TENTATIVE) != 0) {
      eFlags[e] &= ~TENTATIVE;
      changed = true;
      sweepWanted = true;
    }
  }

  /**
   * This router sends neighbour {@code to} route {@code r}: a finite route is an offer, which makes
   * a neighbour that said it has no route a tentative child (once per offer: a neighbour that
   * already knew the route and let the grace pass is not made one again by each periodic update);
   * an infinite one withdraws the offer.
   */
  private void offered(Nbr to, Route r, long now) {
    int e = r.destination() * slots + to.slot;
    if (r.metric() >= INF) {
      eFlags[e] &= ~OFFERED;
      endTentative(e);
    } else if ((eFlags[e] & OFFERED) == 0) {
      eFlags[e] |= OFFERED;
      if (saysNoRoute(e)) {
        startTentative(e, now);
      }
    }
  }

  /**
   * A route to this router, or a request for a route to it, names (e, s), not older than its own
   * sequence number: the router moves past it, at once, or a hello interval after it last did (the
   * newest claim heard meanwhile is the one moved past; see "Claims about itself").
   */
  private void claim(long e, int s, long now) {
    if (!claimPending || compareSeq(e, s, claimEpoch, claimSeqno) > 0) {
      claimEpoch = e;
      claimSeqno = s;
    }
    claimPending = true;
    if (now >= nextMoveAt()) {
      movePastClaim(now);
    }
  }

  /** When the router may next move its sequence number past a claim. */
  private long nextMoveAt() {
    return lastMovedAt == Long.MIN_VALUE ? Long.MIN_VALUE : lastMovedAt + config.helloIntervalMs();
  }

  /** Moves this router's own sequence number to the successor of the pending claim. */
  private void movePastClaim(long now) {
    claimPending = false;
    int c = compareSeq(claimEpoch, claimSeqno, ownEpoch, seqno);
    if (c < 0) {
      return; // already past it
    }
    if (claimSeqno == Integer.MAX_VALUE) {
      if (claimEpoch == Long.MAX_VALUE) {
        return; // (MAX, MAX) has no successor: see "Sequence-number arithmetic"
      }
      ownEpoch = claimEpoch + 1;
      seqno = 0;
    } else {
      ownEpoch = claimEpoch;
      seqno = claimSeqno + 1;
    }
    if (c > 0) {
      claimsOvertaken++;
    }
    lastMovedAt = now;
    ownSeqnoMoved();
  }

  /** This router's seqno went up: its route to itself changed, and goes out at once. */
  private void ownSeqnoMoved() {
    advertsStamp++;
    if (has(self, ADVERTISED)) {
      set(self, SEQ_UNSENT);
    }
    markDirty(self);
  }

  private boolean onRequest(Nbr from, SeqnoRequest r) {
    long now = clock.nowMillis();
    int d = r.destination();
    if (d < 0 || d >= maxRouters) {
      return false;
    }
    if (d == self) {
      if (compareSeq(r.epoch(), r.seqno(), ownEpoch, seqno) >= 0) {
        claim(r.epoch(), r.seqno(), now);
      } else {
        send(from, List.of(selfRoute()));
      }
      return true;
    }
    if (!known(d)) {
      return true;
    }
    if (selSlot[d] >= 0 && compareSeq(selEpoch(d), selSeqno(d), r.epoch(), r.seqno()) > 0) {
      send(from, List.of(advert(d, from, now)));
      return true;
    }
    if (r.hopCount() <= 1 || !rateOk(d, now, r.epoch(), r.seqno())) {
      return true;
    }
    Nbr to = null;
    if (selSlot[d] >= 0 && bySlot[selSlot[d]] != from) {
      to = bySlot[selSlot[d]];
    } else {
      int best = INF;
      int base = d * slots;
      for (int s = 0; s < slots; s++) {
        int e = base + s;
        if ((eFlags[e] & PRESENT) == 0) {
          continue;
        }
        int c = candidate(e, s);
        if (bySlot[s] != from && c < best && !expired(e, now)) {
          best = c;
          to = bySlot[s];
        }
      }
    }
    if (to != null) {
      to.face.send(new SeqnoRequest(self, d, r.epoch(), r.seqno(), r.hopCount() - 1));
    }
    return true;
  }

  /**
   * A periodic full update as a digest: when it agrees with the routes held from the neighbour
   * (retractions left out, as the sender sends a digest only when it retracts nothing), each of
   * them is refreshed, as the same route again in a full update would be; otherwise the full table
   * is asked for. A route that had expired meanwhile is selectable again, as when sent again.
   */
  private boolean onDigest(Nbr nbr, RouteDigest g) {
    long now = clock.nowMillis();
    if (eSig != null) { // signed routes are not digested: ask for them
      digestsDisagreed++;
      nbr.face.send(new TableRequest(self));
      return true;
    }
    if (nbr.heldStamp != entriesStamp) {
      int count = 0;
      long hash = 0;
      for (int d = 0, e = nbr.slot; d < maxRouters; d++, e += slots) {
        if (digested(e)) {
          int f = eFlags[e];
          count++;
          hash +=
              RouteDigest.routeHash(d, epochOf(e, d), seqnoOf(e, d), eMetric[e], (f & VIA) != 0);
        }
      }
      nbr.heldStamp = entriesStamp;
      nbr.heldCount = count;
      nbr.heldHash = hash;
    }
    if (nbr.heldCount != g.count() || nbr.heldHash != g.hash()) {
      digestsDisagreed++;
      nbr.face.send(new TableRequest(self));
      return true;
    }
    digestsAgreed++;
    char at = (char) (now >>> refreshShift);
    for (int d = 0, e = nbr.slot; d < maxRouters; d++, e += slots) {
      if (!digested(e)) {
        continue;
      }
      boolean wasExpired = expired(e, now);
      eRefreshed[e] = at;
      if (wasExpired && d != self) {
        select(d, now);
        if (eMetric[e] < INF && !feasible(d, e) && betterThanSelected(d, e)) {
          request(d, now, nbr);
        }
      }
    }
    return true;
  }

  /** Whether entry {@code e} holds a route that digests cover: any but a retraction. */
  private boolean digested(int e) {
    int f = eFlags[e];
    return (f & PRESENT) != 0 && ((f & VIA) != 0 || eMetric[e] < INF);
  }

  /**
   * The neighbour asks for the full table (a digest of ours did not agree with what it holds): it
   * goes with the next {@link #finish}, or, if a full table went to it less than a hello interval
   * ago, a hello interval after that one, so that a neighbour asking again and again gets at most
   * one full table per hello interval.
   */
  private boolean onTableRequest(Nbr nbr) {
    long now = clock.nowMillis();
    tablesRequested++;
    nbr.fullOwed = true;
    long allowedAt =
        nbr.lastFullAt == Long.MIN_VALUE ? now : nbr.lastFullAt + config.helloIntervalMs();
    if (now >= allowedAt) {
      nbr.needFull = true;
    } else {
      nbr.nextUpdateAt = Math.min(nbr.nextUpdateAt, allowedAt);
    }
    return true;
  }

  /**
   * Sends {@code to} its periodic full update as a digest, if every route it would carry was sent
   * already and sending it again would change nothing here: no retraction among them, each route's
   * sequence number already advertised, and each finite route already offered to {@code to} (and
   * each infinite one not). Returns false, having sent nothing, otherwise.
   */
  private boolean sendDigest(Nbr to, long now) {
    if (!changed && to.digestVersion == version && to.digestStamp == advertsStamp) {
      // Nothing has changed since the last digest to this neighbour: the same again.
      to.face.send(new RouteDigest(self, to.digestCount, to.digestHash));
      digestsSent++;
      return true;
    }
    int count = 0;
    long hash = 0;
    for (int d = 0, e = to.slot; d < maxRouters; d++, e += slots) {
      Route r = known(d) ? advert(d, to, now) : null;
      if (r == null) {
        continue;
      }
      boolean finite = r.metric() < INF;
      if ((!finite && !r.viaReceiver()) // a retraction: the receiver's copy of it may differ
          || !has(d, ADVERTISED)
          || has(d, SEQ_UNSENT)
          || (finite ? (eFlags[e] & OFFERED) == 0 : (eFlags[e] & (OFFERED | TENTATIVE)) != 0)) {
        return false;
      }
      count++;
      hash += RouteDigest.routeHash(r);
    }
    to.face.send(new RouteDigest(self, count, hash));
    digestsSent++;
    to.digestVersion = changed ? -1 : version;
    to.digestStamp = advertsStamp;
    to.digestCount = count;
    to.digestHash = hash;
    return true;
  }

  // ---------------------------------------------------------------- timers

  /** Runs every timer that is due: hellos, dead intervals, full updates, hold-down, the sweep. */
  public void tick() {
    long now = clock.nowMillis();
    if (holdingDown && now >= holdDownUntil) {
      endHoldDown();
    }
    if (claimPending && now >= nextMoveAt()) {
      movePastClaim(now);
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
    if (claimPending) {
      t = Math.min(t, nextMoveAt());
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

  /**
   * Every hello interval: expiry, the ends of tentative children's graces, retractions and FDs, the
   * repeated seqno requests, and forgetting destinations with no state left. The table is looked at
   * only when one of them may be due; otherwise a quiet network's sweep costs nothing per
   * destination. The look is skipped only when it would find nothing: no entry's expiry or grace
   * has come (entriesDueAt, the earliest of them as of the last look: a later refresh or offer only
   * comes later), no timer runs (retractions, unreachable FDs and repeated requests each keep one),
   * and nothing has changed since the last look that could make a destination's request or its
   * forgetting due (sweepWanted: a selection, lost entries, a tentative child, a paced batch sent).
   */
  private void sweep(long now) {
    if (sweepWanted || !timers.isEmpty() || now >= entriesDueAt) {
      sweepTable(now);
    }
    sweepGraces(now);
  }

  private void sweepTable(long now) {
    sweepWanted = false; // a selection made by this sweep asks for the next one as well
    long tentativeUnits = (tentativeGraceMs() + (1L << tentativeShift) - 1) >>> tentativeShift;
    long expiryUnits = (config.routeExpiryMs() + (1L << refreshShift) - 1) >>> refreshShift;
    int oldestTentative = 0; // in units, the age of the oldest tentative child left
    boolean anyTentative = false;
    int oldestRefresh = 0; // in units, the age of the least recently refreshed route left
    for (int d = 0; d < maxRouters; d++) {
      if (!known(d)) {
        continue;
      }
      boolean removed = false;
      int base = d * slots;
      int count = 0;
      for (int s = 0; s < slots; s++) {
        int e = base + s;
        if ((eFlags[e] & TENTATIVE) != 0) {
          int age = (char) ((now >>> tentativeShift) - eTentative[e]);
          if (age >= tentativeUnits) {
            endTentative(e); // the end of a tentative child's grace
          } else {
            oldestTentative = Math.max(oldestTentative, age);
            anyTentative = true;
          }
        }
        if ((eFlags[e] & PRESENT) == 0) {
          continue;
        }
        if (expired(e, now)) {
          boolean hadNone = saysNoRoute(e);
          changed |= (eFlags[e] & VIA) != 0;
          changed |= (eFlags[e] & FORMER_CHILD) != 0;
          if ((eFlags[e] & OWN_SEQ) != 0) {
            entryEpochs.remove(e);
            entrySeqnos.remove(e);
          }
          eFlags[e] &= OFFERED | TENTATIVE | FORMER_PARENT;
          entriesStamp++;
          wordChanged(e, hadNone, now);
          // A neighbour offered a route that now says it has none is tentative from now on.
          anyTentative |= (eFlags[e] & TENTATIVE) != 0;
          removed = true;
        } else {
          count++;
          oldestRefresh = Math.max(oldestRefresh, (char) ((now >>> refreshShift) - eRefreshed[e]));
        }
      }
      if (d == self) {
        continue;
      }
      if (removed) {
        select(d, now);
      }
      if (has(d, RETRACTING) && now >= timers.get(d).retractUntil) {
        clear(d, RETRACTING);
        advertsStamp++; // no longer mentioned
      }
      if (selSlot[d] < 0
          && has(d, HAS_FD)
          && now >= timers.get(d).unreachableSince + config.sourceGcMs()) {
        clear(d, HAS_FD);
        select(d, now); // routes that were unfeasible may be selected now
      }
      if (has(d, HAS_FD) && !holdingDown) {
        for (int s = 0; s < slots; s++) {
          int e = base + s;
          if ((eFlags[e] & PRESENT) != 0
              && eMetric[e] < INF
              && !feasible(d, e)
              && betterThanSelected(d, e)) {
            request(d, now, bySlot[s]);
          }
        }
      }
      if (count == 0 && selSlot[d] < 0 && (flags[d] & (HAS_FD | RETRACTING | DIRTY | PACED)) == 0) {
        forgetDestination(d);
      }
    }
    if (!anyTentative && eTentative.length > 0) {
      // A cold start made nearly every entry tentative for a while; a settled table has none.
      eTentative = new char[0];
    }
    // The first time at which an entry left here, or one refreshed or made tentative later, can
    // be due: each is due when its age in units reaches the limit, and a later one is younger.
    entriesDueAt =
        Math.min(
            ((now >>> refreshShift) - oldestRefresh + expiryUnits) << refreshShift,
            ((now >>> tentativeShift) - oldestTentative + tentativeUnits) << tentativeShift);
  }

  /**
   * Ends the graces that are due, and notes when the next is: a look at every entry, made only when
   * one is due. Gives the arrays back once no grace is left.
   */
  private void sweepFormer(long now) {
    long nowUnits = now >>> graceShift;
    int nextDue = Integer.MAX_VALUE; // in units from now
    boolean children = false;
    boolean parents = false;
    for (int e = 0; e < eFlags.length; e++) {
      int f = eFlags[e];
      if ((f & (FORMER_CHILD | FORMER_PARENT)) == 0) {
        continue;
      }
      if ((f & FORMER_CHILD) != 0) {
        if (graceEnded(eChildUntil[e], now)) {
          eFlags[e] &= ~FORMER_CHILD;
          changed = true;
        } else {
          children = true;
          nextDue = Math.min(nextDue, (char) (eChildUntil[e] - nowUnits));
        }
      }
      if ((f & FORMER_PARENT) != 0) {
        if (graceEnded(eParentUntil[e], now)) {
          eFlags[e] &= ~FORMER_PARENT;
          changed = true;
        } else {
          parents = true;
          nextDue = Math.min(nextDue, (char) (eParentUntil[e] - nowUnits));
        }
      }
    }
    if (!children) {
      eChildUntil = new char[0];
    }
    if (!parents) {
      eParentUntil = new char[0];
    }
    gracesDueAt =
        nextDue == Integer.MAX_VALUE ? Long.MAX_VALUE : (nowUnits + nextDue) << graceShift;
  }

  private void sweepGraces(long now) {
    // The ends of the make-before-break graces: the trees built from now on leave them out.
    if (now >= gracesDueAt) {
      sweepFormer(now);
    }
    // Timers that no longer matter: the destination is reachable (or has no FD), is not
    // retracted, and its last request is more than a hello interval old.
    timers
        .entrySet()
        .removeIf(
            x -> {
              int d = x.getKey();
              Timers t = x.getValue();
              return !(selSlot[d] < 0 && has(d, HAS_FD))
                  && !has(d, RETRACTING)
                  && (t.requestedAt == Long.MIN_VALUE
                      || now >= t.requestedAt + config.helloIntervalMs());
            });
    if (timers.isEmpty() && timersPeak > 64) {
      timers = new HashMap<>(); // a map keeps the table its peak needed: a cold start's
      timersPeak = 0;
    }
  }

  /** Clears every field of destination d, which has no routes, FD, retraction or pending send. */
  private void forgetDestination(int d) {
    advertsStamp++;
    entriesStamp++;
    forgetSeqs(d);
    flags[d] = 0;
    selSlot[d] = -1;
    selMetric[d] = (char) INF;
    if (selSig != null) {
      selSig[d] = null;
    }
    fdMetric[d] = 0;
    timers.remove(d);
    forgetFormerParents(d);
    for (int s = 0, base = d * slots; s < slots; s++) {
      dropEntryMaps(base + s);
      eFlags[base + s] = 0; // offers only: the destination has no entry left
    }
    dEpoch[d] = 0;
    dSeqno[d] = 0;
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
    return destination < 0 || destination >= maxRouters || selSlot[destination] < 0
        ? -1
        : bySlot[selSlot[destination]].id;
  }

  /**
   * The seqno of the selected route to {@code destination} (in the epoch it names): {@link
   * #seqno()} for self, -1 if unreachable.
   */
  public int selectedSeqno(int destination) {
    if (destination == self) {
      return seqno;
    }
    return destination < 0 || destination >= maxRouters || selSlot[destination] < 0
        ? -1
        : selSeqno(destination);
  }

  /** The metric of the selected route to {@code destination}: 0 for self, INFINITY if none. */
  public int metric(int destination) {
    if (destination == self) {
      return 0;
    }
    return destination < 0 || destination >= maxRouters || selSlot[destination] < 0
        ? INF
        : selMetric[destination];
  }

  /** The destinations with a selected route, sorted, self excluded. */
  public int[] reachable() {
    int[] out = new int[maxRouters];
    int k = 0;
    for (int d = 0; d < maxRouters; d++) {
      if (selSlot[d] >= 0) {
        out[k++] = d;
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
    if (source < 0 || source >= maxRouters || !known(source)) {
      return new int[0];
    }
    int[] out = new int[slots];
    int k = 0;
    int base = source * slots;
    for (int s = 0; s < slots; s++) {
      int f = eFlags[base + s];
      boolean child =
          (f & (PRESENT | VIA)) == (PRESENT | VIA)
              || ((f & TENTATIVE) != 0 && offers(source, s))
              || (f & FORMER_CHILD) != 0;
      if (child && bySlot[s] != null && bySlot[s].up) {
        out[k++] = bySlot[s].id;
      }
    }
    out = Arrays.copyOf(out, k);
    Arrays.sort(out);
    return out;
  }

  /**
   * The destinations whose next hop changed within the make-before-break grace, with each former
   * next hop (still up, and not the next hop again), as pairs {destination, neighbour}: broadcasts
   * from such a destination are still taken from those neighbours (see "Broadcast trees while
   * routes change").
   */
  public int[][] formerParents() {
    if (eParentUntil.length == 0) {
      return new int[0][];
    }
    List<int[]> out = new ArrayList<>();
    for (int e = 0; e < eFlags.length; e++) {
      if ((eFlags[e] & FORMER_PARENT) == 0) {
        continue;
      }
      int d = e / slots;
      int slot = e % slots;
      Nbr nbr = bySlot[slot];
      if (nbr != null && nbr.up && selSlot[d] >= 0 && selSlot[d] != slot) {
        out.add(new int[] {d, nbr.id});
      }
    }
    return out.toArray(new int[0][]);
  }

  /**
   * How long a neighbour that stops choosing this router as its next hop for a destination is still
   * sent its broadcasts: a hello interval, so that its new parent, which hears of the change in the
   * same update, has started sending before this router stops.
   */
  private long childGraceMs() {
    return config.helloIntervalMs();
  }

  /** Forgets every former next hop towards {@code d} (it is unreachable, or forgotten). */
  private void forgetFormerParents(int d) {
    for (int s = 0, base = d * slots; s < slots; s++) {
      eFlags[base + s] &= ~FORMER_PARENT;
    }
  }

  /**
   * Whether this router has a route to {@code d} that it may offer the neighbour in slot {@code s}:
   * it is d, or its route to d does not go through that neighbour.
   */
  private boolean offers(int d, int s) {
    return d == self || (selSlot[d] >= 0 && selSlot[d] != s);
  }

  /**
   * How long a neighbour that said it has no route to a destination, and was offered one by this
   * router, is sent the destination's broadcasts while it says nothing else (see "Broadcast trees
   * while routes change"): a neighbour that just started selects no route during its hold-down
   * ({@code deadIntervalMs + helloIntervalMs} at most after it started, which was before the
   * offer), then sends its paced update ({@code updatePacingMs}), which crosses the link (a hello
   * interval, as for the other graces).
   */
  private long tentativeGraceMs() {
    return config.deadIntervalMs() + config.updatePacingMs() + 2 * config.helloIntervalMs();
  }

  /**
   * How long copies of a destination's broadcasts are still taken from the former next hop: until
   * the update that tells both the former and the new next hop has gone out (paced: at most {@code
   * updatePacingMs}), crossed the link, and the former one's own grace has ended.
   */
  private long parentGraceMs() {
    return config.updatePacingMs() + 2 * config.helloIntervalMs();
  }

  private boolean known(int d) {
    return (flags[d] & KNOWN) != 0;
  }

  private boolean has(int d, int flag) {
    return (flags[d] & flag) != 0;
  }

  private void set(int d, int flag) {
    flags[d] |= (byte) flag;
  }

  private void clear(int d, int flag) {
    flags[d] &= (byte) ~flag;
  }

  // ---------------------------------------------------------------- adjacencies

  private void adjacencyUp(Nbr nbr) {
    long now = clock.nowMillis();
    nbr.up = true;
    nbr.needFull = true;
    nbr.fullOwed = true;
    nbr.digestVersion = -1;
    nbr.nextUpdateAt = now + updateDelay();
    listener.adjacencyUp(nbr.id);
    if (holdingDown && allLinksUp()) {
      endHoldDown();
    }
  }

  private void adjacencyDown(Nbr nbr) {
    long now = clock.nowMillis();
    sweepWanted = true; // destinations that lost entries may be forgotten
    nbr.up = false;
    nbr.needFull = false;
    entriesStamp++;
    for (int d = 0; d < maxRouters; d++) {
      int e = d * slots + nbr.slot;
      int f = eFlags[e];
      if (f != 0) {
        changed |= (f & (VIA | TENTATIVE | FORMER_CHILD | FORMER_PARENT)) != 0;
        dropEntryMaps(e);
        eFlags[e] = 0;
        if ((f & PRESENT) != 0 && d != self) {
          select(d, now);
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
    for (int d = 0; d < maxRouters; d++) {
      if (known(d) && d != self) {
        select(d, now);
      }
    }
  }

  // ---------------------------------------------------------------- selection

  /**
   * Compares sequence numbers (e1, s1) and (e2, s2): epoch first, then seqno, both as signed
   * integers. A total order, with no wrap-around (see "Sequence-number arithmetic").
   */
  static int compareSeq(long e1, int s1, long e2, int s2) {
    int c = Long.compare(e1, e2);
    return c != 0 ? c : Integer.compare(s1, s2);
  }

  /** The metric through the entry at {@code e}, in slot {@code s}. */
  private int candidate(int e, int s) {
    int m = eMetric[e];
    if (m >= INF) {
      return INF;
    }
    int c = m + bySlot[s].cost;
    return c >= INF ? INF : c;
  }

  private boolean expired(int e, long now) {
    return (char) ((now >>> refreshShift) - eRefreshed[e])
        >= (config.routeExpiryMs() + (1L << refreshShift) - 1) >>> refreshShift;
  }

  private boolean feasible(int d, int e) {
    if (eMetric[e] >= INF) {
      return false;
    }
    if (!has(d, HAS_FD)) {
      return true;
    }
    int c = compareSeq(epochOf(e, d), seqnoOf(e, d), fdEpoch(d), fdSeqno(d));
    return c > 0 || (c == 0 && eMetric[e] < fdMetric[d]);
  }

  private boolean betterThanSelected(int d, int e) {
    return selSlot[d] < 0 || candidate(e, e - d * slots) < selMetric[d];
  }

  /** Re-runs route selection for one destination (not self), and reacts to the change. */
  private void select(int d, long now) {
    select(d, holdingDown ? -1 : bestSlot(d, now), now);
  }

  /**
   * Route selection for destination {@code d} (not self) after a route heard from the neighbour in
   * slot {@code s} changed its entry and nothing else: what {@link #select(int, long)} would do,
   * without looking at every entry. The selection is the best of the usable entries whenever
   * selection has run (entries change only where it runs after them, the FD only where it runs, and
   * time only makes entries unusable), so while the selected entry is still usable the best is it
   * or the one just heard. A large network's cold start takes in every neighbour's route to every
   * destination, some more than once: at a router with hundreds of neighbours, the look at every
   * entry was most of the cost of each.
   */
  private void selectAfter(int d, int s, long now) {
    int old = selSlot[d];
    if (holdingDown || old == s) {
      select(d, now);
      return;
    }
    int base = d * slots;
    int best = -1;
    int bestCand = INF;
    if (old >= 0) {
      bestCand = usable(d, base + old, old, now);
      if (bestCand >= INF) {
        select(d, now); // the selected route is no longer usable: another may be
        return;
      }
      best = old;
    }
    int c = usable(d, base + s, s, now);
    if (c < INF
        && (best < 0 || c < bestCand || (c == bestCand && bySlot[s].id < bySlot[best].id))) {
      best = s;
    }
    assert best == bestSlot(d, now) : "selection after one entry differs from a full look";
    select(d, best, now);
  }

  /**
   * The candidate metric through entry {@code e} (slot {@code s}) of destination {@code d}, or INF
   * if the entry cannot be selected: absent, infinite, expired or not feasible.
   */
  private int usable(int d, int e, int s, long now) {
    if ((eFlags[e] & PRESENT) == 0) {
      return INF;
    }
    int c = candidate(e, s);
    return c >= INF || expired(e, now) || !feasible(d, e) ? INF : c;
  }

  /**
   * The neighbour that a look at every entry of {@code destination} would select now (-1: none),
   * whatever the selection is: tests check the selection after each route against it.
   */
  int selectionByFullLook(int destination) {
    int s = holdingDown ? -1 : bestSlot(destination, clock.nowMillis());
    return s < 0 ? -1 : bySlot[s].id;
  }

  /** The slot of the best usable entry of destination {@code d}, or -1 if none is usable. */
  private int bestSlot(int d, long now) {
    int best = -1;
    int bestCand = INF;
    int base = d * slots;
    // usable(d, e, s, now) for each entry, with the FD read once
    boolean hasFd = has(d, HAS_FD);
    long fdE = hasFd ? fdEpoch(d) : 0;
    int fdS = hasFd ? fdSeqno(d) : 0;
    for (int s = 0; s < slots; s++) {
      int e = base + s;
      if ((eFlags[e] & PRESENT) == 0) {
        continue;
      }
      int c = candidate(e, s); // INF for an infinite metric
      if (c >= INF || expired(e, now)) {
        continue;
      }
      if (hasFd) {
        int f = compareSeq(epochOf(e, d), seqnoOf(e, d), fdE, fdS);
        if (f < 0 || (f == 0 && eMetric[e] >= fdMetric[d])) {
          continue;
        }
      }
      if (best < 0 || c < bestCand || (c == bestCand && bySlot[s].id < bySlot[best].id)) {
        best = s;
        bestCand = c;
      }
    }
    return best;
  }

  /** Makes slot {@code best} (-1: none) destination {@code d}'s selection, and reacts. */
  private void select(int d, int best, long now) {
    advertsStamp++;
    sweepWanted = true; // a request or forgetting d may be due
    int base = d * slots;
    int bestCand = best < 0 ? INF : candidate(base + best, best);
    int old = selSlot[d];
    if (best < 0) {
      if (old < 0) {
        return;
      }
      selSlot[d] = -1;
      forgetFormerParents(d);
      set(d, RETRACTING);
      Timers t = timers(d);
      t.retractUntil = now + config.routeExpiryMs();
      t.unreachableSince = now;
      changed = true;
      markDirty(d);
      request(d, now, null);
      return;
    }
    int e = base + best;
    // FD moves to the selected route before anything is advertised.
    int c = has(d, HAS_FD) ? compareSeq(epochOf(e, d), seqnoOf(e, d), fdEpoch(d), fdSeqno(d)) : 1;
    if (c > 0 || (c == 0 && bestCand < fdMetric[d])) {
      set(d, HAS_FD);
      setSeqs(d, selEpoch(d), selSeqno(d), epochOf(e, d), seqnoOf(e, d));
      fdMetric[d] = (char) bestCand;
    }
    boolean routeChanged = old != best || selMetric[d] != bestCand;
    boolean seqChanged = selEpoch(d) != epochOf(e, d) || selSeqno(d) != seqnoOf(e, d);
    if (has(d, ADVERTISED)
        && compareSeq(epochOf(e, d), seqnoOf(e, d), selEpoch(d), selSeqno(d)) > 0) {
      set(d, SEQ_UNSENT);
    }
    if (old >= 0 && old != best) {
      // Make before break: the former next hop still sends this router d's broadcasts until it
      // hears that it is no longer the parent, and the new one sends none until it hears that it
      // is; copies from the former one (and from any earlier one still in its grace) are taken
      // meanwhile.
      startFormerParent(d * slots + old, now + parentGraceMs());
    }
    selSlot[d] = (short) best;
    selMetric[d] = (char) bestCand;
    setSeqs(d, epochOf(e, d), seqnoOf(e, d), fdEpoch(d), fdSeqno(d));
    if (selSig != null) {
      selSig[d] = eSig[e];
    }
    clear(d, RETRACTING);
    if (old < 0 || routeChanged) {
      changed = true;
    }
    if (old < 0 || routeChanged || seqChanged) {
      markDirty(d);
    }
  }

  // ---------------------------------------------------------------- seqno requests

  private Timers timers(int d) {
    Timers t = timers.get(d);
    if (t == null) {
      t = new Timers();
      timers.put(d, t);
      timersPeak = Math.max(timersPeak, timers.size());
    }
    return t;
  }

  private boolean rateOk(int d, long now, long reqEpoch, int reqSeqno) {
    Timers t = timers(d);
    if (t.requestedAt != Long.MIN_VALUE
        && now < t.requestedAt + config.helloIntervalMs()
        && compareSeq(t.reqEpoch, t.reqSeqno, reqEpoch, reqSeqno) >= 0) {
      return false;
    }
    t.requestedAt = now;
    t.reqEpoch = reqEpoch;
    t.reqSeqno = reqSeqno;
    return true;
  }

  /** Asks for a route to d newer than its FD: from {@code to}, or every up neighbour if null. */
  private void request(int d, long now, Nbr to) {
    if (!has(d, HAS_FD) || holdingDown || !rateOk(d, now, fdEpoch(d), fdSeqno(d))) {
      return;
    }
    SeqnoRequest r = new SeqnoRequest(self, d, fdEpoch(d), fdSeqno(d), config.seqnoRequestHops());
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
    return new Route(self, ownEpoch, seqno, 0, false, ownSignature());
  }

  /** This router's signature over its current sequence number, made once per number. */
  private OriginSignature ownSignature() {
    if (selSig == null) {
      return null;
    }
    if (ownSig == null || ownSigEpoch != ownEpoch || ownSigSeqno != seqno) {
      ownSig = authority.sign(OriginAuthority.routeClaim(self, ownEpoch, seqno));
      ownSigEpoch = ownEpoch;
      ownSigSeqno = seqno;
    }
    return ownSig;
  }

  /**
   * What this router tells {@code to} about d, or null if nothing; with {@code to} null, what it
   * tells every neighbour but its next hop for d.
   */
  private Route advert(int d, Nbr to, long now) {
    if (d == self) {
      return selfRoute();
    }
    if (selSlot[d] >= 0) {
      boolean via = to != null && selSlot[d] == to.slot;
      return new Route(d, selEpoch(d), selSeqno(d), via ? INF : selMetric[d], via, selSig(d));
    }
    if (has(d, RETRACTING) && now < timers.get(d).retractUntil) {
      return new Route(d, selEpoch(d), selSeqno(d), INF, false, selSig(d));
    }
    return null;
  }

  private OriginSignature selSig(int d) {
    return selSig == null ? null : selSig[d];
  }

  /**
   * Bytes of one route in a ROUTE_UPDATE frame (docs/wire-protocol.md), with its signature: signed
   * routes make a full update longer than the frame limit sooner, and it is then cut.
   */
  private static int routeBytes(Route r) {
    return 17 + (r.signature() == null ? 0 : 1 + r.signature().length());
  }

  private void send(Nbr to, List<Route> routes) {
    if (routes.isEmpty()) {
      return;
    }
    advertsStamp++; // routes offered, seqs advertised
    long now = clock.nowMillis();
    for (Route r : routes) {
      offered(to, r, now);
    }
    if (selSig == null) {
      to.face.send(new RouteUpdate(self, routes));
      return;
    }
    // Version, type, sender, count; cut where the next route would pass the frame limit.
    int limit = config.maxControlFrameBytes();
    int from = 0;
    long bytes = 6;
    for (int i = 0; i < routes.size(); i++) {
      int b = routeBytes(routes.get(i));
      if (i > from && (bytes + b > limit || i - from == 0xFFFF)) {
        to.face.send(new RouteUpdate(self, routes.subList(from, i)));
        from = i;
        bytes = 6;
      }
      bytes += b;
    }
    to.face.send(new RouteUpdate(self, routes.subList(from, routes.size())));
  }

  private void markDirty(int d) {
    if (!has(d, DIRTY)) {
      set(d, DIRTY);
      if (dirtyCount == dirty.length) {
        dirty = Arrays.copyOf(dirty, Math.min(maxRouters, dirtyCount * 2));
      }
      dirty[dirtyCount++] = d;
    }
  }

  /**
   * Whether a change of d goes out at once rather than with the next paced flush: a route that
   * became unreachable (its retraction), and a newer sequence number than the one last advertised
   * (an answer to a sequence-number request, which routers without a feasible route wait for).
   * Better or worse metrics, new next hops and first routes are paced.
   */
  private boolean urgent(int d) {
    if (config.updatePacingMs() == 0) {
      return true;
    }
    if (d != self && selSlot[d] < 0) {
      return true;
    }
    return has(d, SEQ_UNSENT);
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
      int d = dirty[i];
      if (!known(d)) {
        continue;
      }
      if (urgent(d)) {
        dirty[urgentCount++] = d; // DIRTY stays set until the end: in this update
      } else {
        clear(d, DIRTY);
        if (!has(d, PACED)) {
          set(d, PACED);
          if (pacedCount == paced.length) {
            paced = Arrays.copyOf(paced, Math.min(maxRouters, pacedCount * 2));
          }
          paced[pacedCount++] = d;
        }
      }
    }
    dirtyCount = 0;
    boolean flush = pacedCount > 0 && pacer.due(now);
    // A triggered update tells every neighbour the same routes but for poisoned reverse: each
    // route is made once and shared by the neighbours' updates (a cold start has tens of millions
    // of routes in flight across a large simulated network).
    Route[] common = null;
    int[] commonDest = null;
    int commonCount = 0;
    for (Nbr nbr : links.values()) {
      if (!nbr.up) {
        continue;
      }
      List<Route> routes;
      if (nbr.needFull) {
        nbr.needFull = false;
        nbr.nextUpdateAt = now + updateDelay();
        if (!nbr.fullOwed
            && nbr.digests
            && selSig == null
            && urgentCount == 0
            && pacedCount == 0
            && sendDigest(nbr, now)) {
          continue;
        }
        nbr.fullOwed = false;
        nbr.lastFullAt = now;
        routes = new ArrayList<>(maxRouters);
        for (int d = 0; d < maxRouters; d++) {
          if (known(d)) {
            addAdvert(routes, d, nbr, now);
          }
        }
      } else {
        if (common == null) {
          int most = urgentCount + (flush ? pacedCount : 0);
          common = new Route[most];
          commonDest = new int[most];
          for (int i = 0; i < urgentCount; i++) {
            Route r = advert(dirty[i], null, now);
            if (r != null) {
              common[commonCount] = r;
              commonDest[commonCount++] = dirty[i];
            }
          }
          if (flush) {
            for (int i = 0; i < pacedCount; i++) {
              int d = paced[i];
              if (known(d) && !has(d, DIRTY)) { // not sent as urgent just above
                Route r = advert(d, null, now);
                if (r != null) {
                  common[commonCount] = r;
                  commonDest[commonCount++] = d;
                }
              }
            }
          }
        }
        routes = new ArrayList<>(commonCount);
        for (int i = 0; i < commonCount; i++) {
          int d = commonDest[i];
          routes.add(d != self && selSlot[d] == nbr.slot ? advert(d, nbr, now) : common[i]);
          set(d, ADVERTISED);
          clear(d, SEQ_UNSENT);
        }
      }
      send(nbr, routes);
    }
    for (int i = 0; i < urgentCount; i++) {
      clear(dirty[i], DIRTY);
    }
    if (dirty.length > SMALL * 16) {
      dirty = new int[SMALL]; // a cold start's burst: not kept for every router
    }
    if (flush) {
      for (int i = 0; i < pacedCount; i++) {
        clear(paced[i], PACED);
      }
      pacedCount = 0;
      sweepWanted = true; // a destination held only by its pending send may be forgotten
      pacer.sent(now);
      if (paced.length > SMALL * 16) {
        paced = new int[SMALL];
      }
    }
    if (changed) {
      changed = false;
      version++;
      listener.routesChanged();
    }
  }

  /**
   * The time to the next full update: the update interval less a jitter of up to a quarter of it,
   * so that routers started together (a cold start, a simulation) do not all send their whole
   * tables in the same instant every interval. Drawn from a generator seeded by the router and its
   * epoch: a simulation stays deterministic.
   */
  private long updateDelay() {
    long interval = config.updateIntervalMs();
    return interval - jitter.nextLong(interval / 4 + 1);
  }

  private void addAdvert(List<Route> routes, int d, Nbr nbr, long now) {
    Route r = advert(d, nbr, now);
    if (r != null) {
      routes.add(r);
      set(d, ADVERTISED);
      clear(d, SEQ_UNSENT);
    }
  }

  // ---------------------------------------------------------------- state records

  /** A configured neighbour, and the slot of its routes in the entry arrays. */
  private static final class Nbr {
    final int id;
    final int slot;
    Face face;
    int cost;
    long knownEpoch; // 0: not heard (or forgotten)
    long lastHeard = Long.MIN_VALUE;
    boolean up;
    boolean needFull;
    boolean digests; // takes RouteDigest and TableRequest
    // The last digest sent, and the version and stamp it was computed at (-1: none).
    long digestVersion = -1;
    long digestStamp;
    int digestCount;
    long digestHash;
    // The count and hash of the routes held from this neighbour, as of entriesStamp heldStamp.
    long heldStamp = -1;
    int heldCount;
    long heldHash;
    boolean fullOwed; // the next full update goes whole: adjacency up, or the neighbour asked
    long lastFullAt = Long.MIN_VALUE;
    long nextHelloAt;
    long nextUpdateAt;

    Nbr(int id, int slot, Face face, int cost) {
      this.id = id;
      this.slot = slot;
      this.face = face;
      this.cost = cost;
    }
  }

  /** The timers of a destination that is retracted or was recently asked about. */
  private static final class Timers {
    long unreachableSince;
    long retractUntil;
    long requestedAt = Long.MIN_VALUE;
    long reqEpoch;
    int reqSeqno;
  }
}
