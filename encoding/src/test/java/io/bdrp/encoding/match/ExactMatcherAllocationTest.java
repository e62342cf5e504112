package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/** After warm-up, {@link ExactMatcher#match(Message, IntConsumer)} allocates nothing. */
class ExactMatcherAllocationTest {

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

    // Reading the counter may itself cost a few bytes; measure that fixed cost with two reads in a
    // row and allow exactly it. Whatever match allocated would come on top of it and grow with
    // the number of calls, so the test also runs two loops of different lengths.
    long r0 = mx.getThreadAllocatedBytes(thread);
    long r1 = mx.getThreadAllocatedBytes(thread);
    long readCost = r1 - r0;

    long callsBefore = sink.calls;
    long a0 = mx.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 10_000; i++) {
      matcher.match(messages[i % messages.length], sink);
    }
    long a1 = mx.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100_000; i++) {
      matcher.match(messages[i % messages.length], sink);
    }
    long a2 = mx.getThreadAllocatedBytes(thread);

    assertTrue(sink.calls > callsBefore, "the measured calls matched some hosts");
    assertEquals(readCost, a1 - a0, "bytes allocated by 10,000 calls beyond the counter's cost");
    assertEquals(readCost, a2 - a1, "bytes allocated by 100,000 calls beyond the counter's cost");
  }
}
