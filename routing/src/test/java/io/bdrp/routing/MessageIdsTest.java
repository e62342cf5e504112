package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Message ids: unique per generator, unpredictable from the ids seen before. */
class MessageIdsTest {
  private static final int N = 20_000;

  /**
   * Consecutive ids of a router show no structure a neighbour could extrapolate: differences
   * between consecutive ids are (all but) all distinct, about half the bits change from one id to
   * the next, and no bit is constant (the router's number and the counter's high bits do not show).
   * Guards against ids of the form {@code router << 48 | epoch * 64 + n}, whose next id is the last
   * plus one.
   */
  @Test
  void theNextIdsCannotBeDerivedFromThePreviousOnes() {
    MessageIds ids = MessageIds.secure(7, 1_700_000_000_000L << 6);
    long[] seen = new long[N];
    for (int i = 0; i < N; i++) {
      seen[i] = ids.next();
    }
    Set<Long> strides = new HashSet<>();
    long flipped = 0;
    long and = -1;
    long or = 0;
    for (int i = 1; i < N; i++) {
      strides.add(seen[i] - seen[i - 1]);
      flipped += Long.bitCount(seen[i] ^ seen[i - 1]);
      and &= seen[i];
      or |= seen[i];
    }
    assertTrue(strides.size() > N - 10, strides.size() + " distinct strides in " + (N - 1));
    double meanFlipped = (double) flipped / (N - 1);
    assertTrue(meanFlipped > 31 && meanFlipped < 33, "mean bits changed " + meanFlipped);
    assertEquals(0, and, "a bit set in every id");
    assertEquals(-1, or, "a bit clear in every id");
  }

  /**
   * Two processes of the same router, started with the same counter, give unrelated ids: the key is
   * drawn per process. Guards against ids that any router could compute from the number and epoch
   * of another.
   */
  @Test
  void eachProcessDrawsItsOwnKey() {
    MessageIds a = MessageIds.secure(7, 64);
    MessageIds b = MessageIds.secure(7, 64);
    int equal = 0;
    for (int i = 0; i < 1_000; i++) {
      equal += a.next() == b.next() ? 1 : 0;
    }
    assertEquals(0, equal);
  }

  /** Ids of one generator, and of generators sharing a key, never repeat. */
  @Test
  void idsAreUniqueAndThePermutationInverts() {
    Set<Long> all = new HashSet<>();
    for (int router = 0; router < 4; router++) {
      MessageIds ids = MessageIds.seeded(3, router, 0);
      for (int i = 0; i < N; i++) {
        assertTrue(all.add(ids.next()));
      }
    }
    long k0 = 0x0123_4567_89AB_CDEFL;
    long k1 = 0x7766_5544_3322_1100L;
    for (long x : new long[] {0, 1, -1, Long.MIN_VALUE, 5L << 48 | 12345}) {
      assertEquals(x, MessageIds.unpermute(k0, k1, MessageIds.permute(k0, k1, x)));
    }
    assertNotEquals(
        MessageIds.seeded(1, 0, 0).next(), MessageIds.seeded(2, 0, 0).next(), "seeds differ");
    assertEquals(MessageIds.seeded(1, 0, 0).next(), MessageIds.seeded(1, 0, 0).next(), "repeats");
  }

  /** Drawing an id allocates nothing. */
  @Test
  void nextAllocatesNothing() {
    MessageIds ids = MessageIds.secure(1, 0);
    long sink = 0;
    for (int i = 0; i < 50_000; i++) {
      sink += ids.next();
    }
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assertTrue(mx.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes");
    mx.setThreadAllocatedMemoryEnabled(true);
    long thread = Thread.currentThread().threadId();
    long a0 = mx.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100_000; i++) {
      sink += ids.next();
    }
    long a1 = mx.getThreadAllocatedBytes(thread);
    assertTrue(a1 - a0 < 4_096, (a1 - a0) + " bytes allocated over 100,000 ids (" + sink + ")");
  }
}
