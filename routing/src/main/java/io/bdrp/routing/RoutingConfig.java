package io.bdrp.routing;

/**
 * Timers and limits of a router's routing state machines. Immutable; validated when built, with an
 * error that names the knob. Defaults suit a federation over wide-area links (seconds to detect a
 * dead neighbour); the simulator and tests use shorter values.
 *
 * @param helloIntervalMs hellos are sent on every link this often
 * @param deadIntervalMs a neighbour not heard for this long is dead; more than two hello intervals,
 *     so one lost hello does not break an adjacency
 * @param updateIntervalMs every router sends its full route table to each neighbour this often, in
 *     addition to triggered updates
 * @param updatePacingMs triggered updates that are not urgent (a better or worse metric, a new next
 *     hop, a first route) go out at most once per this interval, batched; urgent ones (a
 *     retraction, a newer sequence number) go at once. 0: every change at once. Below the hello
 *     interval; by default 100 ms, or a quarter of the hello interval if that is less
 * @param routeExpiryMs a route not refreshed for this long is retracted; more than two update
 *     intervals
 * @param sourceGcMs feasibility distances of a destination without any route are forgotten after
 *     this long; must exceed the route expiry so that no stale route outlives them
 * @param seqnoRequestHops how far a sequence-number request may travel towards its destination
 * @param predicateExpiryMs the advertisement of an origin without a route is dropped after this
 *     long
 * @param hopLimit hop limit written into every data packet at the ingress router
 * @param broadcastFraction a message whose destination set holds more than this fraction of the
 *     routers the ingress has a route to (counting only those of the set it has a route to) is
 *     broadcast along the tree of shortest paths from the ingress router; in (0, 1], and 1 means
 *     never (every message goes by its destination set)
 * @param maxRouters router numbers are 0 to maxRouters - 1; this sizes destination bitmaps
 * @param maxEpochAheadMs a router's epoch is its wall clock in milliseconds when it starts; a
 *     control message naming an epoch more than this far ahead of the receiver's wall clock is
 *     refused, so one bogus or clock-skewed epoch cannot shadow a router's real ones for ever
 *     (applies where the node is given a wall clock: {@link RoutingNode#useWallClock})
 * @param maxControlFrameBytes the largest advertisement frame sent to a neighbour, as the value of
 *     its length field (the frame's bytes after that 4-byte field): the neighbours' frame limit,
 *     their {@code limits.maxFrameBytes}, which the router passes (the routers of a federation
 *     share it). Advertisement batches are cut to fit it, and an advertisement that cannot fit it
 *     alone is not held (see {@link PredicateTable}). By default 1 MiB, the router's default frame
 *     limit; at least 1024
 * @param maxOriginFilters most Bloom filters in one origin's advertisement: an aggregate of more is
 *     not advertised, and a received advertisement of more is refused. By default, and at most,
 *     65,535, what one advertisement can carry
 * @param maxOriginFilterBytes most bytes of filters in one origin's advertisement, as held in
 *     memory ({@link io.bdrp.encoding.bloom.EncodedPredicate#byteSize()}): an aggregate of more is
 *     not advertised, and a received advertisement of more is refused. By default 8 MiB (8,192
 *     filters of the default M = 8,192 bits held as bitmaps)
 * @param maxPredicateFilterBytes most bytes of filters PREDICATES holds for the other routers
 *     together ({@code EncodedPredicate#byteSize()} summed): an advertisement that would take the
 *     table beyond it is refused, so that advertisements, including those of router numbers no
 *     router uses, cannot grow a router's memory without bound. This router's own aggregate is not
 *     counted (it is bounded by {@code maxOriginFilterBytes}), so other routers cannot crowd out
 *     this router's own hosts. By default 256 MiB; at least {@code maxOriginFilterBytes}
 * @param acceptMatchAll whether advertisements of other routers that hold the empty filter (the
 *     encoding of the predicate {@code true}, which every message matches: its router receives all
 *     traffic) are accepted, as by default; when false they are refused and counted. A router's own
 *     hosts may still subscribe to {@code true}
 */
