package io.bdrp.client;

/**
 * How long the client waits before dialling again after a session breaks: {@value #FIRST_MS} ms
 * after the first break, doubling with every attempt that fails, never more than {@value #MAX_MS}
 * ms; back to the start once a session opens. Not thread-safe: owned by the client's I/O thread (a
 * first session that fails is not retried, so only breaks after a session come here).
 */
final class Backoff {
  static final long FIRST_MS = 100;
  static final long MAX_MS = 5_000;

  private long lastMs;

  /** The wait before the next attempt; each call without a {@link #reset()} waits longer. */
  long nextDelayMs() {
    lastMs = Math.min(MAX_MS, lastMs == 0 ? FIRST_MS : lastMs * 2);
    return lastMs;
  }

  /** A session opened: the next break waits {@value #FIRST_MS} ms again. */
  void reset() {
    lastMs = 0;
  }
}
