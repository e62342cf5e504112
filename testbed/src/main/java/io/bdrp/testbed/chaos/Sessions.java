package io.bdrp.testbed.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * When each workload client's session with its router was up: the times it broke and was opened
 * again, as the client library reported them (nanoseconds from the campaign's origin). Every client
 * starts connected.
 */
public final class Sessions {
  private final List<List<long[]>> events = new ArrayList<>(); // {time, 1 = up, 0 = down}

  /** For {@code clients} clients, all connected. */
  public Sessions(int clients) {
    for (int i = 0; i < clients; i++) {
      events.add(new ArrayList<>());
    }
  }

  /** Client {@code c}'s session broke at {@code t}. */
  public synchronized void down(int c, long t) {
    events.get(c).add(new long[] {t, 0});
  }

  /** Client {@code c}'s session was opened again at {@code t}. */
  public synchronized void up(int c, long t) {
    events.get(c).add(new long[] {t, 1});
  }

  /** Whether client {@code c} had no session at time {@code t}. */
  public synchronized boolean detached(int c, long t) {
    boolean up = true;
    for (long[] e : events.get(c)) {
      if (e[0] > t) {
        break;
      }
      up = e[1] == 1;
    }
    return !up;
  }

  /** How many times client {@code c}'s session broke in [{@code from}, {@code to}). */
  public synchronized int breaks(int c, long from, long to) {
    int n = 0;
    for (long[] e : events.get(c)) {
      if (e[1] == 0 && e[0] >= from && e[0] < to) {
        n++;
      }
    }
    return n;
  }

  /**
   * When client {@code c}'s session was first opened again at or after {@code t}, or {@link
   * Long#MAX_VALUE} if it was not.
   */
  public synchronized long firstUpAfter(int c, long t) {
    for (long[] e : events.get(c)) {
      if (e[1] == 1 && e[0] >= t) {
        return e[0];
      }
    }
    return Long.MAX_VALUE;
  }
}
