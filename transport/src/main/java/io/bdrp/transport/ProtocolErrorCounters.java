package io.bdrp.transport;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts protocol errors by {@link ErrorCode}. Shared by every session of a router (or every
 * connection of a client): thread-safe, and an increment on an event loop never blocks.
 */
public final class ProtocolErrorCounters {
  private final EnumMap<ErrorCode, LongAdder> counts = new EnumMap<>(ErrorCode.class);
  private final LongAdder connectionsLost = new LongAdder();

  /** Counters at zero. */
  public ProtocolErrorCounters() {
    for (ErrorCode c : ErrorCode.values()) {
      counts.put(c, new LongAdder());
    }
  }

  /** Counts one error. */
  public void increment(ErrorCode code) {
    counts.get(code).increment();
  }

  /** Counts a connection that failed under its session (reset by the peer, broken pipe). */
  public void connectionLost() {
    connectionsLost.increment();
  }

  /** Connections that failed under their session so far; not protocol errors. */
  public long connectionsLost() {
    return connectionsLost.sum();
  }

  /** Errors counted with this code so far. */
  public long count(ErrorCode code) {
    return counts.get(code).sum();
  }

  /** Errors counted so far, all codes. */
  public long total() {
    long n = 0;
    for (LongAdder a : counts.values()) {
      n += a.sum();
    }
    return n;
  }

  /** A snapshot of the non-zero counts. */
  public Map<ErrorCode, Long> snapshot() {
    EnumMap<ErrorCode, Long> out = new EnumMap<>(ErrorCode.class);
    counts.forEach(
        (c, a) -> {
          long n = a.sum();
          if (n != 0) {
            out.put(c, n);
          }
        });
    return out;
  }
}
