package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Targeted cases per operator and type, plus the bookkeeping of hosts and ids. */
class ExactMatcherTest {
  private static final double TWO_POW_63 = 9.223372036854775807E18; // rounds to 2^63 exactly
  private static final long TWO_POW_53 = 1L << 53;

  /** A matcher and the same predicates in a map, for the reference answer. */
  private static final class Fixture {
    final ExactMatcher matcher = new ExactMatcher();
    final TreeMap<Integer, Predicate> model = new TreeMap<>();

    Fixture put(int host, Predicate p) {
      matcher.put(host, p);
      if (p.isEmpty()) {
        model.remove(host);
      } else {
        model.put(host, p);
      }
      return this;
    }

    Fixture put(int host, Constraint... conjunction) {
      return put(host, Predicate.ofConstraints(conjunction));
    }

    void remove(int host) {
      assertEquals(model.remove(host) != null, matcher.remove(host));
    }

    /** Asserts that {@code m} matches exactly {@code expected}, and that the reference agrees. */
    void expect(Message m, int... expected) {
      int[] naive =
          model.entrySet().stream()
              .filter(e -> e.getValue().matches(m))
              .mapToInt(Map.Entry::getKey)
              .toArray();
      assertArrayEquals(expected, naive, () -> "reference evaluator on " + m);
      assertArrayEquals(expected, matcher.match(m), () -> "matcher on " + m);
    }
  }

  private static Constraint c(String name, Op op, Value v) {
    return Constraint.of(name, op, v);
  }

  private static Message msg(String name, Value v) {
    return Message.builder().put(name, v).build();
  }

  private static Value v(long x) {
    return Value.of(x);
  }

  private static Value v(double x) {
    return Value.of(x);
  }

  private static Value v(String x) {
    return Value.of(x);
  }

  private static String astral(int codePoint) {
    return new String(Character.toChars(codePoint));
  }

  // ---------------------------------------------------------------- numbers

  @Test
  void eachNumericOperatorOnIntegersAndDoubles() {
    Fixture f = new Fixture();
    Op[] ops = {Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE};
    for (int i = 0; i < ops.length; i++) {
      f.put(i, c("x", ops[i], v(50)));
      f.put(10 + i, c("x", ops[i], v(50.5)));
    }
    // 50 and 50.0 are the same number; 50.5 lies above it.
    f.expect(msg("x", v(50)), 0, 3, 5, 11, 12, 13);
    f.expect(msg("x", v(50.0)), 0, 3, 5, 11, 12, 13);
    f.expect(msg("x", v(50.5)), 1, 4, 5, 10, 13, 15);
    f.expect(msg("x", v(49.999)), 1, 2, 3, 11, 12, 13);
    f.expect(msg("x", v(51)), 1, 4, 5, 11, 14, 15);
  }

  @Test
  void longMaxValueAndTwoToThe63AsDoubleAreDistinct() {
    Fixture f = new Fixture();
    f.put(1, c("x", Op.EQ, v(Long.MAX_VALUE)));
    f.put(2, c("x", Op.EQ, v(TWO_POW_63)));
    f.put(3, c("x", Op.LT, v(TWO_POW_63)));
    f.put(4, c("x", Op.GT, v(Long.MAX_VALUE)));
    f.put(5, c("x", Op.NE, v(Long.MAX_VALUE)));
    f.put(6, c("x", Op.GE, v(Long.MAX_VALUE)));
    // (double) Long.MAX_VALUE == 2^63: a matcher that rounds would confuse them.
    f.expect(msg("x", v(Long.MAX_VALUE)), 1, 3, 6);
    f.expect(msg("x", v(TWO_POW_63)), 2, 4, 5, 6);
    f.expect(msg("x", v(Long.MAX_VALUE - 1)), 3, 5);
  }

