package io.bdrp.router.metrics;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Measures how late the router's event loop runs: a task asks to run {@link #PERIOD_MS} from now,
 * and records by how much it missed that time ({@code bdrp_event_loop_lag_seconds}). Whatever holds
 * the loop (a costly control message, a predicate, a slow write) delays every session's next frame
 * by as much, so this is the figure that shows no input stalls forwarding.
 *
 * <p>Owned by the router's event loop; {@link #start} and {@link #stop} may be called from any
 * thread.
 */
public final class LoopLag {
  /** How often the loop is sampled. */
  static final long PERIOD_MS = 50;

  private final EventLoop loop;
  private final Metrics.Histogram lag;
  private final LongSupplier nanoTime;
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> next;
  private long due;

  public LoopLag(EventLoop loop, Metrics.Histogram lag, LongSupplier nanoTime) {
    this.loop = loop;
    this.lag = lag;
    this.nanoTime = nanoTime;
  }

  public void start() {
    loop.execute(this::arm);
  }

  public void stop() {
    stopped = true;
    ScheduledFuture<?> f = next;
    if (f != null) {
      f.cancel(false);
    }
  }

  private void arm() {
    if (stopped) {
      return;
    }
    due = nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(PERIOD_MS);
    next = loop.schedule(this::sample, PERIOD_MS, TimeUnit.MILLISECONDS);
  }

  private void sample() {
    long late = Math.max(0, nanoTime.getAsLong() - due);
    lag.observeNanos(late);
    arm();
  }
}
