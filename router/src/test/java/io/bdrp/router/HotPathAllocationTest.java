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
 * onward copies ({@link HotPathRig}, the router's real sessions, data plane and outputs).
 */
class HotPathAllocationTest {
  /** The bound: bytes a message may allocate, on average. */
  private static final long PER_MESSAGE = 16;

  private static final int MESSAGES = 10_000;

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
   * Bytes {@code messages} calls of {@code path} allocate on this thread: the least of three runs,
   * so that what the JVM allocates on the thread now and then (compiling, reading the counter) is
   * not taken for the path's.
   */
  private static long allocated(LongSupplier path, int messages) {
    assertTrue(MX.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes");
    MX.setThreadAllocatedMemoryEnabled(true);
    long thread = Thread.currentThread().threadId();
    long least = Long.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      long a0 = MX.getThreadAllocatedBytes(thread);
      for (int i = 0; i < messages; i++) {
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
    for (int i = 0; i < 20_000; i++) {
      path.getAsLong(); // warm-up: JIT, pools, lazily grown scratch
    }
    long delivered = rig.delivered();
    long copied = rig.copies();
    path.getAsLong();
    assertEquals(deliveries, rig.delivered() - delivered, what + ": deliveries per message");
    assertEquals(copies, rig.copies() - copied, what + ": copies per message");
    long bytes = allocated(path, MESSAGES);
    assertTrue(
        bytes <= PER_MESSAGE * MESSAGES,
        what
            + ": "
            + MESSAGES
            + " messages allocated "
            + bytes
            + " bytes, "
            + (double) bytes / MESSAGES
            + " a message (allowed "
            + PER_MESSAGE
            + ")");
  }

  @Test
  void aPublishedMessageFannedOutAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 4, 20, 20)) {
      check("fan-out publish", rig, rig::publish, 20, 4);
    }
  }

  @Test
  void aSelectivelyMatchedMessageAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 1, 20, 2)) {
      check("selective publish", rig, rig::publish, 2, 1);
    }
  }

  @Test
  void aReceivedMessageDeliveredAndForwardedAllocatesNothing() {
    try (HotPathRig rig = new HotPathRig(4, 4, 20, 20)) {
      check("received DATA", rig, rig::receive, 20, 3);
    }
  }
}