  @Test
  void twoToThe53PlusOneIsNotTwoToThe53AsDouble() {
    Fixture f = new Fixture();
    f.put(1, c("x", Op.EQ, v(TWO_POW_53 + 1)));
    f.put(2, c("x", Op.EQ, v((double) TWO_POW_53))); // canonicalised to the long 2^53
    f.put(3, c("x", Op.GT, v((double) TWO_POW_53)));
    f.put(4, c("x", Op.LE, v(TWO_POW_53)));
    f.put(5, c("x", Op.NE, v(TWO_POW_53 + 1)));
    f.expect(msg("x", v((double) TWO_POW_53)), 2, 4, 5);
    f.expect(msg("x", v(TWO_POW_53)), 2, 4, 5);
    f.expect(msg("x", v(TWO_POW_53 + 1)), 1, 3);
    // The double just above 2^53 is 2^53 + 2.
    f.expect(msg("x", v(Math.nextUp((double) TWO_POW_53))), 3, 5);
  }

  @Test
  void extremeNumbersAndNegativeZero() {
    Fixture f = new Fixture();
    f.put(1, c("x", Op.LT, v(Long.MIN_VALUE)));
    f.put(2, c("x", Op.GE, v(-1e300)));
    f.put(3, c("x", Op.EQ, v(0)));
    f.put(4, c("x", Op.GT, v(4.9e-324)));
    f.put(5, c("x", Op.LE, v(-0.0))); // canonicalised to 0
    f.expect(msg("x", v(-1e300)), 1, 2, 5);
    f.expect(msg("x", v(Long.MIN_VALUE)), 2, 5);
    f.expect(msg("x", v(-0.0)), 2, 3, 5);
    f.expect(msg("x", v(4.9e-324)), 2);
    f.expect(msg("x", v(1e300)), 2, 4);
  }

  /**
   * Many operands per operator on one name, probed at every operand and between neighbours: the
   * ranges found by binary search must be exactly the satisfied ones.
   */
  @Test
  void rangesOverManyOperandsAgreeWithTheReference() {
    Fixture f = new Fixture();
    Op[] ops = {Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE};
    List<Value> operands = new ArrayList<>();
    for (int i = -5; i <= 5; i++) {
      operands.add(v(i * 10));
      operands.add(v(i * 10 + 0.25));
    }
    operands.add(v(Long.MAX_VALUE));
    operands.add(v(Long.MIN_VALUE));
    operands.add(v(TWO_POW_63));
    int host = 0;
    for (Op op : ops) {
      for (Value operand : operands) {
        f.put(host++, c("x", op, operand));
      }
    }
    List<Value> probes = new ArrayList<>(operands);
    for (int i = -6; i <= 6; i++) {
      probes.add(v(i * 10 + 5));
      probes.add(v(i * 10.0));
      probes.add(v(i * 10 - 0.5));
    }
    probes.add(v(1e19));
    probes.add(v(-1e19));
    for (Value probe : probes) {
      Message m = msg("x", probe);
      int[] naive =
          f.model.entrySet().stream()
              .filter(e -> e.getValue().matches(m))
              .mapToInt(Map.Entry::getKey)
              .toArray();
      assertTrue(naive.length > 0, "every probe satisfies some != or range constraint");
      f.expect(m, naive);
    }
  }

  // ---------------------------------------------------------------- strings

  @Test
  void stringOrderIsByCodePoint() {
    Fixture f = new Fixture();
    String bmpTop = "\uFFFF";
    String astral = astral(0x10000);
    f.put(1, c("s", Op.LT, v(astral)));
    f.put(2, c("s", Op.GT, v(bmpTop)));
    f.put(3, c("s", Op.GE, v(astral)));
    f.put(4, c("s", Op.LE, v(bmpTop)));
    f.put(5, c("s", Op.NE, v(astral)));
    f.put(6, c("s", Op.EQ, v(astral)));
    // By UTF-16 units U+10000 (D800 DC00) sorts before U+FFFF; by code point it is after.
    f.expect(msg("s", v(bmpTop)), 1, 4, 5);
    f.expect(msg("s", v(astral)), 2, 3, 6);
    f.expect(msg("s", v("")), 1, 4, 5);
  }

  @Test
  void stringEqualityAndInequality() {
    Fixture f = new Fixture();
    f.put(1, c("s", Op.EQ, v("Italy")));
    f.put(2, c("s", Op.EQ, v("")));
    f.put(3, c("s", Op.NE, v("Italy")));
    f.put(4, c("s", Op.NE, v("")));
    f.expect(msg("s", v("Italy")), 1, 4);
    f.expect(msg("s", v("")), 2, 3);
    f.expect(msg("s", v("Ital")), 3, 4);
    // The message's string is another object with the same characters.
    f.expect(msg("s", v(new String(new char[] {'I', 't', 'a', 'l', 'y'}))), 1, 4);
  }

