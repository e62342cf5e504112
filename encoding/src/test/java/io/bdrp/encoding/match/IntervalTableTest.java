package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The interval table reports, for every value, exactly the ordered constraints the value satisfies:
 * at the extremes of long, around 2^53 where doubles skip longs, between longs, on an operand and
 * beside it; and the matcher falls back to per-operator searches when a table would be too large.
 */
class IntervalTableTest {
  private static final Op[] ORDERED = {Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE};
  private static final long P53 = 1L << 53;

  private static final Value[] NUMBERS = {
    Value.of(Long.MIN_VALUE),
    Value.of(Long.MIN_VALUE + 1),
    Value.of(-P53 - 1),
    Value.of(-1),
    Value.of(0),
    Value.of(1),
    Value.of(2),
    Value.of(P53 - 1),
    Value.of(P53),
    Value.of(P53 + 1),
    Value.of(P53 + 2),
    Value.of(Long.MAX_VALUE - 1),
    Value.of(Long.MAX_VALUE),
    Value.of(-1.5),
    Value.of(-0.0),
    Value.of(0.5),
    Value.of(1.0),
    Value.of(1.5),
    Value.of(1e-300),
    Value.of((double) P53), // the same number as the integer 2^53
    Value.of((double) (P53 + 2)),
    Value.of(9.223372036854775807E18), // 2^63: above every long
    Value.of(-9.223372036854775808E18), // -2^63 = Long.MIN_VALUE
    Value.of(1e300),
    Value.of(-1e300),
  };

  private static final Value[] STRINGS = {
    Value.of(""),
    Value.of("a"),
    Value.of("ab"),
    Value.of("b"),
    Value.of("\uffff"),
    Value.of("\ud83d\ude00"), // U+1F600: after U+FFFF by code point
    Value.of("z"),
  };

  /** The constraints and the table over them; constraint i has id i. */
  private record Built(List<Constraint> constraints, IntervalTable table) {}

  private static Built build(List<Constraint> constraints, ValueType family, long cap) {
    SortedOperands[] ops = new SortedOperands[6];
    for (int i = 0; i < constraints.size(); i++) {
      Constraint k = constraints.get(i);
      int slot = Arrays.asList(ORDERED).indexOf(k.op());
      if (ops[slot] == null) {
        ops[slot] = new SortedOperands();
      }
      ops[slot].add(k.value(), i);
    }
    for (SortedOperands s : ops) {
      if (s != null) {
        s.flatten();
      }
    }
    return new Built(constraints, IntervalTable.build(ops, family, Entries.IDS, cap));
  }

  private static void check(Built b, Value x) {
    int[] expected = new int[b.constraints.size()];
    int n = 0;
    for (int i = 0; i < b.constraints.size(); i++) {
      if (b.constraints.get(i).test(x)) {
        expected[n++] = i;
      }
    }
    int[] actual = b.table.entriesOf(b.table.interval(x));
    Arrays.sort(actual);
    assertArrayEquals(Arrays.copyOf(expected, n), actual, () -> "value " + x);
  }

  private static List<Constraint> every(Value[] operands) {
    List<Constraint> out = new ArrayList<>();
    for (Op op : ORDERED) {
      for (Value v : operands) {
        Constraint k = Constraint.of("x", op, v);
        if (!out.contains(k)) {
          out.add(k); // canonical: 1.0 and 1 are one operand
        }
      }
    }
    return out;
  }

  @Test
  void numbersAtTheExtremesAndAround2To53() {
    Built b = build(every(NUMBERS), ValueType.INTEGER, Long.MAX_VALUE);
    assertNotNull(b.table);
    for (Value x : NUMBERS) {
      check(b, x);
    }
    for (double d : new double[] {-2.5, 0.25, 1.25, 3.5, (double) (P53 + 4), 1e19, -1e19}) {
      check(b, Value.of(d)); // between operands and beyond every long
    }
    for (long l : new long[] {-2, 3, 100, P53 + 3, Long.MAX_VALUE - 2}) {
      check(b, Value.of(l));
    }
  }

