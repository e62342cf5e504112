package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * A change between two versions of an encoded predicate, sent as the filters it removed and those
 * it added, rebuilds the new version exactly from the old one, over any sequence of versions; so a
 * receiver that applies changes has no false negative the full advertisement would not have.
 */
class EncodedPredicateDeltaTest {
  private static final BloomParameters P = new BloomParameters(256, 2);

  @Property(tries = 1000)
  void changesAppliedInSequenceRebuildEveryVersion(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Encoder enc = new Encoder(P);
    EncodedPredicate held = EncodedPredicate.empty(P);
    Predicate current = Predicate.NONE;
    for (int step = 0; step < 12; step++) {
      // Each version adds or drops a host's predicate from the aggregate, or replaces it.
      Predicate next =
          switch (r.random().nextInt(3)) {
            case 0 -> Predicate.or(List.of(current, r.predicate(3, 3)));
            case 1 -> r.predicate(4, 3);
            default -> current.isEmpty() ? r.predicate(2, 2) : Predicate.NONE;
          };
      EncodedPredicate target = enc.encode(next);
      EncodedPredicate removed = held.minus(target);
      EncodedPredicate added = target.minus(held);
      EncodedPredicate rebuilt = held.apply(removed, added);
      assertEquals(target, rebuilt);
      for (int i = 0; i < 5; i++) {
        Message m = r.messageNear(next);
        if (next.matches(m)) {
          assertTrue(rebuilt.matches(enc.encode(m)), () -> next + " on " + m);
        }
      }
      held = rebuilt;
      current = next;
    }
  }

  @Test
  void aChangeMadeAgainstAnotherVersionIsRefused() {
    long[] a = {1L, 0, 0, 0};
    long[] b = {2L, 0, 0, 0};
    long[] c = {4L, 0, 0, 0};
    EncodedPredicate ab = EncodedPredicate.ofFilters(P, List.of(a, b));
    EncodedPredicate onlyA = EncodedPredicate.ofFilters(P, List.of(a));
    EncodedPredicate onlyC = EncodedPredicate.ofFilters(P, List.of(c));
    EncodedPredicate none = EncodedPredicate.empty(P);
    // Removing c, which {a, b} does not have.
    assertNull(ab.apply(onlyC, none));
    // Adding a, which it has.
    assertNull(ab.apply(none, onlyA));
    // Removing a and adding c: {b, c}.
    assertEquals(EncodedPredicate.ofFilters(P, List.of(b, c)), ab.apply(onlyA, onlyC));
  }
}
