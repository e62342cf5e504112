package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class EncodedPredicateTest {
  private static final BloomParameters P = new BloomParameters(64, 1);

  private static long[] f(long bits) {
    return new long[] {bits};
  }

  @Test
  void supersetsAndDuplicatesAreDropped() {
    EncodedPredicate e =
        EncodedPredicate.ofFilters(P, List.of(f(0b0111), f(0b0011), f(0b0011), f(0b1000)));
    assertEquals(2, e.size());
    assertEquals(List.of(0b0011L, 0b1000L), e.filters().stream().map(x -> x[0]).toList());
  }

  @Property(tries = 500)
  void minimalSetMatchesExactlyLikeTheFullSetAndIsOrderIndependent(@ForAll long seed) {
    Random r = new Random(seed);
    List<long[]> filters = new ArrayList<>();
    for (int i = 0, n = r.nextInt(30); i < n; i++) {
      filters.add(f(r.nextLong() & r.nextLong() & r.nextLong()));
    }
    EncodedPredicate e = EncodedPredicate.ofFilters(P, filters);
    for (int i = 0; i < e.size(); i++) {
      for (int j = 0; j < e.size(); j++) {
        assertTrue(i == j || !Filters.covers(e.filter(i), e.filter(j)), "not minimal");
      }
    }
    for (int t = 0; t < 50; t++) {
      long[] m = f(r.nextLong() | r.nextLong());
      boolean any = filters.stream().anyMatch(x -> Filters.covers(m, x));
      assertEquals(any, e.matches(m));
    }
    List<long[]> shuffled = new ArrayList<>(filters);
    Collections.shuffle(shuffled, r);
    assertEquals(e, EncodedPredicate.ofFilters(P, shuffled));
  }

  @Test
  void unionIsMinimal() {
    EncodedPredicate a = EncodedPredicate.ofFilters(P, List.of(f(0b0011)));
    EncodedPredicate b = EncodedPredicate.ofFilters(P, List.of(f(0b0111), f(0b1000)));
    assertEquals(EncodedPredicate.ofFilters(P, List.of(f(0b0011), f(0b1000))), a.union(b));
  }

  @Test
  void rejectsFiltersThatDoNotFitTheParameters() {
    BloomParameters p = new BloomParameters(100, 2);
    assertThrows(
        IllegalArgumentException.class, () -> EncodedPredicate.ofFilters(p, List.of(f(1))));
    assertThrows(
        IllegalArgumentException.class,
        () -> EncodedPredicate.ofFilters(p, List.of(new long[] {0, 1L << 40})));
    assertThrows(
        IllegalArgumentException.class,
        () -> EncodedPredicate.empty(P).union(EncodedPredicate.empty(p)));
    assertFalse(EncodedPredicate.empty(P).matches(f(-1L)));
  }
}