  @Test
  void integerOperandsOnlySearchLongsAndStillAnswerDoubles() {
    Value[] ints = {
      Value.of(Long.MIN_VALUE), Value.of(0), Value.of(P53 + 1), Value.of(Long.MAX_VALUE)
    };
    Built b = build(every(ints), ValueType.INTEGER, Long.MAX_VALUE);
    for (Value x : NUMBERS) {
      check(b, x);
    }
  }

  @Test
  void stringsByCodePoint() {
    Built b = build(every(STRINGS), ValueType.STRING, Long.MAX_VALUE);
    for (Value x : STRINGS) {
      check(b, x);
    }
    for (String s : new String[] {"aa", "abc", "c", "\ufffe", "\ud83d\ude01", "zz"}) {
      check(b, Value.of(s));
    }
  }

  @Test
  void randomOperandsAgreeWithEachConstraint() {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      List<Value> operands = new ArrayList<>();
      for (int i = 0, n = 1 + random.nextInt(8); i < n; i++) {
        operands.add(NUMBERS[random.nextInt(NUMBERS.length)]);
      }
      List<Constraint> constraints = new ArrayList<>();
      for (Constraint k : every(operands.toArray(new Value[0]))) {
        if (random.nextBoolean()) {
          constraints.add(k);
        }
      }
      if (constraints.isEmpty()) {
        continue;
      }
      Built b = build(constraints, ValueType.INTEGER, Long.MAX_VALUE);
      for (Value x : NUMBERS) {
        check(b, x);
      }
    }
  }

  @Test
  void declinesPastItsCap() {
    List<Constraint> ne = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ne.add(Constraint.of("x", Op.NE, Value.of(i)));
    }
    // 10 operands, 21 intervals, each != constraint in 20 of them: 200 ids.
    assertEquals(200, build(ne, ValueType.INTEGER, 200).table.entryCount());
    assertNull(build(ne, ValueType.INTEGER, 199).table);
  }

  @Test
  void matcherFallsBackWhenTheTableWouldBeTooLargeAndComesBack() {
    ExactMatcher matcher = new ExactMatcher();
    List<Predicate> predicates = new ArrayList<>();
    // n != constraints hold 2n^2 ids, past n * MAX_COPIES_PER_ENTRY + SLACK_ENTRIES for n = 200.
    int n = 200;
    for (int i = 0; i < n; i++) {
      Predicate p = Predicate.ofConstraints(Constraint.of("x", Op.NE, Value.of(i)));
      predicates.add(p);
      matcher.put(i, p);
    }
    assertNull(matcher.numberTableForTest("x"));
    expectAll(matcher, predicates);
    for (int i = 20; i < n; i++) {
      matcher.remove(i);
      predicates.set(i, Predicate.NONE);
    }
    IntervalTable t = matcher.numberTableForTest("x");
    assertNotNull(t);
    assertEquals(20, t.operandCount());
    expectAll(matcher, predicates);
  }

  private static void expectAll(ExactMatcher matcher, List<Predicate> predicates) {
    for (Value x : NUMBERS) {
      Message m = Message.builder().put("x", x).build();
      int[] expected = new int[predicates.size()];
      int k = 0;
      for (int h = 0; h < predicates.size(); h++) {
        if (!predicates.get(h).isEmpty() && predicates.get(h).matches(m)) {
          expected[k++] = h;
        }
      }
      assertArrayEquals(Arrays.copyOf(expected, k), matcher.match(m), () -> "value " + x);
    }
    for (long v = -1; v < 205; v += 3) {
      Message m = Message.builder().put("x", v).build();
      int k = 0;
      for (Predicate p : predicates) {
        k += !p.isEmpty() && p.matches(m) ? 1 : 0;
      }
      assertEquals(k, matcher.match(m).length, "value " + v);
    }
  }
}
