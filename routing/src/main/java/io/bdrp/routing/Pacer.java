package io.bdrp.routing;

/**
 * At most one send per interval, the first at once: what paces the distance vector's non-urgent
 * updates and each neighbour's queue of advertisements ({@link RoutingConfig#updatePacingMs()}).
 * Owned by the control thread.
 */
final class Pacer {
  private final long intervalMs;
  private long last = Long.MIN_VALUE;

  Pacer(long intervalMs) {
    this.intervalMs = intervalMs;
  }

  /** When the next send may go: at once if none went yet. */
  long next() {
    return last == Long.MIN_VALUE ? Long.MIN_VALUE : last + intervalMs;
  }

  /** Whether a send may go at {@code now}. */
  boolean due(long now) {
    return now >= next();
  }

  /** A send went at {@code now}. */
  void sent(long now) {
    last = now;
  }
}
