package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The encoding's one guarantee: no false negatives. If a message satisfies a predicate, the
 * message's filter covers some filter of the predicate's encoding, for every M and k.
 */
class EncodingPropertyTest {
  private static final List<BloomParameters> PARAMS =
      List.of(
          new BloomParameters(64, 1),
          new BloomParameters(64, 5),
          new BloomParameters(100, 3),
          BloomParameters.DEFAULT,
          new BloomParameters(512, 7));

  @Property(tries = 3000)
  void satisfiedPredicateIsAlwaysCoveredByTheMessageFilter(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Predicate p = r.predicate(4, 5);
    for (BloomParameters params : PARAMS) {
      Encoder enc = new Encoder(params);
      EncodedPredicate ep = enc.encode(p);
      for (int i = 0; i < 20; i++) {
        Message m = i % 4 == 0 ? r.message() : r.messageNear(p);
        if (p.matches(m)) {
          assertTrue(
              ep.matches(enc.encode(m)),
              () -> "false negative with " + params + ": " + p + " on " + m);
        }
      }
    }
  }

  @Property(tries = 2000)
  void everySatisfiedConjunctionHasACoveredFilter(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Predicate p = r.predicate(3, 6);
    Encoder enc = new Encoder(new BloomParameters(64, 2));
    for (int i = 0; i < 10; i++) {
      Message m = r.messageNear(p);
      long[] mf = enc.encode(m);
      for (Conjunction c : p.conjunctions()) {
        if (c.matches(m)) {
          assertTrue(
              enc.encode(c).stream().anyMatch(f -> Filters.covers(mf, f)), () -> c + " on " + m);
        }
      }
    }
  }
}