  @Test
  void prefixSuffixContainsWithEmptyOperandsAndValues() {
    Fixture f = new Fixture();
    f.put(1, c("s", Op.PREFIX, v("")));
    f.put(2, c("s", Op.SUFFIX, v("")));
    f.put(3, c("s", Op.CONTAINS, v("")));
    f.put(4, c("s", Op.PREFIX, v("a")));
    f.put(5, c("s", Op.SUFFIX, v("a")));
    f.put(6, c("s", Op.CONTAINS, v("a")));
    f.expect(msg("s", v("")), 1, 2, 3);
    f.expect(msg("s", v("a")), 1, 2, 3, 4, 5, 6);
    f.expect(msg("s", v("bab")), 1, 2, 3, 6);
    f.expect(msg("s", v(0)));
  }

  @Test
  void astralCharactersInPrefixSuffixContains() {
    String smile = astral(0x1F600);
    String other = astral(0x1F601); // same high surrogate, other low one
    Fixture f = new Fixture();
    f.put(1, c("s", Op.PREFIX, v(smile)));
    f.put(2, c("s", Op.SUFFIX, v(smile)));
    f.put(3, c("s", Op.CONTAINS, v(smile)));
    f.put(4, c("s", Op.CONTAINS, v("x" + smile)));
    f.put(5, c("s", Op.PREFIX, v(smile + "x")));
    f.expect(msg("s", v(smile + "x")), 1, 3, 5);
    f.expect(msg("s", v("x" + smile)), 2, 3, 4);
    f.expect(msg("s", v(other + smile + other)), 3);
    f.expect(msg("s", v(other + "x" + other)));
  }

  @Test
  void overlappingOccurrencesCountOnce() {
    Fixture f = new Fixture();
    // If "aa" counted once per occurrence, its three occurrences in "aaaa" would complete these
    // two-constraint conjunctions without their other constraint.
    f.put(1, c("s", Op.CONTAINS, v("aa")), c("s", Op.CONTAINS, v("b")));
    f.put(2, c("s", Op.CONTAINS, v("aa")), c("t", Op.EQ, v(1)));
    f.put(3, c("s", Op.CONTAINS, v("aa")), c("s", Op.SUFFIX, v("ab")));
    f.put(4, c("s", Op.CONTAINS, v("aa")));
    f.expect(msg("s", v("aaaa")), 4);
    f.expect(msg("s", v("aaaab")), 1, 3, 4);
    f.expect(Message.builder().put("s", "xaay").put("t", 1).build(), 2, 4);
  }

  /**
   * Every operand over {a, b} up to length 3 for prefix, suffix and contains, each paired with a
   * second constraint so that a constraint counted twice would show; every value over {a, b} up to
   * length 6. This walks every failure-link and output-link case of the automaton on a small
   * alphabet.
   */
  @Test
  void allSmallPatternsAgreeWithTheReference() {
    List<String> operands = words(3);
    List<String> values = words(6);
    Fixture f = new Fixture();
    int host = 0;
    for (String w : operands) {
      for (Op op : new Op[] {Op.PREFIX, Op.SUFFIX, Op.CONTAINS}) {
        f.put(host++, c("s", op, v(w)));
        f.put(host++, c("s", op, v(w)), c("t", Op.EQ, Value.TRUE));
      }
    }
    for (String w : values) {
      Message m = msg("s", v(w));
      int[] naive =
          f.model.entrySet().stream()
              .filter(e -> e.getValue().matches(m))
              .mapToInt(Map.Entry::getKey)
              .toArray();
      f.expect(m, naive);
      Message both = Message.builder().put("s", w).put("t", true).build();
      int[] naiveBoth =
          f.model.entrySet().stream()
              .filter(e -> e.getValue().matches(both))
              .mapToInt(Map.Entry::getKey)
              .toArray();
      f.expect(both, naiveBoth);
    }
    // Remove every other host: the tries are pruned and relinked, and still agree.
    for (int h = 0; h < host; h += 2) {
      f.remove(h);
    }
    for (String w : values) {
      Message m = msg("s", v(w));
      int[] naive =
          f.model.entrySet().stream()
              .filter(e -> e.getValue().matches(m))
              .mapToInt(Map.Entry::getKey)
              .toArray();
      f.expect(m, naive);
    }
  }

