package io.bdrp.routing;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedMatcher;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.routing.ControlMessage.Advertisement;
import io.bdrp.routing.ControlMessage.AdvertisementFrames;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateBatch;
import io.bdrp.routing.ControlMessage.PredicateDelta;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * PREDICATES: the encoded predicate of every router, kept by flooding advertisements ⟨origin,
 * epoch, seq, filters⟩.
 *
 * <ul>
 *   <li>A router advertises its own aggregate when it changes, with seq one higher; its epoch is
 *       drawn anew, larger, at each start, so a restarted router's advertisements replace those of
 *       its previous life. Changes in quick succession (a burst of hosts connecting) go out as one
 *       per neighbour by the pacing below, so a host's predicate is in force across the network
 *       within about one pacing interval per hop of being set.
 *   <li>A received advertisement newer than the one held (epoch first, then seq) replaces it and is
 *       passed on to every other neighbour with an adjacency; an equal one is ignored; an older one
 *       is answered with the newer one held, so the neighbour catches up.
 *   <li>On a new adjacency the two sides send each other everything they hold.
 *   <li>What a router owes a neighbour waits in that neighbour's queue, at most one advertisement
 *       per origin (a newer version replaces one not yet sent), and goes out at most once per
 *       {@link RoutingConfig#updatePacingMs()}, batched ({@link ControlMessage.PredicateBatch}); a
 *       lone advertisement still goes at once.
 *   <li>A router remembers, per neighbour and origin, the version the neighbour holds (the last it
 *       sent it or received from it). A newer version of the same epoch goes as the change from
 *       that one ({@link PredicateDelta}: the filters removed and added) when that is shorter. A
 *       neighbour that does not hold the change's base version asks for the whole advertisement
 *       ({@link PredicateRequest}), and the answer is whole.
 *   <li>An origin that has had no route for {@link RoutingConfig#predicateExpiryMs()} is dropped.
 *       When an origin has a route but its advertisement is missing, the advertisement is asked for
 *       from the next hop towards it. Both are checked once every hello interval.
 *   <li>An advertisement for this router's own number that is newer than its own (a previous life
 *       with a larger sequence number, a life whose clock was ahead, a misconfigured twin or a
 *       forged advertisement) makes it move its own version past that one — to that epoch and the
 *       next sequence number — and re-advertise it, paced like any change of its own: the newer
 *       copy held elsewhere is replaced rather than answered back and forth, and no number of such
 *       advertisements makes it flood more than once per hello interval. (How far ahead of the
 *       clock an epoch may be is bounded by the {@link RoutingNode}.)
 *   <li>Every frame sent fits the neighbours' frame limit ({@link
 *       RoutingConfig#maxControlFrameBytes()}): a batch is cut where the next advertisement would
 *       not fit, and no version is held that could not go alone in one frame, so none is ever sent
 *       half or not at all.
 *   <li>With an {@link OriginAuthority} that signs ({@link #useAuthority}; routers with mutual
 *       TLS), every version carries its origin's signature over (origin, epoch, seq, digest of the
 *       whole predicate), kept with the version and passed on however the version is sent; a newer
 *       version of another origin, or of this router's own, is taken only if the signature is the
 *       origin's ({@link #claimsRefused()} counts the others, which are neither held nor passed
 *       on).
 *   <li>What is held is bounded ({@link Refusal}): an origin's version of more filters than {@link
 *       RoutingConfig#maxOriginFilters()}, more bytes of filters than {@link
 *       RoutingConfig#maxOriginFilterBytes()} or a frame beyond the limit is not held, nor one that
 *       would take the other routers' filters together beyond {@link
 *       RoutingConfig#maxPredicateFilterBytes()}, nor one holding the match-all filter when {@link
 *       RoutingConfig#acceptMatchAll()} is off. A refused version of an origin already held leaves
 *       the version held in force (it is not passed on either); each refusal is counted and told to
 *       {@link #onRefusal}, and a refused origin is not asked for again for {@link
 *       RoutingConfig#predicateExpiryMs()}. This router's own aggregate is refused by the
 *       per-origin bounds alone ({@link #setOwn} says why), and then the version advertised stays.
 * </ul>
 *
 * <p>State grows with the number of routers and their filters, never with traffic. Per-origin state
 * is kept in arrays indexed by router number rather than maps (a simulator holds every router's
 * table, 10^8 router pairs at 10,000 routers), and a router holds one {@code Entry} per version of
 * an origin's advertisement, shared by the table and every neighbour's record of what it holds.
 * Owned by one thread (the control thread), which makes every call.
 */
public final class PredicateTable {
  /**
   * One version of an origin's advertisement. A copy of the version already held, received from
   * another neighbour, is not kept as an object of its own: the one held stands for it.
   */
  private static final class Entry {
    final long epoch;
    final long seq;
    final EncodedPredicate predicate;

    /** The origin's signature over this version (null where routers do not sign). */
    final OriginSignature sig;

    /** Bytes of the filters in memory ({@link EncodedPredicate#byteSize()}); 0 without content. */
    final long bytes;

    Entry(long epoch, long seq, EncodedPredicate predicate) {
      this(epoch, seq, predicate, null);
    }

    Entry(long epoch, long seq, EncodedPredicate predicate, OriginSignature sig) {
      this.epoch = epoch;
      this.seq = seq;
      this.predicate = predicate;
      this.sig = sig;
      this.bytes = predicate == null ? 0 : predicate.byteSize();
    }

    private int wireLength = -1;

    int compareVersion(long e, long s) {
      int c = Long.compare(epoch, e);
      return c != 0 ? c : Long.compare(seq, s);
    }

    /** Bytes of the encoded predicate on the wire, computed once for all neighbours. */
    int wireLength() {
      if (wireLength < 0) {
        wireLength = EncodedPredicateCodec.encodedLength(predicate);
      }
      return wireLength;
    }
  }

  /**
   * Whether {@code p} holds the match-all filter: the empty filter (no bit set), which every
   * message's filter covers, as the predicate {@code true} encodes. Its router receives every
   * message. In a minimal set it is the only filter; in any canonical set the first.
   */
  static boolean matchesAll(EncodedPredicate p) {
    return matchesAll(p, p.parameters().newFilter());
  }

  /** As {@link #matchesAll(EncodedPredicate)}, with {@code f} (a filter's words) as scratch. */
  private static boolean matchesAll(EncodedPredicate p, long[] f) {
    if (p.isEmpty()) {
      return false;
    }
    p.filterInto(0, f);
    for (long w : f) {
      if (w != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * A version of an origin's predicate that the table did not take, and why: the bound it exceeds
   * ({@link Reason#knob()} names the configuration knob), the amount it came to and the bound. For
   * this router's own aggregate, {@link #setOwn} returns it, and the router answers the host whose
   * predicate caused it with an error carrying {@link #message()}; for a neighbour's advertisement
   * it goes to {@link #onRefusal}.
   *
   * @param origin the router whose predicate it is
   * @param reason the bound exceeded
   * @param amount what the version came to, in the bound's unit (filters, bytes; 1 for {@link
   *     Reason#MATCH_ALL})
   * @param limit the bound (0 for {@link Reason#MATCH_ALL})
   * @param message a sentence naming the origin, the amount and the knob
   */
  public record Refusal(int origin, Reason reason, long amount, long limit, String message) {
    /** The bounds. */
    public enum Reason {
      /** More filters than {@link RoutingConfig#maxOriginFilters()}. */
      TOO_MANY_FILTERS("routing.maxOriginFilters"),
      /** More bytes of filters than {@link RoutingConfig#maxOriginFilterBytes()}. */
      TOO_MANY_BYTES("routing.maxOriginFilterBytes"),
      /** An advertisement frame longer than {@link RoutingConfig#maxControlFrameBytes()}. */
      FRAME_TOO_LARGE("routing.maxControlFrameBytes"),
      /**
       * The other routers' filters would exceed {@link RoutingConfig#maxPredicateFilterBytes()}.
       */
      TABLE_FULL("routing.maxPredicateFilterBytes"),
      /** The match-all filter, with {@link RoutingConfig#acceptMatchAll()} off. */
      MATCH_ALL("routing.acceptMatchAll");

      private final String knob;

      Reason(String knob) {
        this.knob = knob;
      }

      /** The configuration knob that sets the bound, as the router's configuration names it. */
      public String knob() {
        return knob;
      }
    }

    @Override
    public String toString() {
      return message;
    }
  }

  /** Told when the table's content changes. */
  public interface Listener {
    void predicatesChanged();
  }

  private final int self;
  private long ownEpoch; // the epoch of this router's own advertisement: its start, or moved past
  private final RoutingConfig config;
  private final Clock clock;
  private final Listener listener;
  private final EncodedMatcher matcher;

  /** The version held per origin, by router number (null where none is held). */
  private final Entry[] entries;

  private int entryCount;

  /** Bytes of the filters held for the other routers ({@link Entry#bytes} summed). */
  private long otherBytes;

  /** Origins held whose filters hold the match-all filter, this router included. */
  private int matchAllCount;

  /** One filter's words, for looking at a filter without allocating. */
  private final long[] scratch;

  /** A neighbour with an adjacency, and the advertisements queued for it. */
  private static final class Peer {
    final Face face;

    /**
     * Origins whose advertisement is to be sent, in the order first queued, each once: what goes is
     * the version held when the queue is sent, so a newer version replaces one not yet sent. Grown
     * for a burst (a cold start queues every origin) and made small again once sent.
     */
    int[] queue = new int[SMALL_QUEUE];

    int queueCount;

    /** The origins in {@link #queue}, one bit per router number. */
    final long[] queued;

    /**
     * Per origin, whether the neighbour holds the version this table holds (the last sent to it or
     * received from it): one bit per router number, since after a flood that is the case for almost
     * every origin. An array of entries would cost 4 bytes per origin and neighbour, 1.6 GB in a
     * simulation of 10,000 routers with four links each.
     */
    final long[] current;

    /** Per origin whose bit is clear, the version the neighbour holds if known. */
    Int2ObjectHashMap<Entry> other = new Int2ObjectHashMap<>();

    /**
     * The origins in {@link #other}, one bit per router number: most origins are not in it, and a
     * look in the map for one is a cache miss (in a cold start, one for every advertisement sent).
     */
    final long[] inOther;

    int otherPeak;

    final Pacer pacer;

    Peer(Face face, long pacingMs, int maxRouters) {
      this.face = face;
      this.pacer = new Pacer(pacingMs);
      this.current = new long[(maxRouters + 63) >>> 6];
      this.queued = new long[(maxRouters + 63) >>> 6];
      this.inOther = new long[(maxRouters + 63) >>> 6];
    }

    /** Queues {@code origin} unless it is queued already. */
    void enqueue(int origin) {
      long bit = 1L << origin;
      if ((queued[origin >>> 6] & bit) != 0) {
        return;
      }
      queued[origin >>> 6] |= bit;
      if (queueCount == queue.length) {
        queue = Arrays.copyOf(queue, queueCount * 2);
      }
      queue[queueCount++] = origin;
    }

    boolean holdsCurrent(int origin) {
      return (current[origin >>> 6] & (1L << origin)) != 0;
    }

    void setCurrent(int origin, boolean on) {
      if (on) {
        current[origin >>> 6] |= 1L << origin;
      } else {
        current[origin >>> 6] &= ~(1L << origin);
      }
    }

    void putOther(int origin, Entry e) {
      if (e == null) {
        removeOther(origin);
      } else {
        other.put(origin, e);
        inOther[origin >>> 6] |= 1L << origin;
        otherPeak = Math.max(otherPeak, other.size());
      }
    }

    /** The version the neighbour holds of {@code origin}, if known and not the current one. */
    Entry other(int origin) {
      return (inOther[origin >>> 6] & (1L << origin)) == 0 ? null : other.get(origin);
    }

    void removeOther(int origin) {
      if ((inOther[origin >>> 6] & (1L << origin)) == 0) {
        return;
      }
      inOther[origin >>> 6] &= ~(1L << origin);
      if (other.remove(origin) != null && other.isEmpty() && otherPeak > 64) {
        other = new Int2ObjectHashMap<>(); // a map keeps the table its peak needed: a cold start's
        otherPeak = 0;
      }
    }
  }

  /** The version neighbour {@code p} holds of {@code origin}, or null if none is known. */
  private Entry heldBy(Peer p, int origin) {
    return p.holdsCurrent(origin) ? entries[origin] : p.other(origin);
  }

  /** Records that neighbour {@code p} holds version {@code e} of {@code origin} (null: unknown). */
  private void setHeldBy(Peer p, int origin, Entry e) {
    if (e != null && e == entries[origin]) {
      p.setCurrent(origin, true);
      p.removeOther(origin);
    } else {
      p.setCurrent(origin, false);
      p.putOther(origin, e);
    }
  }

  /**
   * Most advertisements in one {@link PredicateBatch}: a batch is no larger than 64 of the
   * advertisements a router would otherwise send one by one, and is cut sooner where the next would
   * take it beyond {@link RoutingConfig#maxControlFrameBytes()}.
   */
  static final int MAX_BATCH = 64;

  /** The size of a neighbour's queue between bursts. */
  private static final int SMALL_QUEUE = 16;

  private final TreeMap<Integer, Peer> adjacent = new TreeMap<>();

  /** When each held origin without a route was first seen without one. */
  private final OriginTimes unreachableSince;

  /** When the advertisement of each missing origin was last asked for. */
  private final OriginTimes requestedAt = new OriginTimes(0);

  /** When a version of each origin was last refused, for origins refused lately. */
  private final OriginTimes refusedAt = new OriginTimes(0);

  private Consumer<Refusal> refusals = r -> {};
  private long refusedTooLarge;
  private long refusedTableFull;
  private long refusedMatchAll;
  private long ownRefused;

  private OriginAuthority authority = OriginAuthority.NONE;
  private long claimsRefused;

  /** Origins whose newer version came before their certificate, and from which neighbour. */
  private final HashMap<Integer, Integer> awaitingCertificate = new HashMap<>();

  private IntUnaryOperator nextHop = r -> -1;
  private Supplier<int[]> reachable = () -> new int[0];
  private LongSupplier routesVersion = () -> 0;
  private long nextScan;
  // What the last scan saw, so that a scan that would find nothing new is skipped (see tick).
  private long scannedRoutes = Long.MIN_VALUE;
  private long heldChanges;
  private long scannedHeld = -1;
  private boolean missingAtScan;
  private long ownSeq;
  private long rejected;
  private long deltasSent;
  private long resyncs;
  private long buildIndexAt = Long.MAX_VALUE; // when to build the index ahead of the next match

  public PredicateTable(
      int self,
      long epoch,
      BloomParameters params,
      RoutingConfig config,
      Clock clock,
      Listener listener) {
    this.self = self;
    this.ownEpoch = epoch;
    this.config = config;
    this.clock = clock;
    this.listener = listener;
    this.matcher = new EncodedMatcher(params, config.maxRouters());
    this.entries = new Entry[config.maxRouters()];
    this.unreachableSince = new OriginTimes(config.maxRouters());
    this.scratch = params.newFilter();
    this.nextScan = clock.nowMillis() + config.helloIntervalMs();
    hold(self, new Entry(epoch, 0, EncodedPredicate.empty(params)));
  }

  /** The version held for {@code origin}, or null (also for a number out of range). */
  private Entry held(int origin) {
    return origin < 0 || origin >= entries.length ? null : entries[origin];
  }

  private void hold(int origin, Entry e) {
    Entry old = entries[origin];
    if (old == null) {
      entryCount++;
      heldChanges++;
    } else {
      count(origin, old, -1);
    }
    entries[origin] = e;
    count(origin, e, 1);
    rebase(origin, old, e);
    if (authority.enabled()) {
      authority.held(origin, e.epoch, e.seq, e.predicate);
    }
  }

  private void drop(int origin) {
    Entry old = entries[origin];
    if (old != null) {
      entries[origin] = null;
      entryCount--;
      heldChanges++;
      count(origin, old, -1);
      rebase(origin, old, null);
      if (authority.enabled()) {
        authority.held(origin, 0, 0, null);
      }
    }
  }

  /** Adds ({@code sign} 1) or takes away (-1) a held version's share of the totals. */
  private void count(int origin, Entry e, int sign) {
    if (origin != self) {
      otherBytes += sign * e.bytes;
    }
    if (matchesAll(e.predicate, scratch)) {
      matchAllCount += sign;
    }
  }

  /**
   * Why {@code p} may not be held as a newer version of {@code origin}, or null if it may: the
   * per-origin bounds, the frame limit, and for another router the match-all setting and the bound
   * on all other routers' filters together (counting {@code p} instead of the version held).
   */
  private Refusal check(int origin, EncodedPredicate p) {
    String whose =
        origin == self
            ? "this router's aggregate predicate"
            : "the advertisement of router " + origin;
    Refusal bound = bounds(origin, whose, config, authority.enabled(), p);
    if (bound != null || origin == self) {
      return bound;
    }
    if (!config.acceptMatchAll() && matchesAll(p, scratch)) {
      return new Refusal(
          origin,
          Refusal.Reason.MATCH_ALL,
          1,
          0,
          whose
              + " holds the match-all filter (a predicate true: every message), refused by "
              + Refusal.Reason.MATCH_ALL.knob()
              + " = false");
    }
    Entry cur = entries[origin];
    long total = otherBytes - (cur == null ? 0 : cur.bytes) + p.byteSize();
    if (total > config.maxPredicateFilterBytes()) {
      return refusal(
          origin,
          Refusal.Reason.TABLE_FULL,
          total,
          config.maxPredicateFilterBytes(),
          whose
              + " ("
              + p.byteSize()
              + " bytes of Bloom filters) would take the other routers' filters in PREDICATES to "
              + total
              + " bytes");
    }
    return null;
  }

  /**
   * Why {@code p} may not be this router's aggregate under {@code config} ({@code signed}: routers
   * sign their advertisements): the bounds of one origin and the frame limit, as {@link #setOwn}
   * checks them. Pure, for any thread: a router that keeps its aggregate on another thread checks a
   * change there before the loop sees it.
   */
  public static Refusal aggregateRefusal(
      int self, RoutingConfig config, boolean signed, EncodedPredicate p) {
    return bounds(self, "this router's aggregate predicate", config, signed, p);
  }

  /** The bounds any origin's version must keep: filters, bytes and one advertisement frame. */
  private static Refusal bounds(
      int origin, String whose, RoutingConfig config, boolean signed, EncodedPredicate p) {
    if (p.size() > config.maxOriginFilters()) {
      return refusal(
          origin,
          Refusal.Reason.TOO_MANY_FILTERS,
          p.size(),
          config.maxOriginFilters(),
          whose + " has " + p.size() + " Bloom filters");
    }
    if (p.byteSize() > config.maxOriginFilterBytes()) {
      return refusal(
          origin,
          Refusal.Reason.TOO_MANY_BYTES,
          p.byteSize(),
          config.maxOriginFilterBytes(),
          whose + " takes " + p.byteSize() + " bytes of Bloom filters");
    }
    long frame = AdvertisementFrames.whole(p) + (signed ? AdvertisementFrames.SIGNED_EXTRA : 0);
    if (frame > config.maxControlFrameBytes()) {
      return refusal(
          origin,
          Refusal.Reason.FRAME_TOO_LARGE,
          frame,
          config.maxControlFrameBytes(),
          whose + " needs a " + frame + "-byte advertisement frame (the neighbours' frame limit)");
    }
    return null;
  }

  private static Refusal refusal(
      int origin, Refusal.Reason reason, long amount, long limit, String what) {
    return new Refusal(
        origin,
        reason,
        amount,
        limit,
        what + ", more than " + reason.knob() + " = " + limit + " allows");
  }

  /** Whether {@code p} is within the per-origin bounds on filters and bytes. */
  private boolean withinOriginBounds(EncodedPredicate p) {
    return p.size() <= config.maxOriginFilters() && p.byteSize() <= config.maxOriginFilterBytes();
  }

  /** Counts a neighbour's refused version, holds off asking for its origin, and says so. */
  private void refuse(Refusal r) {
    switch (r.reason()) {
      case TABLE_FULL -> refusedTableFull++;
      case MATCH_ALL -> refusedMatchAll++;
      default -> refusedTooLarge++;
    }
    refusedAt.put(r.origin(), clock.nowMillis());
    refusals.accept(r);
  }

  /**
   * Tells {@code listener} of every version of another router's predicate refused from now on (on
   * the control thread, as it happens): a {@link Refusal.Reason#TABLE_FULL} is worth a warning,
   * since then routers' interests are missing from PREDICATES.
   */
  public void onRefusal(Consumer<Refusal> listener) {
    refusals = listener;
  }

  /**
   * Versions of other routers' predicates refused for exceeding a per-origin bound ({@link
   * Refusal.Reason#TOO_MANY_FILTERS}, {@link Refusal.Reason#TOO_MANY_BYTES}) or the frame limit
   * ({@link Refusal.Reason#FRAME_TOO_LARGE}).
   */
  public long refusedTooLarge() {
    return refusedTooLarge;
  }

  /** Versions of other routers' predicates refused because PREDICATES was full. */
  public long refusedTableFull() {
    return refusedTableFull;
  }

  /** Versions of other routers' predicates refused for holding the match-all filter. */
  public long refusedMatchAll() {
    return refusedMatchAll;
  }

  /** Aggregates of this router's own hosts not advertised because they exceeded a bound. */
  public long ownRefused() {
    return ownRefused;
  }

  /**
   * Origins held, this router included, whose predicate holds the match-all filter: each receives
   * every message published anywhere, and a message whose destination set they fill beyond {@link
   * RoutingConfig#broadcastFraction()} is broadcast.
   */
  public int matchAllOrigins() {
    return matchAllCount;
  }

  /**
   * Bytes of filters held for the other routers, which {@link
   * RoutingConfig#maxPredicateFilterBytes()} bounds.
   */
  public long otherFilterBytes() {
    return otherBytes;
  }

  /**
   * The version held of {@code origin} went from {@code old} to {@code now}: neighbours that held
   * the old one still do, and one already recorded as holding the new one now holds the current.
   */
  private void rebase(int origin, Entry old, Entry now) {
    if (old == now) {
      return;
    }
    for (Peer p : adjacent.values()) {
      if (p.holdsCurrent(origin)) {
        p.setCurrent(origin, false);
        p.putOther(origin, old);
      } else if (now != null && p.other(origin) == now) {
        p.removeOther(origin);
        p.setCurrent(origin, true);
      }
    }
  }

  /** The encoded predicate held for {@code router}, or null. */
  public EncodedPredicate get(int router) {
    Entry e = held(router);
    return e == null ? null : e.predicate;
  }

  /**
   * The epoch of the version held for {@code router}, or -1 if none is held: it changes when that
   * router restarts.
   */
  public long epoch(int router) {
    Entry e = held(router);
    return e == null ? -1 : e.epoch;
  }

  /**
   * The sequence number, within its {@link #epoch}, of the version held for {@code router}, or -1
   * if none is held: it grows with every change that router advertises.
   */
  public long seq(int router) {
    Entry e = held(router);
    return e == null ? -1 : e.seq;
  }

  /** The number of origins held, this router included. */
  public int size() {
    return entryCount;
  }

  /** Advertisements refused (wrong Bloom parameters, router number out of range). */
  public long rejected() {
    return rejected;
  }

  /**
   * How long after the last change of PREDICATES the index is built on the control path, ahead of
   * the next message: a burst of advertisements costs one build, and the first message after it (on
   * every router at once, when traffic starts after a flood) does not pay for one. A build over a
   * few thousand filters takes tens to hundreds of milliseconds.
   */
  static final long INDEX_BUILD_DELAY_MS = 200;

  private boolean buildIndexAhead = true;

  /**
   * Whether the index is built on the control path after a change ({@link #INDEX_BUILD_DELAY_MS}),
   * as by default, or only when {@link #index()} is first asked for after it. A simulation of
   * thousands of routers turns it off: there every router would rebuild its index over all the
   * others' filters every few hundred simulated milliseconds of a cold start, for no message.
   */
  public void buildIndexAhead(boolean ahead) {
    buildIndexAhead = ahead;
    if (!ahead) {
      buildIndexAt = Long.MAX_VALUE;
    }
  }

  private void indexChanged() {
    if (builder != null) {
      startBuild();
    } else if (buildIndexAhead) {
      buildIndexAt = clock.nowMillis() + INDEX_BUILD_DELAY_MS;
    }
  }

  /**
   * Builds the index of D somewhere else than the thread that owns this table: {@code work} is run
   * there, and its result handed back to {@code done} on the owning thread (null if the build
   * failed).
   */
  public interface IndexBuilder {
    void build(Supplier<EncodedIndex> work, Consumer<EncodedIndex> done);
  }

  private IndexBuilder builder;
  private boolean building;

  /**
   * Builds the index after each change with {@code b}, off this thread; until it is back, {@link
   * #index()} answers with the index built last, as if the change had arrived that much later. A
   * router gives its control thread, so that no advertisement makes its event loop index every
   * router's filters.
   */
  public void buildIndexWith(IndexBuilder b) {
    builder = b;
    buildIndexAt = Long.MAX_VALUE;
    if (!matcher.hasSnapshot()) {
      startBuild();
    }
  }

  private void startBuild() {
    if (building) {
      return; // the build under way is found out of date when it is back, and another starts
    }
    building = true;
    long v = matcher.version();
    Map<Integer, EncodedPredicate> held = matcher.held();
    BloomParameters p = matcher.parameters();
    builder.build(
        () -> EncodedIndex.build(p, held),
        index -> {
          building = false;
          if (index == null || !matcher.install(v, index)) {
            if (index == null) {
              return; // the next index() builds it here
            }
            startBuild();
          }
        });
  }

  /** Advertisements sent as the change from the version the neighbour held. */
  public long deltasSent() {
    return deltasSent;
  }

  /** Changes received whose base version was not held, answered by asking for the whole. */
  public long resyncs() {
    return resyncs;
  }

  /** The total size of the filters held, in bytes, this router's own included. */
  public long filterBytes() {
    return otherBytes + entries[self].bytes;
  }

  /**
   * The index over the other routers' predicates (this router's own is not in it: its hosts are
   * matched exactly), rebuilt only after a change.
   */
  public EncodedIndex index() {
    if (building && !matcher.hasSnapshot() && matcher.latest() != null) {
      return matcher.latest();
    }
    return matcher.snapshot();
  }

  /** Whether {@link #index()} is built for the current predicates. */
  public boolean indexReady() {
    return matcher.hasSnapshot();
  }

  /** A version that changes whenever {@link #index()} would. */
  public long version() {
    return matcher.version();
  }

  /**
   * Sets this router's own aggregate and advertises it when it changed, unless it exceeds {@link
   * RoutingConfig#maxOriginFilters()}, {@link RoutingConfig#maxOriginFilterBytes()} or could not go
   * in one frame of {@link RoutingConfig#maxControlFrameBytes()}: then the version advertised stays
   * in force, the refusal is counted ({@link #ownRefused()}) and returned.
   *
   * @return null when the aggregate is in force (advertised, or unchanged), else why it is not
   */
  public Refusal setOwn(EncodedPredicate p) {
    Entry cur = entries[self];
    if (cur.predicate.equals(p)) {
      return null;
    }
    Refusal r = check(self, p);
    if (r != null) {
      ownRefused++;
      return r;
    }
    ownSeq++;
    hold(self, own(ownEpoch, ownSeq, p));
    flood(self, entries[self], -1);
    return null;
  }

  /** Version (epoch, seq) of this router's own predicate {@code p}, signed if routers sign. */
  private Entry own(long epoch, long seq, EncodedPredicate p) {
    OriginSignature sig =
        authority.enabled()
            ? authority.sign(OriginAuthority.advertisementClaim(self, epoch, seq, p))
            : null;
    return new Entry(epoch, seq, p, sig);
  }

  /**
   * Signs this router's advertisements with {@code a} and takes a newer version of another origin's
   * (or a claim about this router's own) only with the origin's valid signature over it from now on
   * ({@link OriginAuthority#advertisementClaim}: the digest of the whole predicate, so a version's
   * signature holds whether a relay sends it whole, as a change from any base, or in a batch).
   * {@link OriginAuthority#NONE}, the default, signs and checks nothing. The version held of this
   * router is signed at once.
   */
  public void useAuthority(OriginAuthority a) {
    authority = java.util.Objects.requireNonNull(a, "authority");
    Entry cur = entries[self];
    hold(self, own(cur.epoch, cur.seq, cur.predicate));
  }

  /**
   * Versions of other origins' advertisements (or claims about this router's own) refused for their
   * signature: missing, bad, or of an origin whose certificate was not held yet.
   */
  public long claimsRefused() {
    return claimsRefused;
  }

  /**
   * Whether version (epoch, seq) of {@code origin}'s predicate {@code p} carries the origin's
   * signature; if not, counts and reports it, and remembers to ask {@code sender} again once a
   * missing certificate comes.
   */
  private boolean verified(
      int sender, int origin, long epoch, long seq, EncodedPredicate p, OriginSignature sig) {
    if (!authority.enabled()) {
      return true;
    }
    OriginAuthority.Verdict v = authority.verifyAdvertisement(origin, epoch, seq, p, sig);
    if (v == OriginAuthority.Verdict.OK) {
      return true;
    }
    claimsRefused++;
    if (v == OriginAuthority.Verdict.UNKNOWN_CERTIFICATE && awaitingCertificate.size() < 4096) {
      awaitingCertificate.put(origin, sender);
    }
    authority.refused(OriginAuthority.ClaimKind.ADVERTISEMENT, origin, sender, v);
    return false;
  }

  /**
   * The certificate of {@code origin} came: a version of it refused for want of the certificate is
   * asked for again, from the neighbour that sent it (or, when none is held, the next hop).
   */
  public void certificateArrived(int origin) {
    Integer sender = awaitingCertificate.remove(origin);
    Peer p = sender == null ? null : adjacent.get(sender);
    if (p != null) {
      setHeldBy(p, origin, null);
      p.face.send(new PredicateRequest(self, origin));
    } else if (origin >= 0 && origin < entries.length && entries[origin] == null) {
      requestedAt.remove(origin);
      requestIfMissing(origin);
    }
  }

  /**
   * Advertises this router's predicate again under the next sequence number, signed anew: a renewed
   * certificate signs a version every router verifies with it.
   */
  public void resign() {
    Entry cur = entries[self];
    ownSeq++;
    hold(self, own(ownEpoch, ownSeq, cur.predicate));
    flood(self, entries[self], -1);
  }

  /** A neighbour's adjacency came up: send it every advertisement held, by ascending origin. */
  public void adjacencyUp(Face face) {
    Peer p = new Peer(face, config.updatePacingMs(), config.maxRouters());
    adjacent.put(face.neighbour(), p);
    for (int origin = 0; origin < entries.length; origin++) {
      if (entries[origin] != null) {
        p.enqueue(origin);
      }
    }
    flushIfDue(p);
  }

  /** A neighbour's adjacency went down. */
  public void adjacencyDown(int neighbour) {
    adjacent.remove(neighbour);
  }

  /**
   * Tells the table where routes come from: {@code nextHop} gives the next hop towards a router (or
   * -1) and {@code reachable} the routers with a route. The table looks at them once every hello
   * interval ({@link #tick()}), not at every route change: expiry of unreachable origins and
   * requests for missing advertisements are not urgent, and a scan costs one pass over the table.
   * {@code version} changes whenever a next hop or the reachable set may have ({@link
   * DistanceVector#version()}): a scan is skipped when nothing it looks at has changed since the
   * last one, which found nothing to time, expire or ask for. So a quiet network's scans cost
   * nothing per origin.
   */
  public void useRoutes(IntUnaryOperator nextHop, Supplier<int[]> reachable, LongSupplier version) {
    this.nextHop = nextHop;
    this.reachable = reachable;
    this.routesVersion = version;
  }

  /**
   * Asks the next hop towards {@code origin} for its advertisement when none is held; at most once
   * per dead interval per origin. A number out of range is never asked for: no advertisement of it
   * would be accepted.
   *
   * @return whether the advertisement of {@code origin} is missing (asked for now or not)
   */
  public boolean requestIfMissing(int origin) {
    if (origin == self || origin < 0 || origin >= entries.length || entries[origin] != null) {
      return false;
    }
    long refused = refusedAt.get(origin);
    if (refused != OriginTimes.NONE) {
      if (clock.nowMillis() - refused < config.predicateExpiryMs()) {
        return true; // it would be refused again, likely: not asked for every dead interval
      }
      refusedAt.remove(origin);
    }
    int hop = nextHop.applyAsInt(origin);
    Peer f = hop < 0 ? null : adjacent.get(hop);
    if (f == null) {
      return true;
    }
    long now = clock.nowMillis();
    long last = requestedAt.get(origin);
    if (last != OriginTimes.NONE && now - last < config.deadIntervalMs()) {
      return true;
    }
    requestedAt.put(origin, now);
    f.face.send(new PredicateRequest(self, origin));
    return true;
  }

  /**
   * Versions of advertisements shared by the tables of many routers in one process, as in the
   * simulator: a table that takes a version another table already holds keeps the same object (and
   * does not rebuild a delta's result), so that N routers hold one copy of each origin's current
   * advertisement rather than N. Versions of one origin carry the same content wherever they are
   * held, so sharing changes no result. Only for tables owned by one thread.
   */
  public static final class SharedVersions {
    private final Entry[] latest;

    /** For routers numbered below {@code maxRouters}. */
    public SharedVersions(int maxRouters) {
      latest = new Entry[maxRouters];
    }

    /** The shared version {@code d} leads to, or null. */
    Entry find(int origin, PredicateDelta d) {
      Entry l = origin < latest.length ? latest[origin] : null;
      return l != null && l.compareVersion(d.epoch(), d.seq()) == 0 ? l : null;
    }

    /** The shared object for this version, made from {@code p} if it is new. */
    Entry version(int origin, long epoch, long seq, EncodedPredicate p) {
      if (origin >= latest.length) {
        return new Entry(epoch, seq, p);
      }
      Entry l = latest[origin];
      if (l != null) {
        int c = l.compareVersion(epoch, seq);
        if (c == 0) {
          return l;
        }
        if (c > 0) {
          return new Entry(epoch, seq, p); // an older version: not shared
        }
      }
      return latest[origin] = new Entry(epoch, seq, p);
    }
  }

  private SharedVersions sharedVersions;

  /** Shares versions with the other tables given the same {@code versions}. */
  public void shareVersions(SharedVersions versions) {
    sharedVersions = versions;
  }

  private Entry shared(int origin, long epoch, long seq, EncodedPredicate p, OriginSignature sig) {
    return sharedVersions == null || sig != null
        ? new Entry(epoch, seq, p, sig)
        : sharedVersions.version(origin, epoch, seq, p);
  }

  /** Handles an advertisement from a neighbour. */
  public void receive(PredicateAd ad) {
    int origin = ad.origin();
    if (origin < 0 || origin >= config.maxRouters()) {
      rejected++;
      return;
    }
    if (!ad.predicate().parameters().equals(matcher.parameters())) {
      rejected++;
      return;
    }
    Entry cur = entries[origin];
    Peer from = adjacent.get(ad.sender());
    int c = cur == null ? -1 : cur.compareVersion(ad.epoch(), ad.seq());
    Entry e;
    if (c == 0) {
      // The version already held (as every neighbour but the first sends it in a flood), so that
      // the neighbour's record and the table share one object.
      e = cur;
    } else if (c < 0 && origin != self) {
      if (!verified(ad.sender(), origin, ad.epoch(), ad.seq(), ad.predicate(), ad.signature())) {
        if (from != null) {
          setHeldBy(from, origin, null);
        }
        return;
      }
      Refusal r = check(origin, ad.predicate());
      if (r != null) {
        if (from != null) {
          setHeldBy(from, origin, null); // its content is not kept, not even as the neighbour's
        }
        refuse(r);
        return;
      }
      e = shared(origin, ad.epoch(), ad.seq(), ad.predicate(), ad.signature());
    } else {
      if (c < 0
          && !verified(ad.sender(), origin, ad.epoch(), ad.seq(), ad.predicate(), ad.signature())) {
        return; // a claim about this router that it cannot have made: not moved past
      }
      // Older, or about this router: only the version matters here, and the content is kept as
      // the neighbour's (the base of a change sent to it) only within the per-origin bounds.
      e =
          withinOriginBounds(ad.predicate())
              ? shared(origin, ad.epoch(), ad.seq(), ad.predicate(), null)
              : null;
    }
    if (from != null) {
      setHeldBy(from, origin, e);
    }
    accept(ad.sender(), origin, e != null ? e : new Entry(ad.epoch(), ad.seq(), null));
  }

  /**
   * Handles a change from a neighbour: applied to the version held when that is its base, else
   * answered with a request for the whole advertisement.
   */
  public void receive(PredicateDelta d) {
    int origin = d.origin();
    if (origin < 0
        || origin >= config.maxRouters()
        || !d.removed().parameters().equals(matcher.parameters())
        || !d.added().parameters().equals(matcher.parameters())) {
      rejected++;
      return;
    }
    Peer from = adjacent.get(d.sender());
    Entry cur = entries[origin];
    int c = cur == null ? -1 : cur.compareVersion(d.epoch(), d.seq());
    if (origin != self && c < 0) {
      boolean based = cur != null && cur.compareVersion(d.epoch(), d.baseSeq()) == 0;
      Entry known = based && sharedVersions != null ? sharedVersions.find(origin, d) : null;
      // A change applied and verified ahead of time against this very base (a version's content
      // is the one its origin signed, wherever it was computed) needs neither here.
      EncodedPredicate prepared =
          based && known == null && authority.enabled()
              ? authority.preparedChange(origin, d.epoch(), d.baseSeq(), d.seq(), d.signature())
              : null;
      EncodedPredicate p =
          known != null
              ? known.predicate
              : prepared != null
                  ? prepared
                  : based ? cur.predicate.apply(d.removed(), d.added()) : null;
      if (p == null) {
        resyncs++;
        if (from != null) {
          setHeldBy(from, origin, null);
          from.face.send(new PredicateRequest(self, origin));
        }
        return;
      }
      if (known == null
          && prepared == null
          && !verified(d.sender(), origin, d.epoch(), d.seq(), p, d.signature())) {
        if (from != null) {
          setHeldBy(from, origin, null);
        }
        return;
      }
      Refusal r = check(origin, p);
      if (r != null) {
        if (from != null) {
          setHeldBy(from, origin, null);
        }
        refuse(r);
        return;
      }
      Entry e = known != null ? known : shared(origin, d.epoch(), d.seq(), p, d.signature());
      if (from != null) {
        setHeldBy(from, origin, e);
      }
      accept(d.sender(), origin, e);
      return;
    }
    // Not newer than what is held, or about this router itself: only the version matters. The
    // neighbour's content is known only when it is the version held here.
    if (origin == self && c < 0 && authority.enabled()) {
      // A newer version of this router's own, as a change: its signature covers the whole, so the
      // whole is asked for and verified before this router moves past it.
      if (from != null) {
        setHeldBy(from, origin, null);
        from.face.send(new PredicateRequest(self, origin));
      }
      return;
    }
    if (from != null) {
      setHeldBy(from, origin, c == 0 ? cur : null);
    }
    accept(d.sender(), origin, new Entry(d.epoch(), d.seq(), null));
  }

  /**
   * A version of {@code origin} from neighbour {@code sender}: kept and passed on when newer than
   * the one held, answered with the one held when older. {@code e.predicate} is null only when the
   * version is not newer or is about this router (its content is then never used).
   */
  private void accept(int sender, int origin, Entry ad) {
    Entry cur = entries[origin];
    if (origin == self) {
      if (cur.compareVersion(ad.epoch, ad.seq) < 0) {
        // Someone holds a newer version of this router's advertisement than it has: move past it
        // so that the current one replaces it everywhere.
        boolean lastSeq = ad.seq == Long.MAX_VALUE;
        ownEpoch = lastSeq ? ad.epoch + 1 : ad.epoch;
        ownSeq = lastSeq ? 0 : ad.seq + 1;
        hold(self, own(ownEpoch, ownSeq, cur.predicate));
        flood(self, entries[self], -1);
      } else if (cur.compareVersion(ad.epoch, ad.seq) > 0) {
        reply(sender, origin, cur);
      }
      return;
    }
    int c = cur == null ? -1 : cur.compareVersion(ad.epoch, ad.seq);
    if (c > 0) {
      reply(sender, origin, cur);
      return;
    }
    if (c == 0) {
      return;
    }
    Entry e = ad;
    hold(origin, e);
    requestedAt.remove(origin);
    refusedAt.remove(origin);
    if (nextHop.applyAsInt(origin) < 0) {
      unreachableSince.putIfAbsent(origin, clock.nowMillis());
    }
    if (matcher.put(origin, e.predicate)) {
      indexChanged();
      listener.predicatesChanged();
    }
    flood(origin, e, sender);
  }

  /**
   * Handles a request from a neighbour: answer with the whole advertisement held, if any (the
   * neighbour is taken to hold no version of it).
   */
  public void receive(PredicateRequest req) {
    Peer p = adjacent.get(req.sender());
    if (p != null && req.origin() >= 0 && req.origin() < entries.length) {
      setHeldBy(p, req.origin(), null);
    }
    Entry e = held(req.origin());
    if (e != null) {
      reply(req.sender(), req.origin(), e);
    }
  }

  /**
   * Once every hello interval: starts the expiry clock of origins without a route (and stops that
   * of origins with one), drops origins unreachable for {@link RoutingConfig#predicateExpiryMs()}
   * (so an origin goes up to a hello interval later than that), and asks for the advertisements of
   * reachable origins that are missing.
   */
  public void tick() {
    long now = clock.nowMillis();
    if (now >= buildIndexAt) {
      buildIndexAt = Long.MAX_VALUE;
      matcher.snapshot();
    }
    for (Peer p : adjacent.values()) {
      flushIfDue(p);
    }
    if (now < nextScan) {
      return;
    }
    nextScan = now + config.helloIntervalMs();
    // The scan times origins without a route, expires them and refusals, and asks for missing
    // advertisements. With no time running, nothing missing at the last scan, and neither the
    // routes nor the set of held origins changed since, it would do none of these.
    long routes = routesVersion.getAsLong();
    if (routes == scannedRoutes
        && heldChanges == scannedHeld
        && !missingAtScan
        && unreachableSince.size() == 0
        && refusedAt.size() == 0) {
      return;
    }
    // Only a held origin other than this router has an expiry clock (started in accept or here,
    // removed here with the origin), so one pass over the held origins keeps and checks them all.
    boolean changed = false;
    for (int origin = 0; origin < entries.length; origin++) {
      if (origin == self) {
        continue;
      }
      if (entries[origin] == null) {
        long refused = refusedAt.size == 0 ? OriginTimes.NONE : refusedAt.get(origin);
        if (refused != OriginTimes.NONE && now - refused >= config.predicateExpiryMs()) {
          refusedAt.remove(origin); // not kept for every number ever refused
        }
        continue;
      }
      if (nextHop.applyAsInt(origin) >= 0) {
        unreachableSince.remove(origin);
        continue;
      }
      unreachableSince.putIfAbsent(origin, now);
      if (now - unreachableSince.get(origin) >= config.predicateExpiryMs()) {
        unreachableSince.remove(origin);
        drop(origin);
        changed |= matcher.remove(origin);
      }
    }
    if (changed) {
      indexChanged();
      listener.predicatesChanged();
    }
    boolean missing = false;
    for (int r : reachable.get()) {
      missing |= requestIfMissing(r);
    }
    missingAtScan = missing;
    scannedRoutes = routes;
    scannedHeld = heldChanges;
  }

  /** When {@link #tick()} next has work. */
  public long nextDeadlineMillis() {
    long t = Math.min(nextScan, buildIndexAt);
    for (Peer p : adjacent.values()) {
      if (p.queueCount > 0) {
        t = Math.min(t, p.pacer.next());
      }
    }
    return t;
  }

  /** Advertisements queued for neighbours, not yet sent. */
  public int queued() {
    int n = 0;
    for (Peer p : adjacent.values()) {
      n += p.queueCount;
    }
    return n;
  }

  private void reply(int neighbour, int origin, Entry e) {
    Peer p = adjacent.get(neighbour);
    if (p != null) {
      send(p, origin, e);
    }
  }

  private void flood(int origin, Entry e, int except) {
    for (Peer p : adjacent.values()) {
      if (p.face.neighbour() != except) {
        send(p, origin, e);
      }
    }
  }

  /**
   * Queues {@code e} for the neighbour (replacing an older version of the origin not yet sent) and
   * sends the queue if its pacing allows: at most one message per {@link
   * RoutingConfig#updatePacingMs()} per neighbour, holding everything queued meanwhile (a lone
   * advertisement still goes at once). A cold start or a burst of changes then costs a few batches
   * per link instead of one message per origin, and an advertisement superseded within the interval
   * is never sent.
   */
  private void send(Peer p, int origin, Entry e) {
    p.enqueue(origin);
    flushIfDue(p);
  }

  private void flushIfDue(Peer p) {
    long now = clock.nowMillis();
    if (p.queueCount == 0 || !p.pacer.due(now)) {
      return;
    }
    p.pacer.sent(now); // also when the link is backlogged: it is asked again an interval later
    List<Advertisement> batch = new ArrayList<>(Math.min(p.queueCount, MAX_BATCH));
    long batchBytes = AdvertisementFrames.EMPTY_BATCH;
    int i = 0;
    if (!p.face.backlogged()) {
      for (; i < p.queueCount; i++) {
        int origin = p.queue[i];
        Entry e = entries[origin];
        Entry held = heldBy(p, origin);
        if (e == null || held == e) {
          p.queued[origin >>> 6] &= ~(1L << origin);
          continue; // dropped meanwhile, or the neighbour sent this very version since
        }
        Advertisement a = advertisement(origin, e, held);
        long bytes = AdvertisementFrames.inBatch(a);
        // A batch ends where the next advertisement would take its frame beyond the limit. A lone
        // advertisement goes in a frame of its own, which fits: no version is held that does not
        // (check), and a change goes only when it is shorter than the whole.
        if (!batch.isEmpty()
            && (batch.size() == MAX_BATCH || batchBytes + bytes > config.maxControlFrameBytes())) {
          sendBatch(p, batch);
          batch.clear();
          batchBytes = AdvertisementFrames.EMPTY_BATCH;
          if (p.face.backlogged()) {
            // The link holds as much as it should: the rest stays queued, as origins, and goes as
            // the versions held then (a new neighbour's whole table goes a few frames at a time,
            // as fast as the neighbour reads, not all at once into the router's memory).
            break;
          }
        }
        p.queued[origin >>> 6] &= ~(1L << origin);
        if (a instanceof PredicateDelta) {
          deltasSent++;
        }
        batch.add(a);
        batchBytes += bytes;
        setHeldBy(p, origin, e);
      }
    }
    int left = p.queueCount - i;
    System.arraycopy(p.queue, i, p.queue, 0, left);
    p.queueCount = left;
    if (left == 0 && p.queue.length > SMALL_QUEUE * 16) {
      p.queue = new int[SMALL_QUEUE]; // a cold start's burst: not kept for every neighbour
    }
    if (!batch.isEmpty()) {
      sendBatch(p, batch);
    }
  }

  /** Sends the advertisements as one frame: a lone one as itself, more as a batch. */
  private void sendBatch(Peer p, List<Advertisement> batch) {
    // A signed advertisement travels in a batch, alone if need be (see AdvertisementFrames).
    p.face.send(
        batch.size() == 1 && batch.get(0).signature() == null
            ? batch.get(0)
            : new PredicateBatch(self, batch));
  }

  /**
   * Version {@code e} of {@code origin} for a neighbour that holds {@code held} (or nothing): the
   * change from {@code held} when that is of the same epoch, older, and the change is shorter on
   * the wire than the whole.
   */
  private Advertisement advertisement(int origin, Entry e, Entry held) {
    if (held != null && held.epoch == e.epoch && held.seq < e.seq) {
      EncodedPredicate removed = held.predicate.minus(e.predicate);
      EncodedPredicate added = e.predicate.minus(held.predicate);
      if (Long.BYTES
              + EncodedPredicateCodec.encodedLength(removed)
              + EncodedPredicateCodec.encodedLength(added)
          < e.wireLength()) {
        return new PredicateDelta(self, origin, e.epoch, held.seq, e.seq, removed, added, e.sig);
      }
    }
    return new PredicateAd(self, origin, e.epoch, e.seq, e.predicate, e.sig);
  }

  /**
   * Times in milliseconds by origin, for the few origins that have one: origins without a route,
   * advertisements asked for. Open addressing on the router number (linear probing, at most half
   * full), no boxing, and no table at all while empty, which these nearly always are: an array by
   * router number would cost 8 bytes per origin in every router, 800 MB at 10,000 routers.
   *
   * <p>Where most origins can have a time at once (origins without a route during a cold start,
   * when advertisements come before the routes to their origins), a table made with {@code
   * maxRouters} turns dense above an eighth of them: an offset in milliseconds from a base time per
   * router number, 4 bytes an origin rather than the 24 to 48 a full open-addressing table takes
   * per entry. It turns back below a thirty-second, and for a time or origin a dense table cannot
   * hold.
   */
  static final class OriginTimes {
    /** What {@link #get} returns for an origin without a time. */
    static final long NONE = Long.MIN_VALUE;

    private static final int ABSENT = Integer.MIN_VALUE;

    private final int maxRouters; // 0: never dense
    private int[] slots; // origin + 1 in a used slot, 0 in a free one; null while empty
    private long[] times;
    private int[] dense; // by origin, the time less base, or ABSENT; null unless dense
    private long base;
    private int size;

    OriginTimes(int maxRouters) {
      this.maxRouters = maxRouters;
    }

    /** How many origins have a time. */
    int size() {
      return size;
    }

    /** Whether the times are held in an array by origin. */
    boolean isDense() {
      return dense != null;
    }

    private boolean fitsDense(int origin, long t) {
      long off = t - base;
      return origin >= 0 && origin < dense.length && off > ABSENT && off <= Integer.MAX_VALUE;
    }

    private void toDense() {
      int[] oldSlots = slots;
      long[] oldTimes = times;
      long min = Long.MAX_VALUE;
      for (int i = 0; i < oldSlots.length; i++) {
        if (oldSlots[i] != 0) {
          min = Math.min(min, oldTimes[i]);
        }
      }
      int[] d = new int[maxRouters];
      Arrays.fill(d, ABSENT);
      for (int i = 0; i < oldSlots.length; i++) {
        long off = oldTimes[i] - min;
        if (oldSlots[i] != 0 && (oldSlots[i] - 1 >= maxRouters || off > Integer.MAX_VALUE)) {
          return; // a time or origin it could not hold: stays sparse
        }
      }
      for (int i = 0; i < oldSlots.length; i++) {
        if (oldSlots[i] != 0) {
          d[oldSlots[i] - 1] = (int) (oldTimes[i] - min);
        }
      }
      dense = d;
      base = min;
      slots = null;
      times = null;
    }

    private void toSparse() {
      int[] d = dense;
      dense = null;
      size = 0;
      for (int o = 0; o < d.length; o++) {
        if (d[o] != ABSENT) {
          sparsePut(o, base + d[o]);
        }
      }
    }

    private static int home(int origin, int mask) {
      int h = origin * 0x9E3779B9;
      return (h ^ (h >>> 16)) & mask;
    }

    long get(int origin) {
      if (dense != null) {
        return origin < 0 || origin >= dense.length || dense[origin] == ABSENT
            ? NONE
            : base + dense[origin];
      }
      if (slots == null) {
        return NONE;
      }
      int mask = slots.length - 1;
      for (int i = home(origin, mask); slots[i] != 0; i = (i + 1) & mask) {
        if (slots[i] == origin + 1) {
          return times[i];
        }
      }
      return NONE;
    }

    void putIfAbsent(int origin, long t) {
      if (get(origin) == NONE) {
        put(origin, t);
      }
    }

    void put(int origin, long t) {
      if (dense != null) {
        if (fitsDense(origin, t)) {
          if (dense[origin] == ABSENT) {
            size++;
          }
          dense[origin] = (int) (t - base);
          return;
        }
        toSparse();
      } else if (slots != null
          && 2 * (size + 1) > slots.length
          && maxRouters > 0
          && 8 * (size + 1) > maxRouters) {
        // Where the open-addressing table would double, an array by origin is smaller.
        toDense();
        if (dense != null && fitsDense(origin, t)) {
          put(origin, t);
          return;
        } else if (dense != null) {
          toSparse();
        }
      }
      sparsePut(origin, t);
    }

    private void sparsePut(int origin, long t) {
      if (slots == null) {
        slots = new int[8];
        times = new long[8];
      } else if (2 * (size + 1) > slots.length) {
        resize(2 * slots.length);
      }
      int mask = slots.length - 1;
      int i = home(origin, mask);
      while (slots[i] != 0 && slots[i] != origin + 1) {
        i = (i + 1) & mask;
      }
      if (slots[i] == 0) {
        slots[i] = origin + 1;
        size++;
      }
      times[i] = t;
    }

    void remove(int origin) {
      if (dense != null) {
        if (origin >= 0 && origin < dense.length && dense[origin] != ABSENT) {
          dense[origin] = ABSENT;
          size--;
          if (size == 0) {
            dense = null;
          } else if (32 * size < maxRouters) {
            toSparse();
          }
        }
        return;
      }
      if (slots == null) {
        return;
      }
      int mask = slots.length - 1;
      int i = home(origin, mask);
      while (slots[i] != origin + 1) {
        if (slots[i] == 0) {
          return;
        }
        i = (i + 1) & mask;
      }
      // Move later entries of the run back into the gap, each that may sit there (its home is not
      // between the gap and it), so that a lookup, which stops at a free slot, still finds them.
      for (int j = (i + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
        int h = home(slots[j] - 1, mask);
        if (((j - h) & mask) >= ((j - i) & mask)) {
          slots[i] = slots[j];
          times[i] = times[j];
          i = j;
        }
      }
      slots[i] = 0;
      size--;
      // A table filled by a passing burst (a cold start, where advertisements come before routes)
      // shrinks back as it empties, and goes at the last removal.
      if (size == 0) {
        slots = null;
        times = null;
      } else if (slots.length > 8 && 8 * size <= slots.length) {
        resize(slots.length / 2);
      }
    }

    private void resize(int length) {
      int[] oldSlots = slots;
      long[] oldTimes = times;
      slots = new int[length];
      times = new long[length];
      size = 0;
      for (int i = 0; i < oldSlots.length; i++) {
        if (oldSlots[i] != 0) {
          sparsePut(oldSlots[i] - 1, oldTimes[i]);
        }
      }
    }
  }
}
