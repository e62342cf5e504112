package io.bdrp.router;

import io.bdrp.routing.RoutingNode;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The one timer of the routing state: armed for its next deadline (a paced advertisement, a route's
 * hold-down, a silent neighbour) after anything that may move it, and re-armed after each tick. An
 * earlier deadline replaces a later one; a later one leaves the armed timer alone.
 *
 * <p>Owned by the router's event loop.
 */
final class RoutingTimer {
  private final EventLoop loop;
  private final LongSupplier deadlines;
  private final Runnable tick;
  private final Runnable beforeArming;
  private final BooleanSupplier stopping;
  private ScheduledFuture<?> timer;
  private long timerAt = Long.MAX_VALUE;

  /**
   * @param beforeArming runs first at each re-arm: the routing state may have changed (the kernel
   *     fast path's tables follow it)
   */
  RoutingTimer(EventLoop loop, RoutingNode node, Runnable beforeArming, BooleanSupplier stopping) {
    this(loop, node::nextDeadlineMillis, node::tick, beforeArming, stopping);
  }

  /**
   * A timer for any state machine of the loop with a next deadline ({@code deadlines}, on the
   * monotonic clock in milliseconds, {@code Long.MAX_VALUE} for none) and a {@code tick}.
   */
  RoutingTimer(
      EventLoop loop,
      LongSupplier deadlines,
      Runnable tick,
      Runnable beforeArming,
      BooleanSupplier stopping) {
    this.loop = loop;
    this.deadlines = deadlines;
    this.tick = tick;
    this.beforeArming = beforeArming;
    this.stopping = stopping;
  }

  /** Arms the timer for the routing state's next deadline (after anything that may move it). */
  void rearm() {
    beforeArming.run();
    long deadline = deadlines.getAsLong();
    if (deadline == Long.MAX_VALUE || stopping.getAsBoolean()) {
      return;
    }
    if (timer != null && deadline >= timerAt && !timer.isDone()) {
      return;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    long now = TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    timerAt = deadline;
    timer =
        loop.schedule(
            () -> {
              timerAt = Long.MAX_VALUE;
              tick.run();
              rearm();
            },
            Math.max(0, deadline - now),
            TimeUnit.MILLISECONDS);
  }
}
