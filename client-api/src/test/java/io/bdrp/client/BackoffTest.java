package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wait before dialling again: doubling from 100 ms to at most 5 s, reset by a session. */
class BackoffTest {
  @Test
  void theWaitDoublesFromTheFirstUpToTheCap() {
    Backoff b = new Backoff();
    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      waits.add(b.nextDelayMs());
    }
    assertEquals(List.of(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L, 5000L), waits);
  }

  @Test
  void anOpenedSessionStartsTheWaitsOver() {
    Backoff b = new Backoff();
    b.nextDelayMs();
    b.nextDelayMs();
    b.nextDelayMs();
    b.reset();
    assertEquals(Backoff.FIRST_MS, b.nextDelayMs());
    assertEquals(2 * Backoff.FIRST_MS, b.nextDelayMs());
  }
}
