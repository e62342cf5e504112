package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A line at most every ten seconds, the events in between counted into the next one. */
class WarnEveryTest {
  private long now = -5; // any value, negative included

  @Test
  void theFirstEventIsLoggedAndTheOthersWithinTenSecondsAreCountedIntoTheNextLine() {
    WarnEvery every = new WarnEvery(() -> now);
    assertEquals(0, every.due(), "the first event: a line, none skipped");
    now += TimeUnit.SECONDS.toNanos(9);
    assertEquals(-1, every.due());
    assertEquals(-1, every.due());
    now += TimeUnit.SECONDS.toNanos(1);
    assertEquals(2, every.due(), "ten seconds on: a line naming the two skipped");
    assertEquals(-1, every.due());
    now += TimeUnit.SECONDS.toNanos(30);
    assertEquals(1, every.due());
    assertEquals(-1, every.due());
  }
}
