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
 * @param mqttSessionExpiryMaxSeconds longest an MQTT session is kept after its connection ends: an
 *     MQTT 5 Session Expiry Interval above it is cut to it (the CONNACK says so), and an MQTT 3.1.1
 *     session without a clean session is kept this long; 0 keeps none
 * @param mqttQueuedMessages QoS 1 and 2 deliveries one kept MQTT session may hold queued (while its
 *     client is away, or beyond its receive maximum); more are dropped and counted
 * @param mqttQueuedBytes bytes of messages one kept MQTT session may hold, queued and in flight
 *     together (each counted as its bdrp encoding); more are dropped and counted
 * @param mqttAbsentSessions MQTT sessions the router keeps whose client is away; a connection that
 *     ends beyond it ends its session too (counted)
 * @param reliableRetentionMessages reliable messages the router holds at most as their ingress
 *     until every router of their D has them; beyond, publishers are answered OVERLOADED and wait
 * @param reliableRetentionBytes bytes of those messages held at most
 * @param reliableRetentionMs how long the router keeps trying to reach a reliable message's D
 *     before it gives up on the routers missing and tells the publisher (UNREACHED)
 */
public record HostLimits(
    int maxFiltersPerHost,
    int maxFiltersPerUser,
    int predicateChangesPerSecond,
    int maxSessionsPerUser,
    int keepAliveMs,
    int mqttSessionExpiryMaxSeconds,
    int mqttQueuedMessages,
    int mqttQueuedBytes,
    int mqttAbsentSessions,
    int reliableRetentionMessages,
    int reliableRetentionBytes,
    int reliableRetentionMs) {
  /** The defaults. */
  public static final HostLimits DEFAULT =
      new HostLimits(
          4096, 16_384, 10, 1000, 60_000, 86_400, 1000, 1 << 20, 1000, 10_000, 64 << 20, 60_000);

  /** These limits, with the MQTT sessions' limits at their defaults. */
  public HostLimits(
      int maxFiltersPerHost,
      int maxFiltersPerUser,
      int predicateChangesPerSecond,
      int maxSessionsPerUser,
      int keepAliveMs) {
    this(
        maxFiltersPerHost,
        maxFiltersPerUser,
        predicateChangesPerSecond,
        maxSessionsPerUser,
        keepAliveMs,
        86_400,
        1000,
        1 << 20,
        1000,
        DEFAULT.reliableRetentionMessages,
        DEFAULT.reliableRetentionBytes,
        DEFAULT.reliableRetentionMs);
  }

  /** These limits with the MQTT sessions' limits in place of theirs. */
  public HostLimits withMqttSessions(
      int expiryMaxSeconds, int queuedMessages, int queuedBytes, int absentSessions) {
    return new HostLimits(
        maxFiltersPerHost,
        maxFiltersPerUser,
        predicateChangesPerSecond,
        maxSessionsPerUser,
        keepAliveMs,
        expiryMaxSeconds,
        queuedMessages,
        queuedBytes,
        absentSessions,
        reliableRetentionMessages,
        reliableRetentionBytes,
        reliableRetentionMs);
  }

  /** These limits with the reliable retention's in place of theirs. */
  public HostLimits withReliableRetention(int messages, int bytes, int ms) {
    return new HostLimits(
        maxFiltersPerHost,
        maxFiltersPerUser,
        predicateChangesPerSecond,
        maxSessionsPerUser,
        keepAliveMs,
        mqttSessionExpiryMaxSeconds,
        mqttQueuedMessages,
        mqttQueuedBytes,
        mqttAbsentSessions,
        messages,
        bytes,
        ms);
  }

  /** The reliable service's bounds of these limits, over {@code base}'s timers. */
  public io.bdrp.routing.Reliable.Config reliable(io.bdrp.routing.Reliable.Config base) {
    return new io.bdrp.routing.Reliable.Config(
        base.resendMillis(),
        base.maxResendMillis(),
        reliableRetentionMs,
        reliableRetentionMessages,
        reliableRetentionBytes,
        base.ackDelayMillis(),
        base.reorderMessages(),
        base.publishersKept());
  }
}
