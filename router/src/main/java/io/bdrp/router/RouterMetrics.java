package io.bdrp.router;

import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolErrorCounters;
import java.util.function.IntSupplier;

/**
 * The metrics a router exposes, by name. Gauges read the routing state when rendered, so the
 * registry must be rendered on the router's event loop.
 */
final class RouterMetrics {
  private final Metrics registry;
  final Metrics.Counter published;
  final Metrics.Counter localMatches;
  final Metrics.Counter destinations;
  final Metrics.Counter hopLimitDrops;
  final Metrics.Counter notOnTreeDrops;
  final Metrics.Counter unreachable;
  final Metrics.Counter predicateChanges;
  final Metrics.Histogram matchSeconds;

  RouterMetrics(Metrics m, RoutingNode node, ProtocolErrorCounters errors, IntSupplier clients) {
    this.registry = m;
    published = m.counter("bdrp_messages_published_total", "Messages sent by local hosts.");
    localMatches =
        m.counter(
            "bdrp_local_matches_total", "Messages that matched at least one local host here.");
    destinations =
        m.counter(
            "bdrp_destination_routers_total",
            "Sum of |D| over messages published here (routers each message was sent towards).");
    hopLimitDrops =
        m.counter("bdrp_drops_total", "Copies not forwarded, by reason.", "reason", "hop_limit");
    notOnTreeDrops = m.counter("bdrp_drops_total", "", "reason", "not_on_tree");
    unreachable = m.counter("bdrp_drops_total", "", "reason", "no_route");
    predicateChanges = m.counter("bdrp_set_predicate_total", "Predicates set by local hosts.");
    matchSeconds =
        m.histogram(
            "bdrp_match_seconds",
            "Time to match a published message at the ingress router (local hosts and D).",
            1e-6,
            5e-6,
            1e-5,
            5e-5,
            1e-4,
            5e-4,
            1e-3,
            1e-2);
    m.gauge("bdrp_clients", "Client sessions.", clients::getAsInt);
    m.gauge(
        "bdrp_unicast_routes",
        "Routers this router has a route to.",
        () -> node.unicast().reachable().length);
    m.gauge(
        "bdrp_predicate_origins",
        "Routers whose encoded predicate PREDICATES holds, this one included.",
        () -> node.predicates().size());
    m.gauge(
        "bdrp_predicate_filter_bytes",
        "Bytes of Bloom filters PREDICATES holds.",
        () -> node.predicates().filterBytes());
    m.gauge(
        "bdrp_predicate_rejected_total",
        "Advertisements refused (other Bloom parameters, router number out of range).",
        () -> node.predicates().rejected());
    m.gauge("bdrp_local_hosts", "Hosts with a predicate.", () -> node.local().hostCount());
    for (ErrorCode c : ErrorCode.values()) {
      m.gauge(
          "bdrp_protocol_errors_total",
          "Bad input from clients and routers, by error code.",
          () -> errors.count(c),
          "code",
          c.name().toLowerCase(java.util.Locale.ROOT));
    }
  }

  Metrics registry() {
    return registry;
  }

  Metrics.Counter linkIn(String n) {
    return registry.counter(
        "bdrp_link_data_in_total", "DATA frames received per neighbour.", "neighbour", n);
  }

  Metrics.Counter linkOut(String n) {
    return registry.counter(
        "bdrp_link_data_out_total", "DATA frames sent per neighbour.", "neighbour", n);
  }

  Metrics.Counter linkDropped(String n) {
    return registry.counter(
        "bdrp_link_data_dropped_total",
        "DATA frames dropped per neighbour (link down or above its high water mark).",
        "neighbour",
        n);
  }

  Metrics.Counter hostDelivered(int id, String name) {
    return registry.counter(
        "bdrp_host_delivered_total",
        "Messages delivered per client session.",
        "host",
        Integer.toString(id),
        "name",
        name);
  }

  Metrics.Counter hostDropped(int id, String name) {
    return registry.counter(
        "bdrp_host_dropped_total",
        "Deliveries dropped per client session (above its high water mark).",
        "host",
        Integer.toString(id),
        "name",
        name);
  }
}
