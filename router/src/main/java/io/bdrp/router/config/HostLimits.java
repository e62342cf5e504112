package io.bdrp.router.config;

/**
 * What the clients of a router may ask of it, bounded by what it costs the router and every other
 * router of the federation (each holds this router's aggregate predicate). A request beyond a bound
 * is refused with an ERROR that names the limit, and counted ({@code
 * bdrp_client_requests_refused_total{reason}}); the session stays.
 *
 * <p>Filters are counted as the encoder makes them, before the minimal set: one per alternative of
 * each conjunction (an {@code exists} without a type has one alternative per type), so that the
 * bound is checked before any costly work.
 *
 * @param maxFiltersPerHost most filters one client's predicate may encode to
 * @param maxFiltersPerUser most filters the predicates of all the sessions of one user may encode
 *     to together (users named in {@code auth.clients}; anonymous clients are bounded per host and
 *     per router)
 * @param predicateChangesPerSecond SET_PREDICATEs one session may make per second, on average, with
 *     bursts of as many; more are refused ({@code OVERLOADED}), so that no client makes every
 *     router of the federation re-index more often than this
 * @param maxSessionsPerUser client sessions one named user may hold at once; more are refused at
 *     HELLO ({@code OVERLOADED})
 * @param keepAliveMs a client session that sends nothing for this long is sent a PING; if it still
 *     sends nothing (not even the PONG) for as long again, it is closed ({@code TIMEOUT}), so that
 *     silent sessions cannot hold {@code maxClients} for good
 */
public record HostLimits(
    int maxFiltersPerHost,
    int maxFiltersPerUser,
    int predicateChangesPerSecond,
    int maxSessionsPerUser,
    int keepAliveMs) {
  /** The defaults. */
  public static final HostLimits DEFAULT = new HostLimits(4096, 16_384, 10, 1000, 60_000);
}
