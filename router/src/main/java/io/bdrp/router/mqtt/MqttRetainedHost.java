package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.mqtt.MqttRetained;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.routing.ForwardingTable;
import io.bdrp.routing.PredicateTable;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's store of retained messages as a host of the router: its predicate, {@code
 * mqtt.store.retained = true || mqtt.store.for = <this router>}, is in the router's aggregate like
 * any host's, so every retained message published anywhere reaches this router through ordinary
 * routing (D), and so does a retained message another router hands over to this one alone. What
 * arrives goes to the {@link MqttRetainedStore}.
 *
 * <p><b>Hand-over.</b> A router that starts, or comes back after a partition, holds none of the
 * retained messages published meanwhile. Once a second this router looks at the routers it can
 * reach: one it could not reach at the last look, or whose epoch changed (it restarted), and whose
 * predicate shows a store of retained messages, is handed this router's messages and deletions
 * (those that entered the federation here, and those whose origin this router cannot reach), each
 * wrapped for that router alone ({@link MqttRetained#wrap}), {@link #HAND_OVER_BATCH} every {@link
 * #HAND_OVER_PAUSE_MS} ms so that a large store does not fill the links at once.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttRetainedHost extends AttachedHost {
  private static final Logger log = LoggerFactory.getLogger(MqttRetainedHost.class);

  /** How often the reachable routers are looked at, in milliseconds. */
  static final long LOOK_MS = 1000;

  /** Retained messages handed over per batch. */
  static final int HAND_OVER_BATCH = 256;

  /** The pause between batches, in milliseconds. */
  static final long HAND_OVER_PAUSE_MS = 20;

  private final MqttListener listener;
  private final int self;
  final MqttRetainedStore store;
  private final Metrics.Counter stored;
  private final Metrics.Counter deleted;
  private final Metrics.Counter stale;
  private final Metrics.Counter full;
  private final Metrics.Counter invalid;
  private final Metrics.Counter handedOver;
  private final Metrics.Counter handOverTooLarge;

  /** The epoch of each router at its last hand-over, 0 if none since it was last unreachable. */
  private long[] handedEpoch = new long[0];

  /** The routers waiting for a hand-over, and what is left of the current one. */
  private final ArrayDeque<Integer> waiting = new ArrayDeque<>();

  private List<Message> current;
  private int currentTarget;
  private int currentAt;
  private ScheduledFuture<?> looking;
  private ScheduledFuture<?> handing;
  private final Encoder encoder;

  MqttRetainedHost(MqttListener listener) {
    super(listener.hosts.number(), "retained-store", ClientAuth.Permissions.ALL, 1);
    this.listener = listener;
    this.self = listener.core.config().router();
    this.store = new MqttRetainedStore(self, listener.core.config().epoch());
    Metrics registry = listener.core.metrics().registry();
    String help =
        "Retained messages that reached this router's store, by result: stored, deleted (an empty"
            + " payload), stale (not newer than the topic's), full (beyond the store's bounds),"
            + " invalid.";
    this.stored = registry.counter("bdrp_mqtt_retained_total", help, "result", "stored");
    this.deleted = registry.counter("bdrp_mqtt_retained_total", help, "result", "deleted");
    this.stale = registry.counter("bdrp_mqtt_retained_total", help, "result", "stale");
    this.full = registry.counter("bdrp_mqtt_retained_total", help, "result", "full");
    this.invalid = registry.counter("bdrp_mqtt_retained_total", help, "result", "invalid");
    String handHelp =
        "Retained messages and deletions this router handed over to a router that started or came"
            + " back, by result: sent, too_large (wrapped, larger than a message body).";
    this.handedOver =
        registry.counter("bdrp_mqtt_retained_handed_over_total", handHelp, "result", "sent");
    this.handOverTooLarge =
        registry.counter("bdrp_mqtt_retained_handed_over_total", handHelp, "result", "too_large");
    registry.gauge(
        "bdrp_mqtt_retained_messages",
        "Retained messages held in this router's store.",
        () -> store.messages());
    registry.gauge(
        "bdrp_mqtt_retained_bytes",
        "Bytes of the encoded retained messages held in this router's store.",
        () -> store.bytes());
    this.encoder = new Encoder(listener.core.config().bloom());
  }

  private static Message probeFor(int router) {
    return Message.builder().put(MqttRetained.FOR, (long) router).build();
  }

  /**
   * Attaches the store as a host with its predicate, and starts looking for hand-overs. The future
   * completes on the loop once the predicate is set (or refused): from then on a retained message
   * published at this router reaches its store.
   */
  CompletableFuture<Void> start() {
    CompletableFuture<Void> set = new CompletableFuture<>();
    listener.hosts.put(id, this);
    Predicate p =
        Predicate.parse(MqttRetained.RETAINED + " = true || " + MqttRetained.FOR + " = " + self);
    listener.predicates.change(
        this,
        () -> p,
        () -> true,
        refused -> {
          if (refused != null) {
            log.warn(
                "router {}: the store of retained messages could not set its predicate ({}):"
                    + " retained messages published at other routers will not reach it",
                self,
                refused.getMessage());
          }
          set.complete(null);
        });
    looking =
        listener
            .core
            .loop()
            .scheduleAtFixedRate(this::look, LOOK_MS, LOOK_MS, TimeUnit.MILLISECONDS);
    return set;
  }

  /** Stops looking and handing over. */
  void stop() {
    if (looking != null) {
      looking.cancel(false);
    }
    if (handing != null) {
      handing.cancel(false);
    }
  }

  @Override
  public boolean deliver(long messageId, MessageBytes bytes) {
    Message m;
    try {
      m = listener.deliveries.decode(messageId, bytes);
    } catch (CodecException e) {
      invalid.inc();
      return true;
    }
    Message retained = MqttRetained.isRetained(m) ? m : MqttRetained.unwrap(m, self);
    if (retained == null) {
      if (m.indexOf(MqttRetained.FOR) < 0) {
        invalid.inc();
      }
      return true; // wrapped for another router: a false positive of its encoding
    }
    switch (store.offer(retained, System.currentTimeMillis())) {
      case STORED -> stored.inc();
      case DELETED -> deleted.inc();
      case STALE -> stale.inc();
      case FULL -> full.inc();
      case INVALID -> invalid.inc();
    }
    return true;
  }

  /** Once a second: which routers need a hand-over. */
  private void look() {
    store.purge(System.currentTimeMillis());
    ForwardingTable routes = listener.core.node().routes();
    PredicateTable predicates = listener.core.node().predicates();
    int max = listener.core.config().routing().maxRouters();
    if (handedEpoch.length < max) {
      handedEpoch = Arrays.copyOf(handedEpoch, max);
    }
    for (int r = 0; r < max; r++) {
      if (r == self) {
        continue;
      }
      if (routes.nextHop(r) < 0) {
        handedEpoch[r] = 0;
        continue;
      }
      long epoch = predicates.epoch(r);
      if (epoch <= 0 || epoch == handedEpoch[r]) {
        continue;
      }
      EncodedPredicate p = predicates.get(r);
      if (p != null && p.matches(encoder.encode(probeFor(r)))) {
        handedEpoch[r] = epoch;
        waiting.remove(r);
        waiting.add(r);
      }
    }
    if (current == null && !waiting.isEmpty()) {
      handOver();
    }
  }

  /** Sends the next batch of the current hand-over, or starts the next one. */
  private void handOver() {
    handing = null;
    if (current == null) {
      Integer next = waiting.poll();
      if (next == null) {
        return;
      }
      ForwardingTable routes = listener.core.node().routes();
      currentTarget = next;
      current = store.toHandOver(r -> routes.nextHop(r) >= 0);
      currentAt = 0;
      if (!current.isEmpty()) {
        log.info(
            "router {}: handing {} retained messages and deletions over to router {}",
            self,
            current.size(),
            currentTarget);
      }
    }
    int end = Math.min(current.size(), currentAt + HAND_OVER_BATCH);
    for (; currentAt < end; currentAt++) {
      Message wrapped;
      try {
        wrapped = MqttRetained.wrap(current.get(currentAt), currentTarget);
      } catch (IllegalArgumentException e) {
        handOverTooLarge.inc();
        continue;
      }
      if (MqttInbound.toDataPlane(listener, wrapped)) {
        handedOver.inc();
      } else {
        handOverTooLarge.inc();
      }
    }
    if (currentAt >= current.size()) {
      current = null;
    }
    if (current != null || !waiting.isEmpty()) {
      handing =
          listener.core.loop().schedule(this::handOver, HAND_OVER_PAUSE_MS, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public boolean own() {
    return true;
  }

  @Override
  public String toString() {
    return "the store of retained messages (host " + id + ")";
  }
}
