package io.bdrp.router.metrics;

import io.bdrp.routing.DataPlane;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolErrorCounters;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The metrics a router exposes, by name. Gauges read the routing state when rendered, so the
 * registry must be rendered on the router's event loop.
 */
public final class RouterMetrics {
  private final Metrics registry;
  // Counters made on first use, by metric name and label value.
  private final Map<String, Metrics.Counter> byLabel = new HashMap<>();
  public final Metrics.Counter predicateChanges;
  public final Metrics.Counter udpSent;
  public final Metrics.Counter udpReceived;
  public final Metrics.Histogram matchSeconds;
  public final Metrics.Histogram loopLagSeconds;

  public RouterMetrics(Metrics m, RoutingNode node, ProtocolErrorCounters errors) {
    this.registry = m;
    udpSent = m.counter("bdrp_udp_datagrams_sent_total", "DATA datagrams sent to neighbours.");
    udpReceived =
        m.counter(
            "bdrp_udp_datagrams_received_total",
            "Datagrams received on the UDP socket, dropped ones included.");
    predicateChanges =
        m.counter(
            "bdrp_set_predicate_total",
            "Predicates set by local hosts (clients of every front end; not the router's own store"
                + " of retained messages).");
    matchSeconds =
        m.histogram(
            "bdrp_match_seconds",
            "Time to match a published message at the ingress router: the exact match against"
                + " the local hosts, the match against every router's encoded predicate for D,"
                + " and the partition of D by next hop (not the writes). One published message"
                + " in 16 is timed; bdrp_messages_published_total counts them all.",
            1e-6,
            5e-6,
            1e-5,
            5e-5,
            1e-4,
            5e-4,
            1e-3,
            1e-2);
    loopLagSeconds =
        m.histogram(
            "bdrp_event_loop_lag_seconds",
            "How late the router's event loop ran a task it had scheduled (every "
                + LoopLag.PERIOD_MS
                + " ms): the time a frame of any session may wait behind the work before it.",
            1e-4,
            1e-3,
            2e-3,
            5e-3,
            1e-2,
            2e-2,
            5e-2,
            0.1,
            0.2,
            0.5,
            1,
            5);
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
        "Bytes of Bloom filters PREDICATES holds (as set-bit positions).",
        () -> node.predicates().filterBytes());
    m.gauge(
        "bdrp_predicate_other_filter_bytes",
        "Bytes of the other routers' filters PREDICATES holds (limit:"
            + " routing.maxPredicateFilterBytes).",
        () -> node.predicates().otherFilterBytes());
    m.gauge(
        "bdrp_predicate_match_all_origins",
        "Routers whose aggregate holds the filter that matches every message (a subscriber of"
            + " true), this one included: each receives every message.",
        () -> node.predicates().matchAllOrigins());
    String bound =
        "Advertisements of other routers refused for a bound of PREDICATES, by reason:"
            + " too_large (routing.maxOriginFilters, maxOriginFilterBytes or one frame),"
            + " table_full (routing.maxPredicateFilterBytes), match_all (routing.acceptMatchAll"
            + " off); own: this router's aggregate not taken (its host was refused).";
    m.counter(
        "bdrp_predicate_refused_total",
        bound,
        () -> node.predicates().refusedTooLarge(),
        "reason",
        "too_large");
    m.counter(
        "bdrp_predicate_refused_total",
        bound,
        () -> node.predicates().refusedTableFull(),
        "reason",
        "table_full");
    m.counter(
        "bdrp_predicate_refused_total",
        bound,
        () -> node.predicates().refusedMatchAll(),
        "reason",
        "match_all");
    m.counter(
        "bdrp_predicate_refused_total",
        bound,
        () -> node.predicates().ownRefused(),
        "reason",
        "own");
    m.counter(
        "bdrp_predicate_rejected_total",
        "Advertisements refused (other Bloom parameters, router number out of range).",
        () -> node.predicates().rejected());
    m.counter(
        "bdrp_predicate_deltas_sent_total",
        "Advertisements sent as the change from the version the neighbour held.",
        () -> node.predicates().deltasSent());
    m.counter(
        "bdrp_predicate_resyncs_total",
        "Changes received for a version not held, answered by asking for the whole advertisement.",
        () -> node.predicates().resyncs());
    m.gauge("bdrp_local_hosts", "Hosts with a predicate.", () -> node.local().hostCount());
    m.gauge(
        "bdrp_local_filters",
        "Filters of this router's aggregate predicate, the one it advertises to every router"
            + " (limit: routing.maxOriginFilters).",
        () -> node.predicates().get(node.self()).size());
    m.counter(
        "bdrp_connections_lost_total",
        "Sessions whose connection failed under them (reset by the peer, broken pipe).",
        errors::connectionsLost);
    m.counter(
        "bdrp_control_refused_total",
        "Control messages from neighbours refused because they named an epoch more than"
            + " routing.maxEpochAheadMs ahead of this router's clock.",
        node::futureEpochs);
    // Claims about this router's own sequence number that it moved past (DistanceVector).
    m.counter(
        "bdrp_unicast_claims_overtaken_total",
        "Routes or sequence-number requests naming a newer sequence number for this router than it"
            + " originated (forged, or a previous run ahead of the clock), which it moved past.",
        () -> node.unicast().claimsOvertaken());
    // Periodic full updates sent and taken as digests (DistanceVector, "Updates").
    String digestHelp =
        "Periodic full route updates as digests: sent to neighbours, and received ones that agreed"
            + " with the routes held (refreshing them) or disagreed (the full table asked for).";
    m.counter(
        "bdrp_unicast_digests_total",
        digestHelp,
        () -> node.unicast().digestsSent(),
        "outcome",
        "sent");
    m.counter(
        "bdrp_unicast_digests_total",
        digestHelp,
        () -> node.unicast().digestsAgreed(),
        "outcome",
        "agreed");
    m.counter(
        "bdrp_unicast_digests_total",
        digestHelp,
        () -> node.unicast().digestsDisagreed(),
        "outcome",
        "disagreed");
    m.counter(
        "bdrp_unicast_tables_requested_total",
        "Full route tables that neighbours asked for after a digest of this router's disagreed"
            + " with what they held.",
        () -> node.unicast().tablesRequested());
    for (ErrorCode c : ErrorCode.values()) {
      m.counter(
          "bdrp_protocol_errors_total",
          "Bad input from clients and routers, by error code.",
          () -> errors.count(c),
          "code",
          c.name().toLowerCase(java.util.Locale.ROOT));
    }
  }

  /** The number of client sessions, read when rendered. */
  public void clients(IntSupplier clients) {
    registry.gauge("bdrp_clients", "Client sessions.", clients::getAsInt);
  }

  /**
   * The data plane's counters, read when rendered (on the router's loop); {@code kernelDuplicates}
   * counts the broadcasts the kernel fast path dropped as duplicates, which the data plane never
   * saw.
   */
  public void dataPlane(DataPlane<?> dp, LongSupplier udpOverflows, LongSupplier kernelDuplicates) {
    registry.counter(
        "bdrp_messages_published_total", "Messages sent by local hosts.", dp::published);
    registry.counter(
        "bdrp_data_received_total", "DATA packets received from neighbours.", dp::received);
    registry.counter("bdrp_data_copies_total", "DATA copies queued to neighbours.", dp::copies);
    registry.counter(
        "bdrp_local_matches_total",
        "Messages, published here or received, that matched at least one local host.",
        dp::localMatches);
    registry.counter("bdrp_deliveries_total", "Deliveries queued to local hosts.", dp::delivered);
    registry.counter(
        "bdrp_destination_routers_total",
        "Sum of |D| over messages published here (routers each message was sent towards).",
        dp::destinationSum);
    for (DataPlane.Drop d : DataPlane.Drop.values()) {
      registry.counter(
          "bdrp_drops_total",
          "Data-plane drops by reason: hop_limit and not_on_tree count packets, no_route and"
              + " unknown_router routers of D, link copies, host deliveries, bad_message and"
              + " duplicate (broadcasts taken already) packets, own_source and unknown_source"
              + " packets from a neighbour naming this router, or a router without a route, as"
              + " their source. duplicate includes those the kernel fast path dropped.",
          d == DataPlane.Drop.DUPLICATE
              ? () -> dp.drops(d) + kernelDuplicates.getAsLong()
              : () -> dp.drops(d),
          "reason",
          d.name().toLowerCase(Locale.ROOT));
    }
    registry.counter(
        "bdrp_udp_receive_overflows_total",
        "DATA datagrams the kernel dropped because the UDP socket's receive buffer was full"
            + " (read from /proc/net/udp before each scrape).",
        udpOverflows);
  }

  /** The reliable service's counters and gauges, read when rendered (on the router's loop). */
  public void reliable(io.bdrp.routing.Reliable<?> r) {
    registry.counter(
        "bdrp_reliable_published_total", "Messages published reliably here.", r::published);
    registry.counter(
        "bdrp_reliable_confirmed_total",
        "Messages published reliably here that every router of their D acknowledged.",
        r::confirmed);
    registry.counter(
        "bdrp_reliable_deliveries_total",
        "Deliveries of reliable messages queued to local hosts.",
        r::delivered);
    for (io.bdrp.routing.Reliable.Count c : io.bdrp.routing.Reliable.Count.values()) {
      registry.counter(
          "bdrp_reliable_events_total",
          "Reliable service events (docs/reliability.md, \"The reliable service\"): resent copies,"
              + " queued (resends put off: the copy still queued on its link), refused publishes (retention full), abandoned routers, duplicate and"
              + " publisher_duplicate messages dropped, held (out of order) and reorder_full,"
              + " skipped numbers, stale copies, link, no_route and hop_limit copies not sent,"
              + " refused_input frames, bad_message.",
          () -> r.count(c),
          "event",
          c.name().toLowerCase(Locale.ROOT));
    }
    registry.gauge(
        "bdrp_reliable_retained_messages",
        "Reliable messages held here until every router of their D acknowledges them.",
        r::retainedMessages);
    registry.gauge(
        "bdrp_reliable_retained_bytes",
        "Bytes of the reliable messages held here until their D acknowledges them.",
        r::retainedBytes);
    registry.gauge(
        "bdrp_reliable_held_messages",
        "Reliable messages held here, as a destination, while an earlier one is missing.",
        r::heldMessages);
  }

  public Metrics.Counter linkRefused(String parameter) {
    return byLabel(
        "bdrp_link_refused_total",
        "Neighbours' hellos refused, by the parameter that differed (protocol, router,"
            + " routing.maxRouters, bloom.bits, bloom.hashes), neighbour / token, duplicate"
            + " (a live neighbour's number from another incarnation), tls (the TLS handshake"
            + " failed) or certificate (it names another router number than the hello).",
        "parameter",
        parameter);
  }

  public Metrics.Counter helloIgnored(String field) {
    return byLabel(
        "bdrp_link_hello_ignored_total",
        "Parts of neighbours' hellos ignored as malformed, by field (admin: the admin API's port"
            + " and flags); the link comes up without them.",
        "field",
        field);
  }

  public Metrics.Counter linkErrorReceived(String code) {
    return byLabel(
        "bdrp_link_errors_received_total",
        "ERROR frames received from neighbouring routers, by code.",
        "code",
        code);
  }

  public Metrics.Counter malformedData(String transport) {
    return byLabel(
        "bdrp_data_malformed_total",
        "DATA frames or datagrams with a malformed header, dropped.",
        "transport",
        transport);
  }

  public Metrics.Counter ringDropped(String reason) {
    return byLabel(
        "bdrp_ring_frames_dropped_total",
        "DATA frames read from a ring (shm or rdma links) and dropped: no_session (the neighbour's"
            + " session is down).",
        "reason",
        reason);
  }

  /** DATA frames of rdma links: sent, received, failed (a write the transport refused). */
  public Metrics.Counter rdmaFrames(String direction) {
    return byLabel(
        "bdrp_rdma_frames_total",
        "DATA frames through the rings of rdma links: sent (into a neighbour's ring), received (read"
            + " from this router's rings and taken), failed (a write the transport refused: dropped).",
        "direction",
        direction);
  }

  public Metrics.Counter udpDropped(String reason) {
    return byLabel(
        "bdrp_udp_datagrams_dropped_total",
        "Datagrams dropped on arrival: unknown_sender (not from a neighbour's UDP address), mac"
            + " (tag or encryption does not verify under the session's key), replay (a sequence"
            + " number taken already or too old), short (no room for the protection).",
        "reason",
        reason);
  }

  /** The counter {@code name{label="value"}}, made on first use: one series per value. */
  private Metrics.Counter byLabel(String name, String help, String label, String value) {
    return byLabel.computeIfAbsent(
        name + '\0' + value, k -> registry.counter(name, help, label, value));
  }

  public Metrics registry() {
    return registry;
  }

  public Metrics.Counter linkIn(String n) {
    return registry.counter(
        "bdrp_link_data_in_total", "DATA frames received per neighbour.", "neighbour", n);
  }

  public Metrics.Counter linkOut(String n) {
    return registry.counter(
        "bdrp_link_data_out_total", "DATA frames sent per neighbour.", "neighbour", n);
  }

  /**
   * Bytes of the DATA ({@code type="data"}) or RELIABLE_DATA ({@code type="reliable_data"}) frames
   * sent to neighbour {@code n}, kept on the router's loop and read from {@code bytes} when
   * rendered.
   */
  public void linkDataBytes(String n, String type, LongSupplier bytes) {
    registry.counter(
        "bdrp_link_data_bytes_out_total",
        "Bytes of the DATA copies sent per neighbour, whole frames (length prefix included), by"
            + " type: data (best effort, every transport of the link) and reliable_data (copies of"
            + " reliable messages, first and resent); not the copies the kernel fast path forwards.",
        bytes,
        "neighbour",
        n,
        "type",
        type);
  }

  /**
   * Bytes of the RELIABLE_ACK frames sent to neighbour {@code n}, this router's own and those it
   * passes on, kept on the router's loop and read from {@code bytes} when rendered.
   */
  public void linkAckBytes(String n, LongSupplier bytes) {
    registry.counter(
        "bdrp_link_reliable_ack_bytes_out_total",
        "Bytes of the reliable service's acknowledgements (RELIABLE_ACK frames, 26 bytes each) sent"
            + " per neighbour: this router's own and those it passes on towards their ingress.",
        bytes,
        "neighbour",
        n);
  }

  public Metrics.Counter linkDropped(String n) {
    return registry.counter(
        "bdrp_link_data_dropped_total",
        "DATA frames dropped per neighbour (link down or above its high water mark).",
        "neighbour",
        n);
  }

  /** Removes the series of a client session that ended. */
  public void removeHost(int id, String name) {
    String[] labels = {"host", Integer.toString(id), "name", name};
    registry.remove("bdrp_host_delivered_total", labels);
    registry.remove("bdrp_host_dropped_total", labels);
  }

  /**
   * Connections the router closed on {@code port} ({@code clients}, {@code routers}) for a limit.
   */
  public Metrics.Counter connectionsClosed(String port, String reason) {
    String help =
        "Connections closed by the router for a limit, by port and reason: handshakes (too many"
            + " connections in their HELLO), hello_timeout (no HELLO in time), slow_consumer (output"
            + " above the high water mark too long), silent (a neighbour's session carried nothing"
            + " for a dead interval), not_authorized (a client without a valid token), keepalive (a"
            + " client sent nothing, not even a PONG, for twice limits.keepAliveMs).";
    return byLabel.computeIfAbsent(
        "bdrp_connections_closed_total\0" + port + '\0' + reason,
        k ->
            registry.counter(
                "bdrp_connections_closed_total", help, "port", port, "reason", reason));
  }

  /** Reloads of TLS files by result: ok, or failed (the previous certificates stay in use). */
  public Metrics.Counter tlsReloads(String result) {
    return byLabel(
        "bdrp_tls_reloads_total",
        "Reloads of changed TLS certificate, key and CA files, by result: ok, or failed"
            + " (the previous ones stay in use).",
        "result",
        result);
  }

  /**
   * Claims of other routers refused for their origin's signature (mutual TLS), by kind (route,
   * advertisement, certificate) and reason (unsigned, unknown_certificate, bad_signature).
   */
  public Metrics.Counter originClaimsRefused(
      io.bdrp.routing.OriginAuthority.ClaimKind kind, io.bdrp.routing.OriginAuthority.Verdict why) {
    return registry.counter(
        "bdrp_origin_claims_refused_total",
        "Routes, advertisements and certificates of other routers refused because their origin did"
            + " not sign them (with mutual TLS), by kind and reason: unsigned, unknown_certificate"
            + " (the origin's certificate not held yet; asked for again), bad_signature (forged or"
            + " tampered; for a certificate: not the origin's under the network's CA).",
        "kind",
        kind.label(),
        "reason",
        why.label());
  }

  /** SENDs refused by reason ({@code publish_permission}: outside the user's permission). */
  public Metrics.Counter sendsRefused(String reason) {
    return byLabel(
        "bdrp_client_sends_refused_total",
        "Messages from clients refused, by reason: publish_permission (the message is outside"
            + " the user's publish predicate), reserved_attribute (it carries mqtt.store.retained"
            + " or mqtt.store.for, which only routers set), reliable_retention_full (a reliable"
            + " message while this router holds as many as its retention allows),"
            + " reliable_not_ready (a reliable message while this router, just started, cannot yet"
            + " compute its destinations).",
        "reason",
        reason);
  }

  public Metrics.Counter requestsRefused(String reason) {
    return byLabel(
        "bdrp_client_requests_refused_total",
        "Client requests refused for a limit, by reason: host_filters, user_filters"
            + " (limits.maxFiltersPer*), router_aggregate (routing.maxOrigin*), control_busy"
            + " (predicates waiting for the control thread beyond their bound), predicate_rate"
            + " (limits.predicateChangesPerSecond), user_sessions (limits.maxSessionsPerUser).",
        "reason",
        reason);
  }

  /** The partial-frame budget of {@code port}: bytes reserved now, and refusals. */
  public void inboundBudget(String port, io.bdrp.transport.InboundBudget budget) {
    registry.gauge(
        "bdrp_inbound_partial_bytes",
        "Bytes held by partial frames of a port's connections (limit: limits.inboundBufferBytes).",
        budget::reservedBytes,
        "port",
        port);
    registry.counter(
        "bdrp_inbound_budget_refused_total",
        "Sessions ended because the partial frames of their port had spent"
            + " limits.inboundBufferBytes.",
        budget::refused,
        "port",
        port);
  }

  /** Control messages per neighbour that waited for the link's share of control frames. */
  public Metrics.Counter linkControlDeferred(String n) {
    return registry.counter(
        "bdrp_link_control_deferred_total",
        "Control messages per neighbour that waited in the router because the link's output buffer"
            + " held its share (limits.linkControlPercent) of control frames.",
        "neighbour",
        n);
  }

  /** Control frames per neighbour that waited for its rate. */
  public Metrics.Counter linkControlThrottled(String n) {
    return registry.counter(
        "bdrp_link_control_throttled_total",
        "Control frames (and PINGs) per neighbour that waited in the router because the neighbour"
            + " sent more than limits.linkControlFramesPerSecond; its link is not read meanwhile.",
        "neighbour",
        n);
  }

  /** Control messages per neighbour and direction ({@code sent}, {@code received}). */
  public Metrics.Counter linkControl(String direction, String n) {
    return registry.counter(
        "bdrp_link_control_" + direction + "_total",
        "Control messages (hellos, route updates, advertisements, requests) "
            + direction
            + " per neighbour.",
        "neighbour",
        n);
  }

  public Metrics.Counter hostDelivered(int id, String name) {
    return registry.counter(
        "bdrp_host_delivered_total",
        "Messages delivered per client session.",
        "host",
        Integer.toString(id),
        "name",
        name);
  }

  public Metrics.Counter hostDropped(int id, String name) {
    return registry.counter(
        "bdrp_host_dropped_total",
        "Deliveries dropped per client session (above its high water mark).",
        "host",
        Integer.toString(id),
        "name",
        name);
  }

  /** Traces started by this router's clients (see docs/trace.md). */
  public Metrics.Counter traces() {
    return registry.counter("bdrp_traces_total", "Traces started by clients of this router.");
  }

  /**
   * Trace reports this router could not send, or pass on, towards the router that started the
   * trace: no route to it, or its next hop's session down or above its high water mark.
   */
  public Metrics.Counter traceReportsUnsent() {
    return registry.counter(
        "bdrp_trace_reports_unsent_total",
        "Trace reports not sent or passed on towards the router that started the trace (no route"
            + " to it, or the next hop's session down or full); that router names this one as"
            + " missing.");
  }

  /** Traces refused, by reason (see {@code io.bdrp.router.Traces}). */
  public Metrics.Counter tracesRefused(String reason) {
    return byLabel(
        "bdrp_traces_refused_total",
        "Traces refused, by reason: publish_permission (outside the user's publish permission),"
            + " host_rate (more than 10 a second from one host), pending_full (64 traces waiting"
            + " for reports), router_rate (trace copies from neighbours beyond 200 a second,"
            + " dropped), not_offered (a front end without tracing).",
        "reason",
        reason);
  }
}