public record RoutingConfig(
    long helloIntervalMs,
    long deadIntervalMs,
    long updateIntervalMs,
    long updatePacingMs,
    long routeExpiryMs,
    long sourceGcMs,
    int seqnoRequestHops,
    long predicateExpiryMs,
    int hopLimit,
    double broadcastFraction,
    int maxRouters,
    long maxEpochAheadMs,
    int maxControlFrameBytes,
    int maxOriginFilters,
    long maxOriginFilterBytes,
    long maxPredicateFilterBytes,
    boolean acceptMatchAll) {

  /** The largest supported number of routers (router numbers fit 16 bits on the wire). */
  public static final int MAX_ROUTERS = 1 << 16;

  /**
   * The default of {@link #maxControlFrameBytes()}: 1 MiB, the router's default frame limit ({@code
   * limits.maxFrameBytes}).
   */
  public static final int DEFAULT_MAX_CONTROL_FRAME_BYTES = 1 << 20;

  /** The smallest {@link #maxControlFrameBytes()}: the router's smallest frame limit. */
  public static final int MIN_CONTROL_FRAME_BYTES = 1024;

  /** The largest {@link #maxOriginFilters()}: what one advertisement can carry (a u16 count). */
  public static final int MAX_ORIGIN_FILTERS = 65_535;

  /** The defaults: see each knob. */
  public static final RoutingConfig DEFAULT = builder().build();

  public RoutingConfig {
    positive("helloIntervalMs", helloIntervalMs);
    if (!exceedsTwice(deadIntervalMs, helloIntervalMs)) {
      throw new IllegalArgumentException(
          "deadIntervalMs ("
              + deadIntervalMs
              + ") must exceed two hello intervals (helloIntervalMs = "
              + helloIntervalMs
              + ")");
    }
    positive("updateIntervalMs", updateIntervalMs);
    if (updatePacingMs < 0 || updatePacingMs >= helloIntervalMs) {
      throw new IllegalArgumentException(
          "updatePacingMs must be in 0.."
              + (helloIntervalMs - 1)
              + " (below helloIntervalMs), got "
              + updatePacingMs);
    }
    if (!exceedsTwice(routeExpiryMs, updateIntervalMs)) {
      throw new IllegalArgumentException(
          "routeExpiryMs ("
              + routeExpiryMs
              + ") must exceed two update intervals (updateIntervalMs = "
              + updateIntervalMs
              + ")");
    }
    if (sourceGcMs <= routeExpiryMs) {
      throw new IllegalArgumentException(
          "sourceGcMs (" + sourceGcMs + ") must exceed routeExpiryMs (" + routeExpiryMs + ")");
    }
    if (seqnoRequestHops < 1 || seqnoRequestHops > 255) {
      throw new IllegalArgumentException(
          "seqnoRequestHops must be in 1..255, got " + seqnoRequestHops);
    }
    positive("predicateExpiryMs", predicateExpiryMs);
    if (hopLimit < 1 || hopLimit > 255) {
      throw new IllegalArgumentException("hopLimit must be in 1..255, got " + hopLimit);
    }
    if (!(broadcastFraction > 0 && broadcastFraction <= 1)) {
      throw new IllegalArgumentException(
          "broadcastFraction must be above 0 and at most 1 (1: never broadcast), got "
              + broadcastFraction);
    }
    if (maxRouters < 1 || maxRouters > MAX_ROUTERS) {
      throw new IllegalArgumentException(
          "maxRouters must be in 1.." + MAX_ROUTERS + ", got " + maxRouters);
    }
    positive("maxEpochAheadMs", maxEpochAheadMs);
    if (maxControlFrameBytes < MIN_CONTROL_FRAME_BYTES) {
      throw new IllegalArgumentException(
          "maxControlFrameBytes must be at least "
              + MIN_CONTROL_FRAME_BYTES
              + ", got "
              + maxControlFrameBytes);
    }
    if (maxOriginFilters < 1 || maxOriginFilters > MAX_ORIGIN_FILTERS) {
      throw new IllegalArgumentException(
          "maxOriginFilters must be in 1.." + MAX_ORIGIN_FILTERS + ", got " + maxOriginFilters);
    }
    positive("maxOriginFilterBytes", maxOriginFilterBytes);
    if (maxPredicateFilterBytes < maxOriginFilterBytes) {
      throw new IllegalArgumentException(
          "maxPredicateFilterBytes ("
              + maxPredicateFilterBytes
              + ") must be at least maxOriginFilterBytes ("
              + maxOriginFilterBytes
              + ")");
    }
  }

  /** Whether {@code a > 2 * b} for a positive {@code b}, without overflowing {@code 2 * b}. */
  private static boolean exceedsTwice(long a, long b) {
    return a > b && a - b > b;
  }

  private static void positive(String knob, long value) {
    if (value <= 0) {
      throw new IllegalArgumentException(knob + " must be positive, got " + value);
    }
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.helloIntervalMs = helloIntervalMs;
    b.deadIntervalMs = deadIntervalMs;
    b.updateIntervalMs = updateIntervalMs;
    b.updatePacingMs = updatePacingMs;
    b.routeExpiryMs = routeExpiryMs;
    b.sourceGcMs = sourceGcMs;
    b.seqnoRequestHops = seqnoRequestHops;
    b.predicateExpiryMs = predicateExpiryMs;
    b.hopLimit = hopLimit;
    b.broadcastFraction = broadcastFraction;
    b.maxRouters = maxRouters;
    b.maxEpochAheadMs = maxEpochAheadMs;
    b.maxControlFrameBytes = maxControlFrameBytes;
    b.maxOriginFilters = maxOriginFilters;
    b.maxOriginFilterBytes = maxOriginFilterBytes;
    b.maxPredicateFilterBytes = maxPredicateFilterBytes;
    b.acceptMatchAll = acceptMatchAll;
    return b;
  }

  /** Builds a {@link RoutingConfig}; unset knobs keep their defaults. */
  public static final class Builder {
    private long helloIntervalMs = 1_000;
    private long deadIntervalMs = 3_500;
    private long updateIntervalMs = 4_000;
    private Long updatePacingMs; // null: the default, which depends on helloIntervalMs
    private long routeExpiryMs = 14_000;
    private long sourceGcMs = 180_000;
    private int seqnoRequestHops = 64;
    private long predicateExpiryMs = 60_000;
    private int hopLimit = 64;
    private double broadcastFraction = 0.5;
    private int maxRouters = 4_096;
    private long maxEpochAheadMs = 24 * 3_600_000L;
    private int maxControlFrameBytes = DEFAULT_MAX_CONTROL_FRAME_BYTES;
    private int maxOriginFilters = MAX_ORIGIN_FILTERS;
    private long maxOriginFilterBytes = 8L << 20;
    private long maxPredicateFilterBytes = 256L << 20;
    private boolean acceptMatchAll = true;

    private Builder() {}

    public Builder helloIntervalMs(long v) {
      helloIntervalMs = v;
      return this;
    }

    public Builder deadIntervalMs(long v) {
      deadIntervalMs = v;
      return this;
    }

    public Builder updateIntervalMs(long v) {
      updateIntervalMs = v;
      return this;
    }

    public Builder updatePacingMs(long v) {
      updatePacingMs = v;
      return this;
    }

    public Builder routeExpiryMs(long v) {
      routeExpiryMs = v;
      return this;
    }

    public Builder sourceGcMs(long v) {
      sourceGcMs = v;
      return this;
    }

    public Builder seqnoRequestHops(int v) {
      seqnoRequestHops = v;
      return this;
    }

    public Builder predicateExpiryMs(long v) {
      predicateExpiryMs = v;
      return this;
    }

    public Builder hopLimit(int v) {
      hopLimit = v;
      return this;
    }

    public Builder broadcastFraction(double v) {
      broadcastFraction = v;
      return this;
    }

    public Builder maxRouters(int v) {
      maxRouters = v;
      return this;
    }

    public Builder maxEpochAheadMs(long v) {
      maxEpochAheadMs = v;
      return this;
    }

    public Builder maxControlFrameBytes(int v) {
      maxControlFrameBytes = v;
      return this;
    }

    public Builder maxOriginFilters(int v) {
      maxOriginFilters = v;
      return this;
    }

    public Builder maxOriginFilterBytes(long v) {
      maxOriginFilterBytes = v;
      return this;
    }

    public Builder maxPredicateFilterBytes(long v) {
      maxPredicateFilterBytes = v;
      return this;
    }

    public Builder acceptMatchAll(boolean v) {
      acceptMatchAll = v;
      return this;
    }

    public RoutingConfig build() {
      return new RoutingConfig(
          helloIntervalMs,
          deadIntervalMs,
          updateIntervalMs,
          updatePacingMs != null ? updatePacingMs : Math.min(100, helloIntervalMs / 4),
          routeExpiryMs,
          sourceGcMs,
          seqnoRequestHops,
          predicateExpiryMs,
          hopLimit,
          broadcastFraction,
          maxRouters,
          maxEpochAheadMs,
          maxControlFrameBytes,
          maxOriginFilters,
          maxOriginFilterBytes,
          maxPredicateFilterBytes,
          acceptMatchAll);
    }
  }
}
