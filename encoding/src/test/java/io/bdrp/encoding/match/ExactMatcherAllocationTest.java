package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.Value;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/**
 * After warm-up, {@link ExactMatcher#match(io.bdrp.encoding.Attributes, IntConsumer)} allocates
 * nothing.
 */
class ExactMatcherAllocationTest {
  /** Bytes a measured loop may allocate once, whatever its length: less than 16 per call. */
  private static final long ONE_OFF = 4_096;

  /** A sink that only counts, so that the measured loop itself allocates nothing. */
  private static final class CountingSink implements IntConsumer {
    long calls;

    @Override
    public void accept(int host) {
      calls++;
    }
  }

  @Test
  void matchAllocatesNothingAfterWarmUp() {
    RandomModel r = new RandomModel(20_260_501L);
    ExactMatcher matcher = new ExactMatcher();
    List<Predicate> predicates = new ArrayList<>();
    for (int host = 0; host < 300; host++) {
      Predicate p = r.predicate(4, 4);
      predicates.add(p);
      matcher.put(host, p);
    }
    // Long strings through every string index, including the contains automaton.
    String longValue = "ab".repeat(500) + "\uD83D\uDE00" + "Italy".repeat(100);
    matcher.put(1000, Predicate.ofConstraints(Constraint.of("s", Op.CONTAINS, Value.of("aba"))));
    matcher.put(1001, Predicate.ofConstraints(Constraint.of("s", Op.PREFIX, Value.of("abab"))));
    matcher.put(1002, Predicate.ofConstraints(Constraint.of("s", Op.SUFFIX, Value.of("taly"))));
    matcher.put(1003, Predicate.ofConstraints(Constraint.of("s", Op.LT, Value.of("b"))));
    matcher.put(1004, Predicate.ofConstraints(Constraint.of("s", Op.EQ, Value.of(longValue))));

    Message[] messages = new Message[256];
    for (int i = 0; i < messages.length; i++) {
      messages[i] = i % 2 == 0 ? r.message() : r.messageNear(predicates.get(i % predicates.size()));
    }
    messages[0] = Message.builder().put("s", longValue).put("a", 1).build();

    CountingSink sink = new CountingSink();
    for (int i = 0; i < 50_000; i++) {
      matcher.match(messages[i % messages.length], sink); // warm-up: lazy rebuilds, JIT
    }

    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assertTrue(mx.isThreadAllocatedMemorySupported(), "this JVM cannot count allocated bytes");
    mx.setThreadAllocatedMemoryEnabled(true);
    long thread = Thread.currentThread().threadId();

    // The claim is that a call allocates nothing, so bytes must not grow with the number of
    // calls: one object per call would be at least 160,000 bytes over 10,000 calls. A fixed few
    // hundred bytes can come from the JVM itself while the loop runs (reading the counter,
    // compiling or re-compiling code and running it interpreted meanwhile); that is allowed,
    // once per loop, up to ONE_OFF bytes.
    long a0 = mx.getThreadAllocatedBytes(thread);
    long callsBefore = sink.calls;
    for (int i = 0; i < 10_000; i++) {
      matcher.match(messages[i % messages.length], sink);
    }
    long a1 = mx.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100_000; i++) {
      matcher.match(messages[i % messages.length], sink);
    }
    long a2 = mx.getThreadAllocatedBytes(thread);

    assertTrue(sink.calls > callsBefore, "the measured calls matched some hosts");
    assertTrue(
        a1 - a0 <= ONE_OFF,
        "10,000 calls allocated " + (a1 - a0) + " bytes (allowed " + ONE_OFF + ")");
    assertTrue(
        a2 - a1 <= ONE_OFF,
        "100,000 calls allocated " + (a2 - a1) + " bytes (allowed " + ONE_OFF + ")");
  }
}