  private static List<String> words(int maxLength) {
    List<String> out = new ArrayList<>();
    out.add("");
    for (int i = 0; i < out.size(); i++) {
      String w = out.get(i);
      if (w.length() < maxLength) {
        out.add(w + "a");
        out.add(w + "b");
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- booleans, exists, types

  @Test
  void booleanEqualityAndCanonicalInequality() {
    Fixture f = new Fixture();
    f.put(1, c("b", Op.EQ, Value.TRUE));
    f.put(2, c("b", Op.NE, Value.TRUE)); // canonicalised to b = false
    f.put(3, c("b", Op.EQ, Value.FALSE));
    f.expect(msg("b", Value.TRUE), 1);
    f.expect(msg("b", Value.FALSE), 2, 3);
    assertEquals(2, f.matcher.constraintCount(), "b != true and b = false are one constraint");
  }

  @Test
  void existsHoldsForEveryType() {
    Fixture f = new Fixture();
    f.put(1, Constraint.exists("a"));
    f.put(2, Constraint.exists("b"));
    for (Value val : List.of(v(""), v("x"), v(0), v(-1.5), Value.TRUE, Value.FALSE)) {
      f.expect(msg("a", val), 1);
    }
    f.expect(Message.builder().build());
    f.expect(msg("c", v(1)));
  }

  @Test
  void constraintsOfAnotherTypeFamilyAreFalse() {
    Fixture f = new Fixture();
    f.put(1, c("a", Op.EQ, v("1")));
    f.put(2, c("a", Op.NE, v("1")));
    f.put(3, c("a", Op.EQ, v(1)));
    f.put(4, c("a", Op.NE, v(1)));
    f.put(5, c("a", Op.LT, v(5.5)));
    f.put(6, c("a", Op.GT, v("")));
    f.put(7, c("a", Op.EQ, Value.TRUE));
    f.put(8, c("a", Op.EQ, Value.FALSE));
    f.put(9, c("a", Op.PREFIX, v("")));
    f.expect(msg("a", v(1)), 3, 5);
    f.expect(msg("a", v(1.0)), 3, 5);
    f.expect(msg("a", v("1")), 1, 6, 9);
    f.expect(msg("a", Value.TRUE), 7);
    f.expect(msg("a", v(2)), 4, 5);
  }

  // ---------------------------------------------------------------- hosts and bookkeeping

  @Test
  void aHostIsReportedOnceWhenSeveralConjunctionsMatch() {
    ExactMatcher matcher = new ExactMatcher();
    Predicate p =
        Predicate.ofConstraints(c("a", Op.EQ, v(1)))
            .or(Predicate.ofConstraints(c("b", Op.GT, v(0))))
            .or(Predicate.ofConstraints(c("c", Op.PREFIX, v("x")), c("a", Op.GE, v(0))));
    assertEquals(3, p.size());
    matcher.put(7, p);
    Message m = Message.builder().put("a", 1).put("b", 5).put("c", "xy").build();
    assertTrue(p.matches(m));
    List<Integer> seen = new ArrayList<>();
    matcher.match(m, seen::add);
    assertEquals(List.of(7), seen);
    assertArrayEquals(new int[] {7}, matcher.match(m));
  }

  @Test
  void equalConstraintsAreSharedAcrossHosts() {
    Fixture f = new Fixture();
    f.put(1, c("a", Op.EQ, v(1)), c("s", Op.CONTAINS, v("x")));
    f.put(2, c("a", Op.EQ, v(1)));
    f.put(3, c("a", Op.EQ, v(1.0)), c("s", Op.CONTAINS, v("x")));
    assertEquals(2, f.matcher.constraintCount());
    assertEquals(3, f.matcher.conjunctionCount());
    Message m = Message.builder().put("a", 1.0).put("s", "axb").build();
    f.expect(m, 1, 2, 3);
    f.remove(1);
    assertEquals(2, f.matcher.constraintCount(), "host 3 still uses both constraints");
    f.expect(m, 2, 3);
    f.remove(3);
    assertEquals(1, f.matcher.constraintCount());
    f.expect(m, 2);
  }

  @Test
  void removalReallyRemoves() {
    Fixture f = new Fixture();
    f.put(1, c("a", Op.EQ, v(1)));
    f.put(2, c("s", Op.CONTAINS, v("x")), c("n", Op.LT, v(3)));
    Message m = Message.builder().put("a", 1).put("s", "x").put("n", 2).build();
    f.expect(m, 1, 2);
    f.remove(1);
    f.expect(m, 2);
    assertNull(f.matcher.predicate(1));
    assertFalse(f.matcher.remove(1), "a second removal finds nothing");
    f.put(2, Predicate.NONE);
    f.expect(m);
    assertEquals(0, f.matcher.hostCount());
    assertEquals(0, f.matcher.conjunctionCount());
    assertEquals(0, f.matcher.constraintCount());
  }

  @Test
  void replacingAPredicateDropsTheOldOne() {
    Fixture f = new Fixture();
    f.put(1, c("a", Op.EQ, v(1)));
    f.put(1, c("a", Op.EQ, v(2)));
    f.expect(msg("a", v(1)));
    f.expect(msg("a", v(2)), 1);
    assertEquals(1, f.matcher.hostCount());
    assertEquals(1, f.matcher.constraintCount());
    assertEquals(Predicate.ofConstraints(c("a", Op.EQ, v(2))), f.matcher.predicate(1));
  }

  @Test
  void largeHostIdsWork() {
    Fixture f = new Fixture();
    f.put(Integer.MAX_VALUE, c("a", Op.EQ, v(1)));
    f.put(0, c("a", Op.GE, v(1)));
    f.expect(msg("a", v(1)), 0, Integer.MAX_VALUE);
  }

  @Test
  void freedIdsAreReused() {
    ExactMatcher matcher = new ExactMatcher();
    Predicate p =
        Predicate.ofConstraints(c("a", Op.EQ, v(1)), c("b", Op.PREFIX, v("x")))
            .or(Predicate.ofConstraints(c("c", Op.LT, v(2.5))));
    Predicate q = Predicate.ofConstraints(c("d", Op.CONTAINS, v("y")));
    for (int i = 0; i < 1000; i++) {
      matcher.put(i % 3, p);
      matcher.put(i % 3, q);
      matcher.remove(i % 3);
    }
    // At most one host is live at a time, with 2 + 1 conjunctions and 3 + 1 constraints while
    // being replaced.
    assertEquals(0, matcher.conjunctionCount());
    assertTrue(
        matcher.conjunctionIdLimit() <= 3, "conjunction ids: " + matcher.conjunctionIdLimit());
    assertTrue(matcher.constraintIdLimit() <= 4, "constraint ids: " + matcher.constraintIdLimit());
  }

  @Test
  void rejectsNegativeHostsAndCallsFromItsOwnSink() {
    ExactMatcher matcher = new ExactMatcher();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> matcher.put(-3, Predicate.ofConstraints(Constraint.exists("a"))));
    assertTrue(e.getMessage().contains("-3"), e.getMessage());
    matcher.put(1, Predicate.ofConstraints(Constraint.exists("a")));
    Message m = msg("a", v(1));
    assertThrows(IllegalStateException.class, () -> matcher.match(m, h -> matcher.remove(h)));
    // The failed call left the matcher usable and unchanged.
    assertArrayEquals(new int[] {1}, matcher.match(m));
  }

  @Test
  void messageCounterWrapAroundKeepsResultsExact() {
    Fixture f = new Fixture();
    f.put(1, c("a", Op.EQ, v(1)), c("b", Op.EQ, v(2)));
    f.put(2, c("a", Op.EQ, v(1)));
    Message onlyA = msg("a", v(1));
    // Message number 1: host 1's conjunction is half counted, host 2 is marked matched.
    f.expect(onlyA, 2);
    f.matcher.setEpochForTest(ExactMatcher.MAX_EPOCH - 1);
    f.expect(msg("c", v(0))); // the last message number before the wrap touches no counter
    // The counter wraps and numbers messages from 1 again: the stamps left by the first message
    // must not complete host 1's conjunction nor hide host 2.
    f.expect(onlyA, 2);
    f.expect(Message.builder().put("a", 1).put("b", 2).build(), 1, 2);
  }
}
