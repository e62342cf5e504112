package io.bdrp.router.hosts;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.HostLimits;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.PredicateTable;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolException;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client session's SET_PREDICATE, from the frame to the reply: checked for rate on the loop,
 * prepared on the router's control thread (decoded, bounded by the user's permission and the
 * per-host filter cap, encoded, counted against the user's filters and worked into the router's
 * aggregate, {@link io.bdrp.routing.LocalAggregate}), then set on the loop (the host's exact
 * predicate and the aggregate to advertise) and answered, in the order the session sent them. A
 * host that leaves is taken out of the aggregate on the control thread too ({@link #leave}).
 *
 * <p>One per router, shared by its front ends: a bdrp client's SET_PREDICATE comes through {@link
 * #offload}, any other front end's change (an MQTT session's subscriptions) through {@link
 * #change}, and both take the same checks and the same aggregate.
 */
public final class PredicateChanges {
  private static final Logger log = LoggerFactory.getLogger(PredicateChanges.class);

  final RouterCore core;

  // On the control thread: the router's aggregate over its hosts' encodings, and the filters of
  // each named user's sessions together. Every change to either is made there, in the order the
  // loop handed them over, and the loop advertises the aggregate that comes back.
  private final io.bdrp.routing.LocalAggregate aggregate;
  private final Map<String, Long> userFilters = new HashMap<>();
  private final boolean signed; // routers sign their advertisements (a larger frame)
  private final Encoder encoder;

  private final Metrics.Counter refusedRate;
  private final Metrics.Counter refusedHostFilters;
  private final Metrics.Counter refusedUserFilters;
  private final Metrics.Counter refusedAggregate;
  private final Metrics.Counter refusedBusy;

  PredicateChanges(RouterCore core, boolean signed) {
    this.core = core;
    RouterMetrics metrics = core.metrics();
    this.refusedRate = metrics.requestsRefused("predicate_rate");
    this.refusedHostFilters = metrics.requestsRefused("host_filters");
    this.refusedUserFilters = metrics.requestsRefused("user_filters");
    this.refusedAggregate = metrics.requestsRefused("router_aggregate");
    this.refusedBusy = metrics.requestsRefused("control_busy");
    this.encoder = new Encoder(core.config().bloom());
    this.aggregate = new io.bdrp.routing.LocalAggregate(core.config().bloom());
    this.signed = signed;
  }

  /**
   * The handler that sits before a session's client frame decoder and takes its SET_PREDICATE
   * frames; {@code session} gives the session's host (null before its HELLO).
   */
  ChannelInboundHandlerAdapter offload(Supplier<? extends AttachedHost> session) {
    return new SetPredicateOffload(this, session);
  }

  /** Takes a host that is gone out of its user's count and the router's aggregate. */
  public void left(AttachedHost host) {
    try {
      core.control().execute(() -> leave(host));
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // The router is stopping: nothing is advertised any more.
    }
  }

  // ---- SET_PREDICATE, prepared off the loop ----
  //
  // A SET_PREDICATE costs in proportion to its predicate: decoding it, bounding it by the user's
  // permission, counting and encoding its filters, working them into the aggregate. That work runs
  // on the router's control thread, with the user's filter count, so that no predicate holds up
  // forwarding; the loop keeps the cheap checks (the rate, the bytes waiting for the control
  // thread) before, and after it the tables it owns (the host's exact predicate, PREDICATES) and
  // the reply.

  /** Most frames waiting for the control thread at once, and their bytes together. */
  static final int MAX_PREPARING = 256;

  long preparingBytes; // on the loop
  int preparing;

  /**
   * A SET_PREDICATE made ready on the control thread: the predicate, and the router's aggregate
   * with it when that changed (else null); or the error to send.
   */
  record Prepared(
      Predicate asked, Predicate allowed, EncodedPredicate aggregate, ProtocolException error) {}

  /**
   * The rate check, on the loop: a session may change its predicate {@link
   * HostLimits#predicateChangesPerSecond()} times a second (a token bucket).
   */
  void checkRate(AttachedHost host, long correlationId) {
    HostLimits l = core.config().limits().hosts();
    long now = System.nanoTime();
    double rate = l.predicateChangesPerSecond();
    host.changeTokens =
        Math.min(rate, host.changeTokens + (now - host.changeTokensAt) * rate / 1e9);
    host.changeTokensAt = now;
    if (host.changeTokens < 1) {
      throw refusal(
          refusedRate,
          ErrorCode.OVERLOADED,
          "more than "
              + l.predicateChangesPerSecond()
              + " predicate changes per second (limits.predicateChangesPerSecond); try again later",
          correlationId);
    }
    host.changeTokens -= 1;
  }

  /**
   * On the control thread: bounds {@code asked} by the host's permission and {@link
   * HostLimits#maxFiltersPerHost()}, encodes it and works it into the router's aggregate ({@link
   * #take}).
   */
  Prepared prepare(AttachedHost host, Predicate asked, long correlationId) {
    try {
      Predicate allowed;
      try {
        allowed = host.permissions.restrict(asked);
      } catch (IllegalArgumentException e) {
        throw new ProtocolException(
            ErrorCode.BAD_PREDICATE,
            "the predicate within user "
                + host.permissions.user()
                + "'s subscribe permission is too large: "
                + e.getMessage(),
            correlationId,
            0);
      }
      int max = core.config().limits().hosts().maxFiltersPerHost();
      long filters = encoder.filterCount(allowed, max);
      if (filters > max) {
        throw refusal(
            refusedHostFilters,
            ErrorCode.BAD_PREDICATE,
            "the predicate encodes to more than "
                + max
                + " Bloom filters (limits.maxFiltersPerHost); an exists without a type counts one"
                + " per type",
            correlationId);
      }
      EncodedPredicate encoded = allowed.equals(Predicate.NONE) ? null : encoder.encode(allowed);
      return new Prepared(asked, allowed, take(host, filters, encoded, correlationId), null);
    } catch (ProtocolException e) {
      return new Prepared(asked, null, null, e);
    } catch (RuntimeException e) {
      log.warn("router {}: preparing a predicate failed", core.config().router(), e);
      return new Prepared(
          asked, null, null, new ProtocolException(ErrorCode.INTERNAL, "internal error"));
    }
  }

  /**
   * On the control thread: the host's filters and encoding taken into its user's count and the
   * router's aggregate, unless the user's sessions would then hold more than {@link
   * HostLimits#maxFiltersPerUser()} filters, or the aggregate would break a bound of the routing
   * module (its filters or bytes, or one advertisement frame): then the host keeps the predicate it
   * had, and the refusal is thrown. Returns the new aggregate, or null if it did not change.
   */
  private EncodedPredicate take(
      AttachedHost host, long filters, EncodedPredicate encoded, long cid) {
    HostLimits l = core.config().limits().hosts();
    long userHeld = host.user == null ? 0 : userFilters.getOrDefault(host.user, 0L);
    if (host.user != null && userHeld - host.filters + filters > l.maxFiltersPerUser()) {
      throw refusal(
          refusedUserFilters,
          ErrorCode.BAD_PREDICATE,
          "user "
              + host.user
              + "'s sessions would hold "
              + (userHeld - host.filters + filters)
              + " Bloom filters, more than limits.maxFiltersPerUser ("
              + l.maxFiltersPerUser()
              + ")",
          cid);
    }
    EncodedPredicate previous = aggregate.encoding(host.id);
    EncodedPredicate next = null;
    if (aggregate.set(host.id, encoded)) {
      next = aggregate.aggregate();
      PredicateTable.Refusal r =
          encoded == null
              ? null // a removal goes whatever it exposes: the advertised aggregate then stays
              : PredicateTable.aggregateRefusal(
                  core.config().router(), core.config().routing(), signed, next);
      if (r != null) {
        aggregate.set(host.id, previous);
        throw refusal(
            refusedAggregate,
            ErrorCode.BAD_PREDICATE,
            "this router's aggregate predicate, which every router holds, would break a bound: "
                + r.message(),
            cid);
      }
    }
    if (host.user != null) {
      userFilters.put(host.user, userHeld - host.filters + filters);
    }
    host.filters = filters;
    return next;
  }

  /**
   * On the control thread: a host that is gone leaves its user's count and the router's aggregate;
   * the loop advertises the aggregate without it.
   */
  void leave(AttachedHost host) {
    if (host.user != null) {
      long left = userFilters.getOrDefault(host.user, 0L) - host.filters;
      if (left <= 0) {
        userFilters.remove(host.user);
      } else {
        userFilters.put(host.user, left);
      }
    }
    host.filters = 0;
    if (aggregate.remove(host.id)) {
      EncodedPredicate a = aggregate.aggregate();
      try {
        core.loop()
            .execute(
                () -> {
                  core.node().setAggregate(a);
                  core.rearm();
                });
      } catch (java.util.concurrent.RejectedExecutionException stopped) {
        // The router has stopped: nothing is advertised any more.
      }
    }
  }

  /**
   * On the loop: sets a prepared predicate: the host is matched with it at once, and the router
   * advertises the aggregate made with it.
   */
  void set(AttachedHost host, Prepared p) {
    core.node().setHostMatch(host.id, p.allowed);
    if (p.aggregate != null) {
      core.node().setAggregate(p.aggregate); // within the bounds: checked where it was made
    }
    if (!host.own()) {
      core.metrics().predicateChanges.inc();
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "router {}: client {} ({}) set its predicate to {}{}",
          core.config().router(),
          host.id,
          host.name,
          p.allowed,
          p.allowed.equals(p.asked) ? "" : " (" + p.asked + " within its permission)");
    }
    core.rearm();
  }

  /**
   * A front end's predicate change, on the loop: {@code host}'s predicate becomes what {@code
   * asked} makes on the control thread (within the host's permission; an IllegalArgumentException
   * from it is a refusal, {@code BAD_PREDICATE}), through the same checks as a SET_PREDICATE — the
   * rate, the filters of the host and its user, the router's aggregate. {@code done} runs on the
   * loop with null once the predicate is set, or with the refusal (the host then keeps the
   * predicate it had); it does not run if {@code attached} is false by then (the host left) or the
   * router stops.
   */
  public void change(
      AttachedHost host,
      Supplier<Predicate> asked,
      java.util.function.BooleanSupplier attached,
      java.util.function.Consumer<ProtocolException> done) {
    try {
      checkRate(host, 0);
      checkBusy(0, 0);
    } catch (ProtocolException e) {
      done.accept(e);
      return;
    }
    preparing++;
    try {
      core.control()
          .execute(
              () -> {
                Prepared p;
                try {
                  p = prepare(host, asked.get(), 0);
                } catch (IllegalArgumentException e) {
                  p = new Prepared(null, null, null, refusal(ErrorCode.BAD_PREDICATE, e));
                }
                Prepared prepared = p;
                try {
                  core.loop()
                      .execute(
                          () -> {
                            preparing--;
                            if (attached.getAsBoolean()) {
                              if (prepared.error == null) {
                                set(host, prepared);
                              }
                              done.accept(prepared.error);
                            }
                          });
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                  // The router has stopped: no one is left to answer.
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      preparing--; // the router is closing
    }
  }

  private static ProtocolException refusal(ErrorCode code, RuntimeException e) {
    return new ProtocolException(code, e.getMessage(), 0, 0);
  }

  /** Refuses a change while the control thread has too much to prepare. */
  void checkBusy(int bytes, long cid) {
    long maxBytes = Math.max(16L << 20, 2L * core.config().limits().maxFrameBytes());
    if (preparing >= MAX_PREPARING || preparingBytes + bytes > maxBytes) {
      throw refusal(
          refusedBusy,
          ErrorCode.OVERLOADED,
          "the router's control thread has "
              + preparing
              + " predicates to prepare; try again later",
          cid);
    }
  }

  private ProtocolException refusal(
      Metrics.Counter counted, ErrorCode code, String message, long correlationId) {
    counted.inc();
    return new ProtocolException(code, message, correlationId, 0);
  }
}
