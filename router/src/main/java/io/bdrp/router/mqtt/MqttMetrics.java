package io.bdrp.router.mqtt;

import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import java.util.HashMap;
import java.util.Map;

/**
 * The MQTT port's series, by protocol ({@code mqtt3} for 3.1.1, {@code mqtt5}; {@code unknown}
 * before a CONNECT is read): connections accepted and refused, malformed input, publishes received
 * and refused, subscriptions refused, deliveries dropped. MQTT sessions are hosts like bdrp
 * clients, so their deliveries are also in {@code bdrp_host_delivered_total} and their limits in
 * {@code bdrp_connections_closed_total{port="mqtt"}}.
 *
 * <p>Counters are made here, once, and read by sessions on the router's event loop.
 */
final class MqttMetrics {
  /** The protocols, as labels: index 0 before CONNECT, then 3.1.1 and 5. */
  static final String[] PROTOCOLS = {"unknown", "mqtt3", "mqtt5"};

  private final Metrics registry;
  private final RouterMetrics router;

  final Protocol unknown;
  final Protocol mqtt3;
  final Protocol mqtt5;

  MqttMetrics(RouterMetrics router) {
    this.router = router;
    this.registry = router.registry();
    this.unknown = new Protocol(PROTOCOLS[0]);
    this.mqtt3 = new Protocol(PROTOCOLS[1]);
    this.mqtt5 = new Protocol(PROTOCOLS[2]);
  }

  /** The counters of one protocol. */
  final class Protocol {
    final String name;

    /** Counters by name and label value, made on first use (on the loop, once the router runs). */
    private final Map<String, Metrics.Counter> made = new HashMap<>();

    final Metrics.Counter connected;
    final Metrics.Counter publishesQos0;
    final Metrics.Counter publishesQos1;
    final Metrics.Counter publishesQos2;
    final Metrics.Counter retainedSent;

    private Protocol(String name) {
      this.name = name;
      this.connected = connections("accepted");
      this.publishesQos0 = publishes("0");
      this.publishesQos1 = publishes("1");
      this.publishesQos2 = publishes("2");
      this.retainedSent =
          registry.counter(
              "bdrp_mqtt_retained_sent_total",
              "Retained messages sent to MQTT sessions for their new subscriptions, by protocol.",
              "protocol",
              name);
    }

    /** The counter {@code name{protocol, label=value}}, one registry call per series. */
    private Metrics.Counter counter(
        String name, String help, String p, String protocol, String label, String value) {
      return made.computeIfAbsent(
          name + '\0' + value, k -> registry.counter(name, help, p, protocol, label, value));
    }

    Metrics.Counter publishes(int qos) {
      return qos == 0 ? publishesQos0 : qos == 1 ? publishesQos1 : publishesQos2;
    }

    private Metrics.Counter publishes(String qos) {
      return counter(
          "bdrp_mqtt_publishes_received_total",
          "PUBLISH packets received from MQTT clients, by protocol and QoS.",
          "protocol",
          name,
          "qos",
          qos);
    }

    /** Wills by result: published, cancelled, unmappable, retained_full. */
    Metrics.Counter wills(String result) {
      return counter(
          "bdrp_mqtt_wills_total",
          "Will messages of MQTT sessions whose connection ended without a DISCONNECT, by protocol"
              + " and result: published, cancelled (the client reconnected within the Will Delay"
              + " Interval), unmappable, retained_full (a retained will the store of retained"
              + " messages had no room for: published, not retained).",
          "protocol",
          name,
          "result",
          result);
    }

    /** CONNECTs by result: accepted, or the reason of the refusal. */
    Metrics.Counter connections(String result) {
      return counter(
          "bdrp_mqtt_connections_total",
          "CONNECTs of MQTT clients by protocol and result: accepted, not_authorized,"
              + " bad_credentials, identifier_rejected, unsupported_protocol, server_busy,"
              + " user_sessions, will_topic_invalid, will_unmappable, will_not_authorized.",
          "protocol",
          name,
          "result",
          result);
    }

