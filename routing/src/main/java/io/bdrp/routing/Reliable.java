package io.bdrp.routing;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Message;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reliable service of one router, beside the best-effort {@link DataPlane} and over the same
 * tables: a message published reliably reaches every router of its destination set D exactly once,
 * and each of them hands a publisher's reliable messages to its hosts in the order the publisher
 * sent them, through lost copies, links that go down, routes that change and routers that restart,
 * within a retention bounded in messages, bytes and time.
 *
 * <h2>How</h2>
 *
 * <ul>
 *   <li><b>The ingress keeps what it sent</b> until every router of D has acknowledged it. D is
 *       computed once, as for best effort; a reliable message is never broadcast: its copies follow
 *       the partition of D by next hop, so that each router of D can be named and counted.
 *   <li><b>A sequence per destination.</b> For each router r the ingress numbers the reliable
 *       messages it sends to r 1, 2, 3... (per ingress epoch), and each copy carries, for each
 *       router of its part of D, that number and the <em>floor</em>: the lowest number the ingress
 *       still holds for r (everything below is acknowledged, or was given up on). A router that
 *       receives number s delivers it when it has delivered everything before s, holds it (in a
 *       bounded reorder buffer) while something before it is missing, and drops it as a duplicate
 *       when it has delivered s already. A router with no record of the ingress (it started, or the
 *       ingress restarted under a new epoch) starts from the floor.
 *   <li><b>Acknowledgements</b> are cumulative per ingress ("delivered everything up to s"),
 *       delayed by {@link Config#ackDelayMillis} so that one covers many messages, and routed hop
 *       by hop towards the ingress along the unicast routes. A duplicate is acknowledged again (its
 *       acknowledgement may have been what was lost).
 *   <li><b>Resend to exactly the routers missing</b>: a message not acknowledged by every router of
 *       D within its resend timeout is sent again to the routers that have not acknowledged it,
 *       partitioned over the routes of that moment. The timeout follows the measured delay of the
 *       acknowledgements, per destination router, as TCP's follows its round trip ({@link
 *       Estimate}), and doubles per attempt; a copy still queued on the live session to its next
 *       hop is not sent again while it is ({@link Output#drained}): that would only add to the
 *       queue it waits in. A router of D without a route is waited for (a partition holds messages
 *       until it heals), until the message's retention ends: then the ingress gives up on the
 *       routers still missing, tells the publisher which they are ({@link Output#failed}), and
 *       moves their floor past it.
 *   <li><b>Exactly once per publisher</b>: a publisher (a host with a 64-bit id of its own, not 0)
 *       numbers its messages; a destination router remembers the last number it delivered from each
 *       publisher (for {@link Config#publishersKept} publishers, least recently used first out) and
 *       drops a message numbered at or below it. So a publisher whose ingress died can send what
 *       was not confirmed again through another router, and no host receives it twice.
 *   <li><b>Confirmation</b>: once every router of D has acknowledged a message the ingress tells
 *       its publisher ({@link Output#confirmed}); a message with an empty D is confirmed at once.
 *   <li><b>Flow control</b>: {@link #hasRoom} says no while the retention is full; the publisher
 *       waits for confirmations, and nothing is held beyond the bounds. It also says no until the
 *       router is {@link #ready}: a router that has just started would compute a D that lacks
 *       routers whose predicates it has not heard yet, and confirm messages they never had.
 * </ul>
 *
 * <p>What is not covered: a destination router that crashes after it acknowledged a message and
 * before its hosts read it (from its output buffers); an ingress that crashes with messages whose
 * publisher does not send them again; a router of D that stays unreachable for longer than the
 * retention (its publisher is told).
 *
 * <p>Acknowledgements and reliable copies travel over the same authenticated router links as
 * everything else; a copy or acknowledgement naming a source that is this router, or that it has no
 * route to, is refused and counted, as for best effort.
 *
 * <p><b>Threads.</b> Owned by the thread that owns the {@link RoutingNode}.
 *
 * @param <M> the message handle of the output, as in {@link DataPlane}
 */
public final class Reliable<M> {
  /**
   * Bounds and timers.
   *
   * @param resendMillis the resend timeout before any acknowledgement delay is measured, and the
   *     shortest it gets
   * @param maxResendMillis the longest resend timeout, measured or doubled
   * @param retentionMillis how long the ingress keeps trying a message before it gives up on the
   *     routers still missing
   * @param retentionMessages reliable messages the ingress holds at most (publish refuses beyond)
   * @param retentionBytes bytes of reliable messages the ingress holds at most
   * @param ackDelayMillis how long a destination waits to acknowledge, gathering more
   * @param reorderMessages messages a destination holds per ingress while an earlier one is missing
   * @param publishersKept publishers whose last delivered number a destination remembers
   */
  public record Config(
      long resendMillis,
      long maxResendMillis,
      long retentionMillis,
      int retentionMessages,
      long retentionBytes,
      long ackDelayMillis,
      int reorderMessages,
      int publishersKept) {
    /**
     * Defaults: resend after 200 ms until acknowledgement delays are measured, then after what they
     * say, between 200 ms and 60 s (a link whose output buffer holds 8 MiB at 1 MByte/s delays its
     * acknowledgements by 8 s or more); keep a message a minute, 10,000 or 64 MiB.
     */
    public static final Config DEFAULT =
        new Config(200, 60_000, 60_000, 10_000, 64L << 20, 25, 1_024, 65_536);

    public Config {
      if (resendMillis < 1
          || maxResendMillis < resendMillis
          || retentionMillis < 1
          || retentionMessages < 1
          || retentionBytes < 1
          || ackDelayMillis < 0
          || reorderMessages < 1
          || publishersKept < 1) {
        throw new IllegalArgumentException("reliable service: a bound is out of range: " + this);
      }
    }

    /** This configuration with a different retention time. */
    public Config withRetentionMillis(long ms) {
      return new Config(
          resendMillis,
          maxResendMillis,
          ms,
          retentionMessages,
          retentionBytes,
          ackDelayMillis,
          reorderMessages,
          publishersKept);
    }
  }

  /**
   * The reliable part of a message's copies: the ingress's epoch, the publisher and its number for
   * the message, and for each router of D (ascending) the message's number for that router and that
   * router's floor. Immutable; a copy carries the entries of the routers of its part of D only
   * ({@link #encodedLength}).
   *
   * @param epoch the ingress router's epoch: its numbers start again under each
   * @param publisher the publisher's id, 0 for none (then nothing is deduplicated by publisher)
   * @param publisherSeq the publisher's number for the message
   * @param routers the routers of D, ascending
   * @param seqs the message's number for each router of D
   * @param floors the lowest number the ingress still holds for each router of D
   */
  public record Header(
      long epoch, long publisher, long publisherSeq, int[] routers, long[] seqs, long[] floors) {
    public Header {
      if (seqs.length != routers.length || floors.length != routers.length) {
        throw new IllegalArgumentException("reliable header: arrays of different lengths");
      }
    }

    /** The index of {@code router} in {@link #routers}, or a negative number if absent. */
    public int indexOf(int router) {
      return Arrays.binarySearch(routers, router);
    }

    /**
     * The bytes it takes on the wire in a copy whose part of D is {@code d}: epoch, publisher and
     * its number (8 bytes each), a count (2 bytes), and per router of {@code d} its number, its
     * floor (8 each) and the router (2): the layout of the router's RELIABLE_DATA frame.
     */
    public int encodedLength(long[] d) {
      int n = 26;
      for (int r : routers) {
        if ((r >>> 6) < d.length && (d[r >>> 6] & (1L << r)) != 0) {
          n += 18;
        }
      }
      return n;
    }
  }

  /**
   * An acknowledgement: router {@code router} has delivered every reliable message of ingress
   * {@code source} (under epoch {@code epoch}) numbered for it up to {@code through}.
   */
  public record Ack(int source, long epoch, int router, long through) {}

  /**
   * Where the reliable service sends and delivers. Calls must not block nor call back into it.
   *
   * @param <M> the message handle
   */
  public interface Output<M> {
    /**
     * Sends one reliable copy to neighbour {@code neighbour}; as {@link DataPlane.Output#send},
     * with the header {@code h} whose entries for the routers of {@code d} go with it. False if it
     * was not queued (it is sent again later).
     */
    boolean send(
        int neighbour, int hopLimit, int source, long messageId, long[] d, Header h, M message);

    /** Sends an acknowledgement to neighbour {@code neighbour}. False if it was not queued. */
    boolean sendAck(int neighbour, Ack ack);

    /**
     * Where the output towards {@code neighbour} stands: the bytes written to it so far, over all
     * its sessions, this one's still queued included. Asked right after a copy is queued, it is the
     * position just past that copy. Negative if the output does not know (then no resend waits for
     * a queue: {@link #drained}).
     */
    default long written(int neighbour) {
      return -1;
    }

    /**
     * The position ({@link #written}) up to which what was written towards {@code neighbour} has
     * left this router's output queue: all of it when no session is up (what the last one still
     * held is lost). A copy whose position is above it is still queued on a live session, behind
     * the bytes written before it, and a copy sent again would only queue behind it. Negative if
     * the output does not know.
     */
    default long drained(int neighbour) {
      return -1;
    }

    /** Delivers to a local host; as {@link DataPlane.Output#deliver}. */
    boolean deliver(int host, long messageId, M message);

    /** The message decoded for exact matching, or null if it does not decode. */
    Message decode(M message);

    /** Takes a reference to {@code message} that lasts until {@link #release}; returns it. */
    M keep(M message);

    /** Gives back a reference taken by {@link #keep}. */
    void release(M message);

    /** The bytes {@code message} holds while kept (what the retention counts). */
    int size(M message);

    /**
     * Called once per message published reliably here, after the match and before any copy or
     * delivery: its id and D ({@code destinations} routers, this router excluded; reused after the
     * call).
     */
    default void published(long messageId, long[] d, int destinations) {}

    /** Every router of D has the message: its publisher may forget it. */
    void confirmed(long messageId, long publisher, long publisherSeq);

    /**
     * The retention ended before routers {@code unreached} (a bitmap) acknowledged the message: the
     * ingress no longer tries them.
     */
    void failed(long messageId, long publisher, long publisherSeq, long[] unreached);

    /** Counts {@code n} of {@code what} for message {@code messageId} (0 when there is none). */
    default void counted(long messageId, Count what, int n) {}
  }

  /** What the service counts. */
  public enum Count {
    /** Copies sent again to routers that had not acknowledged in time (one per router). */
    RESENT,
    /**
     * A resend put off because the copy is still queued on the live session to its next hop ({@link
     * Output#drained}); one per copy whose timeout ran out while it was.
     */
    QUEUED,
    /** A reliable message refused at the ingress: the retention is full ({@link #hasRoom}). */
    REFUSED,
    /**
     * A reliable message refused at the ingress because the router, just started, does not know the
     * network well enough yet to compute its D ({@link #ready}).
     */
    NOT_READY,
    /** Routers given up on at the end of a message's retention (one per router). */
    ABANDONED,
    /** A copy of a message this router had delivered already (one per copy). */
    DUPLICATE,
    /** A message dropped because its publisher's later message was delivered already. */
    PUBLISHER_DUPLICATE,
    /** A message held because an earlier one from its ingress is still missing. */
    HELD,
    /** A message dropped because the reorder buffer of its ingress is full (sent again later). */
    REORDER_FULL,
    /** Numbers skipped because the ingress gave up on them (one per number). */
    SKIPPED,
    /** A copy whose ingress restarted since (an older epoch than the one known). */
    STALE,
    /** A copy or acknowledgement that could not be queued on a link (sent again later). */
    LINK,
    /**
     * A router of a copy's D, or an acknowledgement's ingress, without a route, or not below this
     * network's {@code maxRouters} (one each).
     */
    NO_ROUTE,
    /** A copy whose hop limit ran out with routers still to reach (one per copy). */
    HOP_LIMIT,
    /**
     * A copy or acknowledgement refused: malformed, this router as its source, or no route to it.
     */
    REFUSED_INPUT,
    /** A message that does not decode at a router of its D. */
    BAD_MESSAGE
  }

  private static final Count[] COUNTS = Count.values();

  /** A message held at its ingress until every router of D has it. */
  private static final class Entry<M> {
    final long id;
    final M payload;
    final int bytes;
    final long firstSent;
    Header header;
    final long[] outstanding;
    int missing;
    long sentAt;
    long wait;

    /** Sent again since its first send: no acknowledgement delay is measured on it (Karn). */
    boolean resent;

    /**
     * A copy of it was still queued at the last look ({@link #queued}): looked at again every scan,
     * its timeout counting from the last look that found it queued.
     */
    boolean queued;

    /**
     * The next hops its last copies went to, and the position just past each ({@link #queued});
     * null while the output tells no positions.
     */
    int[] hops;

    long[] marks;
    int hopCount;

    Entry(long id, M payload, int bytes, Header header, long[] outstanding, int missing, long t) {
      this.id = id;
      this.payload = payload;
      this.bytes = bytes;
      this.header = header;
      this.outstanding = outstanding;
      this.missing = missing;
      this.firstSent = t;
      this.sentAt = t;
    }

    long seqFor(int router) {
      return header.seqs[header.indexOf(router)];
    }
  }

  /**
   * The resend timeout towards one destination router, from the delay between the send of a copy
   * and the acknowledgement that covers it, as RFC 6298 computes TCP's from its round trip: a
   * smoothed delay (SRTT) and its mean deviation (RTTVAR), updated by 1/8 and 1/4 of each sample;
   * the timeout (RTO) is SRTT + 4 RTTVAR, between {@link Config#resendMillis} (also the timeout
   * before the first sample) and {@link Config#maxResendMillis}. A timeout doubles it, once per
   * round (the copies sent before a doubling do not double it again), until a sample sets it anew.
   * Samples come only from messages never sent again (Karn's rule: an acknowledgement of a resent
   * message may answer either copy).
   *
   * <p>Kept per destination router rather than per next hop: the delay is that of the whole path to
   * the router and back, the destination's acknowledgement delay included, which differs between
   * the routers behind one next hop; acknowledgements are per destination anyway. It starts afresh
   * when the next hop towards the router changes (a route changed, or a neighbour went down and
   * came back as another route): the old path's delay says nothing of the new one.
   */
  private static final class Estimate {
    int hop = -1; // the next hop the copies it measures went through
    double srtt; // 0 before the first sample
    double rttvar;
    long rto;
    long backedOffAt = Long.MIN_VALUE;
  }

  /** A message held at a destination while an earlier one from its ingress is missing. */
  private record Held<M>(long id, long publisher, long publisherSeq, M payload) {}

  /** What a destination knows of one ingress's reliable messages for it. */
  private static final class Stream<M> {
    final int source;
    final long epoch;
    long expected;
    final TreeMap<Long, Held<M>> held = new TreeMap<>();
    long ackDue = -1; // when an acknowledgement is due, or -1 if none is
    long progressAt; // when it last delivered (or began)

    Stream(int source, long epoch, long expected, long now) {
      this.source = source;
      this.epoch = epoch;
      this.expected = expected;
      this.progressAt = now;
    }
  }

  private final DataPlane<M> plane;
  private final RoutingNode node;
  private final int self;
  private final long epoch;
  private final Clock clock;
  private final Config config;
  private final Output<M> out;
  private final int words;
  private final int hopLimit;
  private final long[] d;
  private final long[] transitD;
  private final Partition partition;

  // Ingress: by router, allocated by the first reliable message this router publishes (a router
  // that only forwards or delivers them, as most routers of a large network, has neither; at
  // 10,000 routers they would be 120 kB a router).
  private final int maxRouters;
  private long[] nextSeq;
  private ArrayDeque<Entry<M>>[] pending;
  private Estimate[] estimates;
  private final LinkedHashMap<Long, Entry<M>> retained = new LinkedHashMap<>();
  private long retainedBytes;
  private long nextScan = Long.MAX_VALUE;

  // Destination.
  private final Map<Integer, Stream<M>> streams = new HashMap<>();
  private final ArrayDeque<Stream<M>> acksDue = new ArrayDeque<>();
  private final LinkedHashMap<Long, Long> publishers;
  private long nextHeldCheck = Long.MAX_VALUE;

  private final long[] counts = new long[COUNTS.length];
  private long published;
  private long confirmed;
  private long delivered;

  /** Set once {@link #ready} has held. */
  private boolean ready;

  /**
   * The reliable service of the router whose best-effort data plane is {@code plane} (its message
   * ids come from the same generator, so that a message id names one message of this router,
   * whichever service carried it).
   *
   * @param epoch this router's epoch: its numbering starts again under each
   * @param clock the routing clock (resends, acknowledgements, retention)
   */
  public Reliable(
      DataPlane<M> plane, RoutingNode node, long epoch, Clock clock, Config config, Output<M> out) {
    this.plane = plane;
    this.node = node;
    this.self = node.self();
    this.epoch = epoch;
    this.clock = clock;
    this.config = config;
    this.out = out;
    RoutingConfig rc = node.config();
    this.words = (rc.maxRouters() + 63) >>> 6;
    this.hopLimit = rc.hopLimit();
    this.d = new long[words];
    this.transitD = new long[words];
    this.partition = new Partition(words, 8);
    this.maxRouters = rc.maxRouters();
    int kept = config.publishersKept();
    this.publishers =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
            return size() > kept;
          }
        };
  }

  // ---- ingress ----

  /**
   * A local host published {@code m} reliably: it is delivered to the local hosts it matches, and
   * kept and sent towards D until every router of D has acknowledged it.
   *
   * @param payload the message's handle for the output
   * @param publisher the publisher's id (0: none, no deduplication by publisher)
   * @param publisherSeq the publisher's number for it, increasing per publisher
   * @return the message id
   * @throws IllegalStateException if the retention has no room for it ({@link #hasRoom}, which the
   *     caller asks first)
   */
  public long publish(Attributes m, M payload, long publisher, long publisherSeq) {
    int bytes = out.size(payload);
    if (!hasRoom(bytes)) {
      throw new IllegalStateException("reliable retention full: ask hasRoom first");
    }
    published++;
    long id = plane.newMessageId();
    int n = plane.destinationsOf(node.snapshot(), m, d);
    out.published(id, d, n);
    // Local hosts take it at once, unless it is a publisher's message that reached them already
    // (sent again through this router after its first ingress failed).
    if (firstFrom(id, publisher, publisherSeq)) {
      node.local().match(m, host -> deliverTo(host, id, payload));
    }
    if (n == 0) {
      confirmed++;
      out.confirmed(id, publisher, publisherSeq);
      return id;
    }
    if (nextSeq == null) {
      @SuppressWarnings("unchecked")
      ArrayDeque<Entry<M>>[] queues = (ArrayDeque<Entry<M>>[]) new ArrayDeque<?>[maxRouters];
      pending = queues;
      estimates = new Estimate[maxRouters];
      nextSeq = new long[maxRouters];
      Arrays.fill(nextSeq, 1);
    }
    int[] routers = new int[n];
    long[] seqs = new long[n];
    long[] floors = new long[n];
    int i = 0;
    for (int w = 0; w < words; w++) {
      for (long bits = d[w]; bits != 0; bits &= bits - 1) {
        int r = (w << 6) + Long.numberOfTrailingZeros(bits);
        routers[i] = r;
        seqs[i] = nextSeq[r]++;
        floors[i] = floor(r, seqs[i]);
        i++;
      }
    }
    long now = clock.nowMillis();
    Entry<M> e =
        new Entry<>(
            id,
            out.keep(payload),
            bytes,
            new Header(epoch, publisher, publisherSeq, routers, seqs, floors),
            d.clone(),
            n,
            now);
    for (int r : routers) {
      ArrayDeque<Entry<M>> q = pending[r];
      if (q == null) {
        q = pending[r] = new ArrayDeque<>();
      }
      q.addLast(e);
    }
    retained.put(id, e);
    retainedBytes += bytes;
    if (nextScan == Long.MAX_VALUE) {
      nextScan = now + scanInterval();
    }
    e.wait = sendTowards(e, now);
    return id;
  }

  /**
   * Whether the retention has room for a message of {@code bytes} ({@link Output#size}); if not,
   * the refusal is counted ({@link Count#REFUSED}) and the publisher is to wait for confirmations
   * before it sends again.
   */
  public boolean hasRoom(int bytes) {
    if (!ready()) {
      count(0, Count.NOT_READY, 1);
      return false;
    }
    if (retained.size() < config.retentionMessages()
        && retainedBytes + bytes <= config.retentionBytes()) {
      return true;
    }
    count(0, Count.REFUSED, 1);
    return false;
  }

  /**
   * Whether this router knows the network well enough to compute a message's D. A router that has
   * just started knows no other router's predicate: a D computed then would lack routers, and the
   * message would be confirmed without reaching them. So a router with links is ready once a hello
   * interval has passed since its first adjacency came up (its neighbour's routes have arrived), it
   * holds a predicate for every router it has a route to, and its index of D covers them. From then
   * on it stays ready: later changes reach D as they reach best effort. A reliable message is
   * refused meanwhile ({@link Count#NOT_READY}) and its publisher sends it again.
   */
  public boolean ready() {
    if (ready) {
      return true;
    }
    if (node.hasLinks()) {
      long first = node.firstAdjacencyMillis();
      if (first < 0 || clock.nowMillis() - first < node.config().helloIntervalMs()) {
        return false;
      }
    }
    node.snapshot(); // builds the index here where it is built on demand (the simulator)
    PredicateTable predicates = node.predicates();
    if (!predicates.indexReady()) {
      return false;
    }
    for (int r : node.unicast().reachable()) {
      if (r != self && predicates.get(r) == null) {
        return false;
      }
    }
    ready = true;
    return true;
  }

  /** The lowest number this router still holds for {@code r}, or {@code next} if none. */
  private long floor(int r, long next) {
    ArrayDeque<Entry<M>> q = pending[r];
    return q == null || q.isEmpty() ? next : q.peekFirst().seqFor(r);
  }

  private long scanInterval() {
    return Math.max(1, config.resendMillis() / 4);
  }

  /**
   * Sends {@code e} for the first time to the routers of its D over the routes of now; returns its
   * resend timeout, the longest of theirs.
   */
  private long sendTowards(Entry<M> e, long now) {
    node.routes().partition(e.outstanding, Integer.MAX_VALUE, partition);
    long wait = config.resendMillis();
    for (int i = 0; i < partition.count(); i++) {
      int hop = partition.hop(i);
      wait = Math.max(wait, timeouts(partition.set(i), hop, Long.MIN_VALUE, now));
      send(e, hop, partition.set(i));
    }
    if (partition.unreachable() > 0) {
      count(e.id, Count.NO_ROUTE, partition.unreachable());
    }
    return wait;
  }

  /** Sends a copy of {@code e} for the routers of {@code part} to {@code hop}. */
  private void send(Entry<M> e, int hop, long[] part) {
    if (!out.send(hop, hopLimit, self, e.id, part, e.header, e.payload)) {
      count(e.id, Count.LINK, 1);
      return;
    }
    long mark = out.written(hop);
    if (mark < 0) {
      return;
    }
    int k = 0;
    while (k < e.hopCount && e.hops[k] != hop) {
      k++;
    }
    if (k == e.hopCount) {
      if (e.hops == null) {
        e.hops = new int[2];
        e.marks = new long[2];
      } else if (k == e.hops.length) {
        e.hops = Arrays.copyOf(e.hops, 2 * k);
        e.marks = Arrays.copyOf(e.marks, 2 * k);
      }
      e.hops[k] = hop;
      e.hopCount++;
    }
    e.marks[k] = mark;
  }

  /**
   * Whether the last copy of {@code e} to {@code hop} is still queued on the live session to it,
   * behind bytes written before it: sending it again would only queue a second copy behind it.
   */
  private boolean queued(Entry<M> e, int hop) {
    for (int k = 0; k < e.hopCount; k++) {
      if (e.hops[k] == hop) {
        long drained = out.drained(hop);
        return drained >= 0 && drained < e.marks[k];
      }
    }
    return false;
  }

  /** Whether a copy of {@code e} is still queued on the live session to the hop it went to. */
  private boolean stillQueued(Entry<M> e) {
    for (int k = 0; k < e.hopCount; k++) {
      if (queued(e, e.hops[k])) {
        return true;
      }
    }
    return false;
  }

  /**
   * The longest resend timeout of the routers of {@code part}, reached through {@code hop} now;
   * each estimate starts afresh if its next hop changed, and doubles if this is a resend of a copy
   * sent at {@code sentAt} (else {@code Long.MIN_VALUE}) with its current timeout.
   */
  private long timeouts(long[] part, int hop, long sentAt, long now) {
    long wait = 0;
    for (int w = 0; w < part.length; w++) {
      for (long bits = part[w]; bits != 0; bits &= bits - 1) {
        Estimate x = estimate((w << 6) + Long.numberOfTrailingZeros(bits));
        if (x.hop != hop) {
          x.hop = hop;
          x.srtt = 0;
          x.rttvar = 0;
          x.rto = config.resendMillis();
          x.backedOffAt = Long.MIN_VALUE;
        } else if (sentAt != Long.MIN_VALUE && sentAt >= x.backedOffAt) {
          x.rto = Math.min(2 * x.rto, config.maxResendMillis());
          x.backedOffAt = now;
        }
        wait = Math.max(wait, x.rto);
      }
    }
    return wait;
  }

  private Estimate estimate(int r) {
    Estimate x = estimates[r];
    if (x == null) {
      x = estimates[r] = new Estimate();
      x.rto = config.resendMillis();
    }
    return x;
  }

  /** A sample of the acknowledgement delay towards {@code r}: RFC 6298, section 2. */
  private void sample(int r, long delay) {
    Estimate x = estimate(r);
    double m = Math.max(delay, 0);
    if (x.srtt == 0) {
      x.srtt = Math.max(m, 1);
      x.rttvar = m / 2;
    } else {
      x.rttvar = 0.75 * x.rttvar + 0.25 * Math.abs(x.srtt - m);
      x.srtt = 0.875 * x.srtt + 0.125 * m;
    }
    x.rto =
        Math.clamp(
            (long) Math.ceil(x.srtt + Math.max(1, 4 * x.rttvar)),
            config.resendMillis(),
            config.maxResendMillis());
  }

  /**
   * The resend timeout towards router {@code r} now ({@link Config#resendMillis} before any
   * measurement).
   */
  public long resendTimeoutMillis(int r) {
    Estimate x = estimates == null || r < 0 || r >= maxRouters ? null : estimates[r];
    return x == null ? config.resendMillis() : x.rto;
  }

  /**
   * An acknowledgement arrived from neighbour {@code from}: taken if it is for this router, else
   * passed on towards its ingress.
   */
  public void receiveAck(int from, Ack a) {
    if (a.source() != self) {
      forward(a);
      return;
    }
    if (a.epoch() != epoch) {
      count(0, Count.STALE, 1);
      return;
    }
    int r = a.router();
    if (r < 0 || r >= maxRouters || r == self) {
      count(0, Count.REFUSED_INPUT, 1);
      return;
    }
    ArrayDeque<Entry<M>> q = pending == null ? null : pending[r];
    Entry<M> measured = null; // the latest message it covers that was sent once only
    while (q != null && !q.isEmpty() && q.peekFirst().seqFor(r) <= a.through()) {
      Entry<M> e = q.pollFirst();
      if ((e.outstanding[r >>> 6] & (1L << r)) != 0) {
        if (!e.resent) {
          measured = e;
        }
        e.outstanding[r >>> 6] &= ~(1L << r);
        if (--e.missing == 0) {
          done(e);
          confirmed++;
          out.confirmed(e.id, e.header.publisher(), e.header.publisherSeq());
        }
      }
    }
    if (measured != null) {
      sample(r, clock.nowMillis() - measured.firstSent);
    }
  }

  private void forward(Ack a) {
    if (a.source() < 0 || a.source() >= maxRouters || a.router() < 0) {
      count(0, Count.REFUSED_INPUT, 1);
      return;
    }
    int hop = node.routes().nextHop(a.source());
    if (hop < 0) {
      count(0, Count.NO_ROUTE, 1);
    } else if (!out.sendAck(hop, a)) {
      count(0, Count.LINK, 1);
    }
  }

  private void done(Entry<M> e) {
    retained.remove(e.id);
    retainedBytes -= e.bytes;
    out.release(e.payload);
    if (retained.isEmpty()) {
      nextScan = Long.MAX_VALUE;
    }
  }

  /** Resends what is due and gives up on what outlived its retention. */
  private void scan(long now) {
    nextScan = now + scanInterval();
    Iterator<Entry<M>> it = retained.values().iterator();
    List<Entry<M>> expired = new ArrayList<>();
    while (it.hasNext()) {
      Entry<M> e = it.next();
      if (now - e.firstSent >= config.retentionMillis()) {
        expired.add(e);
      } else if (e.queued) {
        if (stillQueued(e)) {
          e.sentAt = now;
        } else {
          e.queued = false; // left the queue since sentAt: acknowledged within a timeout, or due
        }
      } else if (now - e.sentAt >= e.wait) {
        resend(e, now);
      }
    }
    for (Entry<M> e : expired) {
      giveUp(e);
    }
    if (retained.isEmpty()) {
      nextScan = Long.MAX_VALUE;
    }
  }

  /**
   * Sends {@code e} again to the routers that have not acknowledged it, over the routes of now,
   * except through a next hop whose session still queues its last copy: then it is looked at again
   * every scan while the copy is queued, and its timeout counts from the last look that found it so
   * (the copy's flight began after it). If nothing went for want of routes, it is looked at again
   * after the same timeout; else its timeout doubles, and is at least the (doubled) timeout of each
   * router it went to.
   */
  private void resend(Entry<M> e, long now) {
    e.header = refreshed(e.header);
    node.routes().partition(e.outstanding, Integer.MAX_VALUE, partition);
    int queued = 0;
    int routers = 0;
    long wait = 0;
    for (int i = 0; i < partition.count(); i++) {
      int hop = partition.hop(i);
      long[] part = partition.set(i);
      if (queued(e, hop)) {
        queued++;
        continue;
      }
      wait = Math.max(wait, timeouts(part, hop, e.sentAt, now));
      for (long bits : part) {
        routers += Long.bitCount(bits);
      }
      send(e, hop, part);
    }
    if (partition.unreachable() > 0) {
      count(e.id, Count.NO_ROUTE, partition.unreachable());
    }
    if (queued > 0) {
      count(e.id, Count.QUEUED, queued);
      e.queued = true;
      e.sentAt = now;
      if (routers == 0) {
        return;
      }
    }
    if (routers == 0) {
      e.sentAt = now; // no route to any of them: nothing sent, nothing to back off from
      return;
    }
    e.resent = true;
    e.sentAt = now;
    e.wait = Math.min(Math.max(2 * e.wait, wait), config.maxResendMillis());
    count(e.id, Count.RESENT, routers);
  }

  /** {@code h} with the floors of now (higher once earlier messages are acknowledged). */
  private Header refreshed(Header h) {
    long[] floors = new long[h.routers().length];
    for (int i = 0; i < floors.length; i++) {
      floors[i] = floor(h.routers()[i], h.seqs()[i]);
    }
    return new Header(h.epoch(), h.publisher(), h.publisherSeq(), h.routers(), h.seqs(), floors);
  }

  private void giveUp(Entry<M> e) {
    for (int r : e.header.routers()) {
      if ((e.outstanding[r >>> 6] & (1L << r)) != 0) {
        pending[r].remove(e); // the oldest held for r: at or near the head
      }
    }
    count(e.id, Count.ABANDONED, e.missing);
    done(e);
    out.failed(e.id, e.header.publisher(), e.header.publisherSeq(), e.outstanding.clone());
  }

  // ---- transit and destination ----

  /**
   * A reliable copy arrived from neighbour {@code from}: copies go on towards the rest of its D,
   * and if this router is in D the message is delivered in its publisher's order, held, or dropped
   * as a duplicate, and acknowledged.
   */
  public void receive(int from, DataPlane.Packet p, Header h, M payload) {
    long id = p.messageId();
    int source = p.sourceRouter();
    ForwardingTable routes = node.routes();
    if (source == self || p.isBroadcast() || routes.nextHop(source) < 0) {
      count(id, Count.REFUSED_INPUT, 1);
      return;
    }
    int unknown = plane.destinationsOf(p, transitD);
    if (unknown > 0) {
      count(id, Count.NO_ROUTE, unknown); // routers this network does not have
    }
    routes.partition(transitD, p.hopLimit(), partition);
    boolean local = partition.local();
    for (int i = 0; i < partition.count(); i++) {
      if (!out.send(partition.hop(i), p.hopLimit() - 1, source, id, partition.set(i), h, payload)) {
        count(id, Count.LINK, 1);
      }
    }
    if (partition.drop() == Partition.Drop.HOP_LIMIT) {
      count(id, Count.HOP_LIMIT, 1);
    }
    if (partition.unreachable() > 0) {
      count(id, Count.NO_ROUTE, partition.unreachable());
    }
    if (local) {
      accept(source, id, h, payload);
    }
  }

  private void accept(int source, long id, Header h, M payload) {
    int i = h.indexOf(self);
    if (i < 0 || h.seqs()[i] < 1 || h.floors()[i] < 1 || h.floors()[i] > h.seqs()[i]) {
      count(id, Count.REFUSED_INPUT, 1);
      return;
    }
    long seq = h.seqs()[i];
    long floor = h.floors()[i];
    Stream<M> st = streams.get(source);
    if (st == null || h.epoch() > st.epoch) {
      if (st != null) {
        for (Held<M> x : st.held.values()) {
          out.release(x.payload());
        }
        acksDue.remove(st);
      }
      st = new Stream<>(source, h.epoch(), floor, clock.nowMillis());
      streams.put(source, st);
    } else if (h.epoch() < st.epoch) {
      count(id, Count.STALE, 1);
      return;
    }
    if (floor > st.expected) {
      // The ingress gave up on the numbers below the floor: what is held below it goes first.
      while (!st.held.isEmpty() && st.held.firstKey() < floor) {
        Map.Entry<Long, Held<M>> x = st.held.pollFirstEntry();
        count(
            x.getValue().id(),
            Count.SKIPPED,
            (int) Math.min(Integer.MAX_VALUE, x.getKey() - st.expected));
        st.expected = x.getKey() + 1;
        deliverHeld(x.getValue());
      }
      if (floor > st.expected) {
        count(id, Count.SKIPPED, (int) Math.min(Integer.MAX_VALUE, floor - st.expected));
        st.expected = floor;
      }
    }
    if (seq < st.expected) {
      count(id, Count.DUPLICATE, 1);
      ackLater(st);
      return;
    }
    if (seq > st.expected) {
      if (st.held.containsKey(seq)) {
        count(id, Count.DUPLICATE, 1);
      } else if (st.held.size() >= config.reorderMessages()) {
        count(id, Count.REORDER_FULL, 1);
      } else {
        st.held.put(seq, new Held<>(id, h.publisher(), h.publisherSeq(), out.keep(payload)));
        count(id, Count.HELD, 1);
        nextHeldCheck = Math.min(nextHeldCheck, st.progressAt + config.retentionMillis());
      }
      return;
    }
    deliverLocal(id, h.publisher(), h.publisherSeq(), payload);
    st.expected++;
    st.progressAt = clock.nowMillis();
    while (!st.held.isEmpty() && st.held.firstKey() == st.expected) {
      deliverHeld(st.held.pollFirstEntry().getValue());
      st.expected++;
    }
    ackLater(st);
  }

  private void deliverHeld(Held<M> x) {
    try {
      deliverLocal(x.id(), x.publisher(), x.publisherSeq(), x.payload());
    } finally {
      out.release(x.payload());
    }
  }

  /**
   * Whether message {@code id} is the first that this router's hosts see of its publisher's number
   * {@code publisherSeq} (and no later number was delivered before it); noted if so, counted if
   * not.
   */
  private boolean firstFrom(long id, long publisher, long publisherSeq) {
    if (publisher == 0) {
      return true;
    }
    Long last = publishers.get(publisher);
    if (last != null && publisherSeq <= last) {
      count(id, Count.PUBLISHER_DUPLICATE, 1);
      return false;
    }
    publishers.put(publisher, publisherSeq);
    return true;
  }

  private void deliverLocal(long id, long publisher, long publisherSeq, M payload) {
    if (!firstFrom(id, publisher, publisherSeq)) {
      return;
    }
    Message m = out.decode(payload);
    if (m == null) {
      count(id, Count.BAD_MESSAGE, 1);
      return;
    }
    node.local().match(m, host -> deliverTo(host, id, payload));
  }

  private void deliverTo(int host, long id, M payload) {
    if (out.deliver(host, id, payload)) {
      delivered++;
    }
  }

  private void ackLater(Stream<M> st) {
    if (st.ackDue < 0) {
      st.ackDue = clock.nowMillis() + config.ackDelayMillis();
      acksDue.addLast(st);
    }
  }

  // ---- timers ----

  /**
   * When {@link #tick} next has work, in routing-clock milliseconds ({@code Long.MAX_VALUE}: none).
   */
  public long nextDeadlineMillis() {
    Stream<M> first = acksDue.peekFirst();
    return Math.min(
        Math.min(first == null ? Long.MAX_VALUE : first.ackDue, nextScan), nextHeldCheck);
  }

  /** Sends the acknowledgements due and resends or gives up what is due. */
  public void tick() {
    long now = clock.nowMillis();
    while (!acksDue.isEmpty() && acksDue.peekFirst().ackDue <= now) {
      Stream<M> st = acksDue.pollFirst();
      st.ackDue = -1;
      if (streams.get(st.source) != st) {
        continue; // replaced by a newer epoch of its ingress
      }
      forward(new Ack(st.source, st.epoch, self, st.expected - 1));
    }
    if (now >= nextScan) {
      scan(now);
    }
    if (now >= nextHeldCheck) {
      dropStale(now);
    }
  }

  /**
   * Drops what a destination holds for an ingress that has delivered nothing here for a retention:
   * the ingress gave up on the missing message (its next copies say so) or is gone; if it is still
   * trying, what was dropped comes again, as it was never acknowledged.
   */
  private void dropStale(long now) {
    nextHeldCheck = Long.MAX_VALUE;
    for (Stream<M> st : streams.values()) {
      if (st.held.isEmpty()) {
        continue;
      }
      if (now - st.progressAt >= config.retentionMillis()) {
        for (Held<M> x : st.held.values()) {
          count(x.id(), Count.STALE, 1);
          out.release(x.payload());
        }
        st.held.clear();
      } else {
        nextHeldCheck = Math.min(nextHeldCheck, st.progressAt + config.retentionMillis());
      }
    }
  }

  // ---- counters ----

  private void count(long id, Count what, int n) {
    counts[what.ordinal()] += n;
    out.counted(id, what, n);
  }

  /** Totals so far of {@code what}. */
  public long count(Count what) {
    return counts[what.ordinal()];
  }

  /** Messages published reliably here (refused ones not included). */
  public long published() {
    return published;
  }

  /** Messages published here that every router of their D acknowledged. */
  public long confirmed() {
    return confirmed;
  }

  /** Deliveries to local hosts queued by the output. */
  public long delivered() {
    return delivered;
  }

  /** Messages held here until their D acknowledges them. */
  public int retainedMessages() {
    return retained.size();
  }

  /** Bytes of the messages held here until their D acknowledges them. */
  public long retainedBytes() {
    return retainedBytes;
  }

  /** Messages held at this router, as a destination, while an earlier one is missing. */
  public int heldMessages() {
    int n = 0;
    for (Stream<M> st : streams.values()) {
      n += st.held.size();
    }
    return n;
  }

  /** Releases every message kept (the router stops). */
  public void close() {
    for (Entry<M> e : retained.values()) {
      out.release(e.payload);
    }
    retained.clear();
    retainedBytes = 0;
    for (Stream<M> st : streams.values()) {
      for (Held<M> x : st.held.values()) {
        out.release(x.payload());
      }
      st.held.clear();
    }
    nextScan = Long.MAX_VALUE;
  }
}
