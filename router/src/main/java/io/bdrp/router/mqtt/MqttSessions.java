package io.bdrp.router.mqtt;

import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.HostLimits;
import io.netty.util.concurrent.EventExecutor;
import java.util.LinkedHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The MQTT sessions a router keeps while their client is away (MQTT 5 Clean Start 0 with a Session
 * Expiry Interval above 0, MQTT 3.1.1 Clean Session 0): each stays a host of the router with its
 * predicate, so that its subscriptions stay in routing and its QoS 1 and 2 deliveries are queued
 * ({@link MqttHost}), until its client comes back ({@link #take}) or its expiry interval has passed
 * since its connection ended; then it ends ({@link #end}): detached, its predicate removed, what it
 * held let go, its delayed will published.
 *
 * <p>At most {@link HostLimits#mqttAbsentSessions()} are kept: a connection that ends beyond that
 * ends its session too. Sessions live in the router's memory only: a router that restarts has none.
 * Counted in {@code bdrp_mqtt_sessions_total{event}}: kept, resumed, expired, discarded (by a Clean
 * Start 1, or a CONNECT of another protocol version or user), limit; queued or unacknowledged
 * deliveries let go with a session in {@code bdrp_mqtt_deliveries_dropped_total{reason=
 * "session_ended"}}.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttSessions {
  private final MqttListener listener;
  private final LinkedHashMap<String, MqttHost> away = new LinkedHashMap<>();
  private volatile int awayCount; // for the gauge, read on the metrics thread

  MqttSessions(MqttListener listener) {
    this.listener = listener;
    listener
        .core
        .metrics()
        .registry()
        .gauge(
            "bdrp_mqtt_sessions_away",
            "MQTT sessions kept while their client is away (at most limits.mqttAbsentSessions).",
            () -> awayCount);
  }

  private HostLimits limits() {
    return listener.core.config().limits().hosts();
  }

  /** The session of {@code clientId} kept while its client is away, or null. */
  MqttHost held(String clientId) {
    return away.get(clientId);
  }

  /** The session of {@code clientId} kept while its client was away, taken out; or null. */
  MqttHost take(String clientId) {
    MqttHost h = away.remove(clientId);
    awayCount = away.size();
    if (h != null && h.expiry != null) {
      h.expiry.cancel(false);
      h.expiry = null;
    }
    return h;
  }

  /**
   * The connection of {@code host} ended (not taken over by another): the session is kept for its
   * expiry interval if it has one and there is room, else it ends now. Returns whether it is kept.
   */
  boolean connectionEnded(MqttHost host, EventExecutor loop) {
    if (!host.kept()) {
      end(host);
      return false;
    }
    if (away.size() >= limits().mqttAbsentSessions()) {
      host.counters.sessions("limit").inc();
      end(host);
      return false;
    }
    host.away();
    away.put(host.name, host);
    awayCount = away.size();
    host.counters.sessions("kept").inc();
    host.expiry =
        loop.schedule(
            () -> {
              host.expiry = null;
              if (away.remove(host.name, host)) {
                awayCount = away.size();
                host.counters.sessions("expired").inc();
                end(host);
              }
            },
            host.expirySeconds,
            TimeUnit.SECONDS);
    return true;
  }

  /**
   * Ends {@code host}'s session: no more deliveries, its predicate out of the router's aggregate,
   * its queue let go (counted), its delayed will, if any, published now (MQTT-3.1.3-9).
   */
  void end(MqttHost host) {
    host.ended = true;
    int lost = host.discard();
    if (lost > 0) {
      host.counters.deliveryDropped("session_ended").add(lost);
    }
    listener.hosts.detach(host);
    listener.reliablePublishers.remove(host.reliablePublisher);
    listener.core.metrics().removeHost(host.id, host.name);
    listener.core.node().setHostMatch(host.id, Predicate.NONE);
    listener.predicates.left(host);
    listener.shared.left(host);
    listener.core.rearm();
    MqttWill.sessionEnded(listener, host.name);
  }
}
