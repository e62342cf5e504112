package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class BroadcastWindowTest {
  private static BroadcastWindow window() {
    return new BroadcastWindow(8, 0x1234_5678_9ABC_DEF0L, 0x0FED_CBA9_8765_4321L);
  }

  @Test
  void anIdIsTakenOncePerSourceInAnyOrder() {
    BroadcastWindow w = window();
    assertTrue(w.first(3, 100));
    assertTrue(w.first(3, 105));
    assertTrue(w.first(3, 101), "late but new");
    assertFalse(w.first(3, 100));
    assertFalse(w.first(3, 105));
    assertFalse(w.first(3, 101));
    assertTrue(w.first(4, 100), "another source's ids are its own");
    assertTrue(w.first(3, 104));
    assertTrue(w.first(9, 100), "a source beyond maxRouters is not remembered");
    assertTrue(w.first(9, 100));
  }

  /**
   * An id far from a source's others (as a forger would send to slide a window of ids along) makes
   * the window forget nothing. Guards against the old window per source, which started again at
   * such an id and so let every genuine broadcast it remembered through a second time.
   */
  @Test
  void anIdFarFromTheOthersEvictsNothing() {
    BroadcastWindow w = window();
    for (long id = 100; id < 200; id++) {
      assertTrue(w.first(3, id));
    }
    assertTrue(w.first(3, 1L << 40));
    assertTrue(w.first(3, -5));
    assertTrue(w.first(3, Long.MAX_VALUE));
    for (long id = 100; id < 200; id++) {
      assertFalse(w.first(3, id), "still remembered: " + id);
    }
  }

  /**
   * Ids that a forger guesses from a source's past ids (every stride up to 4096 above and below the
   * last one seen, and the bits flipped one by one) and sends first do not make the window take the
   * source's next genuine ids for duplicates. Guards against ids that grow by one per message and a
   * window that marks an id ahead of its arrival.
   */
  @Test
  void forgedIdsGuessedFromPastOnesDoNotSuppressTheNextGenuineOnes() {
    BroadcastWindow w = window();
    MessageIds source = MessageIds.seeded(42, 3, 0);
    long last = 0;
    for (int i = 0; i < 100; i++) {
      last = source.next();
      assertTrue(w.first(3, last));
    }
    for (long k = 1; k <= 4096; k++) {
      w.first(3, last + k);
      w.first(3, last - k);
    }
    for (int bit = 0; bit < 64; bit++) {
      w.first(3, last ^ (1L << bit));
    }
    for (int i = 0; i < 1_000; i++) {
      long id = source.next();
      assertTrue(w.first(3, id), "genuine id " + i + " after the forged ones");
    }
  }

  /**
   * Memory is bounded: the table grows from INITIAL to MAX entries and no further, and still
   * recognises the broadcasts taken most recently.
   */
  @Test
  void theTableGrowsToItsBoundAndRemembersTheLatest() {
    BroadcastWindow w = window();
    assertEquals(0, w.capacity(), "nothing until the first broadcast");
    w.first(1, 1);
    assertEquals(BroadcastWindow.INITIAL, w.capacity());
    MessageIds ids = MessageIds.seeded(5, 1, 0);
    long[] recent = new long[1_000];
    for (int i = 0; i < 4 * BroadcastWindow.MAX; i++) {
      long id = ids.next();
      w.first(i & 7, id);
      recent[i % recent.length] = id;
    }
    assertEquals(BroadcastWindow.MAX, w.capacity());
    for (int i = 0; i < recent.length; i++) {
      int source = (4 * BroadcastWindow.MAX - recent.length + i) & 7;
      assertFalse(w.first(source, recent[(4 * BroadcastWindow.MAX + i) % recent.length]));
    }
  }

  /** Once the table has reached its bound, taking a broadcast allocates nothing. */
  @Test
  void takingABroadcastAllocatesNothing() {
    BroadcastWindow w = window();
    MessageIds ids = MessageIds.seeded(6, 2, 0);
    for (int i = 0; i < 4 * BroadcastWindow.MAX; i++) {
      w.first(i & 7, ids.next());
    }
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assertTrue(mx.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes");
    mx.setThreadAllocatedMemoryEnabled(true);
    long thread = Thread.currentThread().threadId();
    long a0 = mx.getThreadAllocatedBytes(thread);
    int taken = 0;
    for (int i = 0; i < 100_000; i++) {
      taken += w.first(i & 7, ids.next()) ? 1 : 0;
    }
    long a1 = mx.getThreadAllocatedBytes(thread);
    assertEquals(100_000, taken);
    // One object per call would be 1,600,000 bytes or more; the JVM may allocate a few hundred
    // once (reading the counter, compiling).
    assertTrue(a1 - a0 < 4_096, (a1 - a0) + " bytes allocated over 100,000 broadcasts");
  }
}
