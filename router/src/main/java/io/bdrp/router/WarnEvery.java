package io.bdrp.router;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A WARN line for one kind of event at most every ten seconds, so that whoever causes the events (a
 * neighbour, a client) cannot flood the log: the events in between are counted into the next line.
 * Not thread-safe: one owner, or its lock.
 */
public final class WarnEvery {
  private static final long EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final LongSupplier nanos;
  private boolean logged;
  private long loggedNanos;
  private long skipped;

  public WarnEvery() {
    this(System::nanoTime);
  }

  /** With {@code nanos} for the clock (tests). */
  WarnEvery(LongSupplier nanos) {
    this.nanos = nanos;
  }

  /**
   * For each event: -1 if no line is due now (the event is counted for the next one), else the
   * events since the last line that were not logged.
   */
  public long due() {
    long now = nanos.getAsLong();
    if (logged && now - loggedNanos < EVERY_NANOS) {
      skipped++;
      return -1;
    }
    logged = true;
    loggedNanos = now;
    long s = skipped;
    skipped = 0;
    return s;
  }
}
