package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ConjunctionTest {
  private static Constraint c(String name, Op op, Value v) {
    return Constraint.of(name, op, v);
  }

  @Test
  void contradictoryEqualitiesVanish() {
    assertTrue(Conjunction.of(c("x", Op.EQ, Value.of(1)), c("x", Op.EQ, Value.of(2))).isEmpty());
    assertEquals(
        Predicate.NONE,
        Predicate.ofConstraints(c("x", Op.EQ, Value.of(1)), c("x", Op.EQ, Value.of(2))));
  }

  @Test
  void equalityAbsorbsTheConstraintsItSatisfies() {
    Conjunction k =
        Conjunction.of(
                c("x", Op.EQ, Value.of(5)),
                c("x", Op.GT, Value.of(1)),
                c("x", Op.NE, Value.of(7)),
                Constraint.exists("x"))
            .orElseThrow();
    assertEquals(List.of(c("x", Op.EQ, Value.of(5))), k.constraints());
    assertTrue(Conjunction.of(c("x", Op.EQ, Value.of(5)), c("x", Op.LT, Value.of(5))).isEmpty());
  }

  @Test
  void boundsTightenAndMeetInAnEquality() {
    Conjunction k =
        Conjunction.of(
                c("x", Op.GT, Value.of(1)), c("x", Op.GT, Value.of(3)), c("x", Op.LE, Value.of(9)))
            .orElseThrow();
    assertEquals("x > 3 && x <= 9", k.toString());
    assertEquals(
        "x = 4",
        Conjunction.of(c("x", Op.GE, Value.of(4.0)), c("x", Op.LE, Value.of(4)))
            .orElseThrow()
            .toString());
    assertTrue(Conjunction.of(c("x", Op.GT, Value.of(4)), c("x", Op.LE, Value.of(4))).isEmpty());
  }

  @Test
  void typesOnOneNameMustAgree() {
    assertTrue(Conjunction.of(c("x", Op.EQ, Value.of("a")), c("x", Op.GT, Value.of(1))).isEmpty());
    assertEquals(
        "x = 1.5 && y = \"a\"",
        Conjunction.of(c("y", Op.EQ, Value.of("a")), c("x", Op.EQ, Value.of(1.5)))
            .orElseThrow()
            .toString());
  }

  @Test
  void stringConstraintsSimplify() {
    assertEquals(
        "s prefix \"abc\"",
        Conjunction.of(c("s", Op.PREFIX, Value.of("ab")), c("s", Op.PREFIX, Value.of("abc")))
            .orElseThrow()
            .toString());
    assertTrue(
        Conjunction.of(c("s", Op.PREFIX, Value.of("ab")), c("s", Op.PREFIX, Value.of("ba")))
            .isEmpty());
    assertEquals(
        "s prefix \"abc\"",
        Conjunction.of(c("s", Op.PREFIX, Value.of("abc")), c("s", Op.CONTAINS, Value.of("bc")))
            .orElseThrow()
            .toString());
  }

  @Test
  void booleanInequalityBecomesEquality() {
    assertEquals(c("b", Op.EQ, Value.FALSE), c("b", Op.NE, Value.TRUE));
  }

  @Test
  void absorptionDropsImpliedConjunctions() {
    Constraint a = c("a", Op.EQ, Value.of(1));
    Constraint b = c("b", Op.EQ, Value.of(2));
    Predicate p = Predicate.of(List.of(List.of(a, b), List.of(a)));
    assertEquals("a = 1", p.toString());
  }
}