    /** Sessions ended for bad input: malformed, too_large, quota, topic_alias, protocol_error. */
    Metrics.Counter malformed(String reason) {
      return counter(
          "bdrp_mqtt_malformed_total",
          "MQTT sessions ended for bad input, by protocol and reason: malformed (a packet that does"
              + " not decode), too_large (above limits.maxFrameBytes), quota (a bound of the"
              + " session or the port: packets unanswered, partial packets), topic_alias (a topic alias"
              + " out of range, or not set and used), protocol_error (a packet"
              + " where MQTT forbids it, or a feature this router does not offer).",
          "protocol",
          name,
          "reason",
          reason);
    }

    /** PUBLISHes not forwarded: publish_permission, unmappable, retained_full. */
    Metrics.Counter publishRefused(String reason) {
      return counter(
          "bdrp_mqtt_publishes_refused_total",
          "PUBLISH packets not forwarded, by protocol and reason: publish_permission (outside the"
              + " user's publish predicate), unmappable (no bdrp message fits them: too many"
              + " attributes, a name or value beyond the limits), retained_full (a retained"
              + " PUBLISH beyond the bounds of the store of retained messages), retention_full"
              + " and not_ready (a PUBLISH for the reliable service while its retention is full"
              + " or the router cannot yet compute destinations), unreached.",
          "protocol",
          name,
          "reason",
          reason);
    }

    /** Subscriptions refused: subscribe_permission, invalid_filter, quota. */
    Metrics.Counter subscriptionRefused(String reason) {
      return counter(
          "bdrp_mqtt_subscriptions_refused_total",
          "Topic filters of SUBSCRIBE packets refused, by protocol and reason:"
              + " subscribe_permission (nothing of it within the user's subscribe predicate),"
              + " invalid_filter (a topic filter, content filter or share name that is not valid),"
              + " quota (a limit of the router's predicates, or of a session's shared"
              + " subscriptions).",
          "protocol",
          name,
          "reason",
          reason);
    }

    /** Kept sessions by event: kept, resumed, expired, discarded, limit. */
    Metrics.Counter sessions(String event) {
      return counter(
          "bdrp_mqtt_sessions_total",
          "MQTT sessions kept after their connection, by protocol and event: kept (the connection"
              + " ended, the session is kept), resumed (a CONNECT with Clean Start 0 took it up"
              + " again), expired (its Session Expiry Interval passed), discarded (a CONNECT with"
              + " Clean Start 1, or of another protocol version or user, took its client"
              + " identifier), limit (not kept: limits.mqttAbsentSessions reached).",
          "protocol",
          name,
          "event",
          event);
    }

    /** QoS 1 and 2 deliveries queued in kept sessions, by the QoS they are delivered at. */
    Metrics.Counter queued(int qos) {
      return counter(
          "bdrp_mqtt_queued_total",
          "QoS 1 and 2 deliveries queued in kept MQTT sessions (while the client is away, or"
              + " beyond its receive maximum), by protocol and the QoS of the delivery.",
          "protocol",
          name,
          "qos",
          Integer.toString(qos));
    }

    /** Deliveries dropped: inflight_window, too_large, no_topic. */
    Metrics.Counter deliveryDropped(String reason) {
      return counter(
          "bdrp_mqtt_deliveries_dropped_total",
          "Deliveries to MQTT clients dropped, by protocol and reason: inflight_window (the"
              + " client's receive maximum of unacknowledged QoS 1 messages reached), too_large"
              + " (above the client's maximum packet size), no_topic (a message without"
              + " mqtt.topic), expired (after its mqtt.expiresAt), absent_qos0 (QoS 0 to a kept"
              + " session whose client is away), queue_messages and queue_bytes (a kept session's"
              + " queue full: limits.mqttQueuedMessages, limits.mqttQueuedBytes), session_ended"
              + " (queued or unacknowledged when the session ended), retained_backlog (more"
              + " retained messages waiting for a session than the store holds).",
          "protocol",
          name,
          "reason",
          reason);
    }
  }

  /** The router's own series (connections closed, per-host counters). */
  RouterMetrics router() {
    return router;
  }
}
