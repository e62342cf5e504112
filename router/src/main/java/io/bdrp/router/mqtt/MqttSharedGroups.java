package io.bdrp.router.mqtt;

import io.bdrp.encoding.Predicate;
import io.bdrp.router.metrics.Metrics;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The shared subscription groups of the router's MQTT port, by their text ({@code
 * $share/ShareName/filter}): each a host in the router's table of hosts ({@link MqttSharedGroup}),
 * made when its first member joins and removed when its last leaves (out of the table, its
 * predicate none, out of the router's aggregate). Each router delivers a message of a group to one
 * of the members it has; routers do not coordinate, so a message reaches one member at each router
 * that has members (docs/mqtt.md).
 *
 * <p>Counts the groups' deliveries, {@code bdrp_mqtt_shared_deliveries_total{result}}: delivered to
 * a member, or no_member (none could take it).
 *
 * <p>Owned by the router's event loop.
 */
final class MqttSharedGroups {
  final MqttListener listener;
  private final Map<String, MqttSharedGroup> byText = new HashMap<>();

  final Metrics.Counter delivered;
  final Metrics.Counter noMember;

  MqttSharedGroups(MqttListener listener) {
    this.listener = listener;
    this.delivered = counter(listener, "delivered");
    this.noMember = counter(listener, "no_member");
  }

  private static Metrics.Counter counter(MqttListener listener, String result) {
    return listener
        .core
        .metrics()
        .registry()
        .counter(
            "bdrp_mqtt_shared_deliveries_total",
            "Messages of MQTT shared subscription groups at this router, by result: delivered (to"
                + " one member) or no_member (dropped: no member could take it, or none was within"
                + " its subscribe permission).",
            "result",
            result);
  }

  /**
   * {@code host} joins the group of its shared subscription {@code sub} (made if there is none);
   * {@code done} as {@link MqttSharedGroup#join}.
   */
  void join(MqttHost host, MqttSubscriptions.Sub sub, Consumer<Boolean> done) {
    MqttSharedGroup g = byText.get(sub.text());
    if (g == null) {
      g =
          new MqttSharedGroup(
              listener.hosts.number(),
              sub.text(),
              sub.predicate(),
              listener.core.config().limits().hosts().predicateChangesPerSecond(),
              this,
              listener.predicates);
      byText.put(sub.text(), g);
      listener.hosts.put(g.id, g);
    }
    g.join(host, sub, done);
  }

  /** {@code host} leaves the group {@code text}, if it is a member. */
  void leave(MqttHost host, String text) {
    MqttSharedGroup g = byText.get(text);
    if (g != null) {
      g.leave(host);
    }
  }

  /** A session that ended leaves the groups of all its shared subscriptions. */
  void left(MqttHost host) {
    for (String text : host.subscriptions.shared.keySet()) {
      leave(host, text);
    }
  }

  /** The group of that text, or null. */
  MqttSharedGroup get(String text) {
    return byText.get(text);
  }

  /**
   * A group without members: out of the table of hosts, its predicate none, out of the aggregate.
   */
  void remove(MqttSharedGroup g) {
    if (g.closed) {
      return;
    }
    g.closed = true;
    byText.remove(g.name, g);
    listener.hosts.remove(g.id);
    listener.core.node().setHostMatch(g.id, Predicate.NONE);
    listener.predicates.left(g);
    listener.core.rearm();
  }
}
