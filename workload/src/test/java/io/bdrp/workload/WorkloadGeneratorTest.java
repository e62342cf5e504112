package io.bdrp.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.ValueType;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WorkloadGeneratorTest {

  @Test
  void dictionaryHas200DistinctTerms() {
    assertEquals(200, Terms.DICTIONARY.size());
    assertEquals(200, new HashSet<>(Terms.DICTIONARY).size());
  }

  @Test
  void messagesHaveTheModelsShape() {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 1);
    for (int i = 0; i < 1000; i++) {
      Message m = g.message();
      assertEquals(10, m.size());
      int strings = 0;
      for (int a = 0; a < m.size(); a++) {
        if (m.value(a).type() == ValueType.STRING) {
          strings++;
          assertTrue(m.name(a).startsWith("s"));
          assertTrue(Terms.DICTIONARY.contains(m.value(a).asString()));
        } else {
          assertEquals(ValueType.INTEGER, m.value(a).type());
          long v = m.value(a).asLong();
          assertTrue(v >= 0 && v <= 100, "integer out of range: " + v);
        }
      }
      assertEquals(6, strings);
    }
  }

  @Test
  void constraintMixFollowsTheModel() {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 2);
    int n = 200_000;
    int strings = 0;
    int stringEq = 0;
    int intEq = 0;
    int intRange = 0;
    for (int i = 0; i < n; i++) {
      Constraint c = g.constraint();
      if (c.value().type() == ValueType.STRING) {
        strings++;
        if (c.op() == Op.EQ) {
          stringEq++;
        }
      } else if (c.op() == Op.EQ) {
        intEq++;
      } else {
        intRange++;
      }
    }
    // Binomial standard deviations at n = 200,000 are below 0.002; allow 0.01.
    assertEquals(0.6, strings / (double) n, 0.01);
    assertEquals(0.7, stringEq / (double) strings, 0.01);
    assertEquals(0.8, intEq / (double) (intEq + intRange), 0.01);
  }

  @Test
  void predicatesHaveTwentyConjunctionsOfOneToFiveConstraints() {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 3);
    Set<Integer> sizes = new HashSet<>();
    for (int i = 0; i < 300; i++) {
      Predicate p = g.predicate();
      assertTrue(p.size() <= 20 && p.size() >= 10, "conjunctions: " + p.size());
      for (Conjunction c : p.conjunctions()) {
        assertTrue(c.size() >= 1 && c.size() <= 5);
        sizes.add(c.size());
      }
    }
    assertEquals(Set.of(1, 2, 3, 4, 5), sizes);
  }

  @Test
  void sameSeedSameSequence() {
    WorkloadGenerator a = new WorkloadGenerator(WorkloadSpec.PAPER, 42);
    WorkloadGenerator b = new WorkloadGenerator(WorkloadSpec.PAPER, 42);
    for (int i = 0; i < 50; i++) {
      assertEquals(a.predicate(), b.predicate());
      assertEquals(a.message(), b.message());
    }
  }

  @Test
  void specIsValidated() {
    assertThrows(IllegalArgumentException.class, () -> WorkloadSpec.PAPER.withNames(3, 8));
    assertThrows(IllegalArgumentException.class, () -> WorkloadSpec.PAPER.withConstraints(3, 2));
  }
}
