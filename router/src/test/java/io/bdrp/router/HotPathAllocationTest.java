package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * After warm-up, a message through router 0's data path allocates at most {@value #PER_MESSAGE}
 * bytes: a SEND from the bytes a session reads to the DELIVER frames written to its local hosts and
 * the DATA copies written to its links, and a DATA frame from a neighbour to its deliveries and
 * onward copies ({@link HotPathRig}, the router's real sessions, data plane and outputs). Messages
 * come {@value #PER_TURN} to a turn of the loop, as to a busy router: what a read and a batch of
 * output cost whatever their messages (Netty's read buffer, about 16 bytes a read) is shared by
 * them, as it is there.
 */
class HotPathAllocationTest {
  /** The bound: bytes a message may allocate, on average. */
  private static final long PER_MESSAGE = 16;

  /** Messages per turn of the loop: one read, one output batch per channel. */
  private static final int PER_TURN = 16;

  /** Turns measured, each run. */
  private static final int TURNS = 1_000;

  private ResourceLeakDetector.Level leakLevel;

  /**
   * Leak detection off while the path runs: the detector's records of each buffer (a stack trace at
   * paranoid level) are the test's allocations, not the router's.
   */
  @BeforeEach
  void leakDetectionOff() {
    leakLevel = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
  }

  @AfterEach
  void leakDetectionBack() {
    ResourceLeakDetector.setLevel(leakLevel);
  }

  private static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /**
   * Bytes {@code turns} calls of {@code path} allocate on this thread: the least of three runs, so
   * that what the JVM allocates on the thread now and then (compiling, reading the counter) is not
   * taken for the path's.
   */
  private static long allocated(LongSupplier path, int turns) {
    assertTrue(MX.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes");
    MX.setThreadAllocatedMemoryEnabled(true);
    long thread = Thread.currentThread().threadId();
    long least = Long.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      long a0 = MX.getThreadAllocatedBytes(thread);
      for (int i = 0; i < turns; i++) {
        path.getAsLong();
      }
      least = Math.min(least, MX.getThreadAllocatedBytes(thread) - a0);
    }
    return least;
  }

  /**
   * Runs {@link #measure} on a {@link FastThreadLocalThread}, as the router's loop is: Netty pools
   * its per-write objects (a channel's outbound entries) only on such threads.
   */
  private static void check(
      String what, HotPathRig rig, LongSupplier path, int deliveries, int copies) {
    Throwable[] failed = {null};
    Thread t =
        new FastThreadLocalThread(
            () -> {
              try {
                measure(what, rig, path, deliveries, copies);
              } catch (Throwable e) {
                failed[0] = e;
              }
            });
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    if (failed[0] instanceof Error e) {
      throw e;
    } else if (failed[0] != null) {
      throw new AssertionError(failed[0]);
    }
  }

  private static void measure(
      String what, HotPathRig rig, LongSupplier path, int deliveries, int copies) {
    for (int i = 0; i < 10_000; i++) {
      path.getAsLong(); // warm-up: JIT, pools, lazily grown scratch, the view's table
    }
    long delivered = rig.delivered();
    long copied = rig.copies();
    path.getAsLong();
    assertEquals(
        PER_TURN * deliveries, rig.delivered() - delivered, what + ": deliveries per turn");
    assertEquals(PER_TURN * copies, rig.copies() - copied, what + ": copies per turn");
    long bytes = allocated(path, TURNS);
    long messages = (long) PER_TURN * TURNS;
    assertTrue(
        bytes <= PER_MESSAGE * messages,
        what
            + ": "
            + messages
            + " messages allocated "
            + bytes
            + " bytes, "
            + (double) bytes / messages
            + " a message (allowed "
            + PER_MESSAGE
            + ")");
  }

  @Test
  void aPublishedMessageFannedOutAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 4, 20, 20)) {
      check("fan-out publish", rig, () -> rig.publish(PER_TURN), 20, 4);
    }
  }

  @Test
  void aSelectivelyMatchedMessageAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 1, 20, 2)) {
      check("selective publish", rig, () -> rig.publish(PER_TURN), 2, 1);
    }
  }

  @Test
  void aReceivedMessageDeliveredAndForwardedAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 4, 20, 20)) {
      check("received DATA", rig, () -> rig.receive(PER_TURN), 20, 3);
    }
  }
}
