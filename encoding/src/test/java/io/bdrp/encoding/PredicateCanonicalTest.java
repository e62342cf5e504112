package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** Canonical form keeps the meaning of the raw disjunction it was built from. */
class PredicateCanonicalTest {

  private static boolean rawMatches(List<List<Constraint>> raw, Message m) {
    for (List<Constraint> conj : raw) {
      boolean all = true;
      for (Constraint c : conj) {
        all &= c.test(m);
      }
      if (all) {
        return true;
      }
    }
    return false;
  }

  @Property(tries = 3000)
  void canonicalFormEvaluatesLikeTheRawDisjunction(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    List<List<Constraint>> raw = r.rawDisjunction(4, 5);
    Predicate p = Predicate.of(raw);
    for (int i = 0; i < 30; i++) {
      Message m = i % 2 == 0 ? r.message() : r.messageNear(Predicate.of(raw.subList(0, 1)));
      assertEquals(rawMatches(raw, m), p.matches(m), () -> raw + " vs " + p + " on " + m);
    }
  }

  @Property(tries = 1000)
  void canonicalFormIsAFixedPoint(@ForAll long seed) {
    Predicate p = new RandomModel(seed).predicate();
    List<List<Constraint>> again = p.conjunctions().stream().map(Conjunction::constraints).toList();
    assertEquals(p, Predicate.of(again));
  }
}
