package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class EncodedIndexTest {

  /** A filter with about {@code bits} random bits set. */
  private static long[] randomFilter(Random r, BloomParameters p, int bits) {
    long[] f = p.newFilter();
    for (int i = 0; i < bits; i++) {
      int b = r.nextInt(p.bits());
      f[b >>> 6] |= 1L << b;
    }
    return f;
  }

  private static long[] linearScan(Map<Integer, EncodedPredicate> routers, long[] m, int words) {
    long[] d = new long[words];
    routers.forEach(
        (router, p) -> {
          if (p.matches(m)) {
            d[router >>> 6] |= 1L << router;
          }
        });
    return d;
  }

  @Property(tries = 300)
  void indexFindsExactlyTheRoutersALinearScanFinds(@ForAll long seed) {
    Random r = new Random(seed);
    BloomParameters p = r.nextBoolean() ? new BloomParameters(64, 2) : new BloomParameters(200, 3);
    Map<Integer, EncodedPredicate> routers = new HashMap<>();
    List<long[]> pool = new ArrayList<>(); // shared filters make routers hold identical ones
    for (int i = 0; i < 20; i++) {
      pool.add(randomFilter(r, p, 1 + r.nextInt(8)));
    }
    int n = 1 + r.nextInt(60);
    for (int i = 0; i < n; i++) {
      int router = r.nextInt(3) == 0 ? r.nextInt(300) : i; // gaps and large numbers
      List<long[]> fs = new ArrayList<>();
      for (int j = r.nextInt(6); j > 0; j--) {
        fs.add(
            r.nextBoolean()
                ? pool.get(r.nextInt(pool.size()))
                : randomFilter(r, p, 1 + r.nextInt(10)));
      }
      routers.put(router, EncodedPredicate.ofFilters(p, fs));
    }
    EncodedIndex index = EncodedIndex.build(p, routers);
    for (int t = 0; t < 100; t++) {
      long[] m = randomFilter(r, p, r.nextInt(p.bits()));
      long[] expected = linearScan(routers, m, index.routerWords());
      long[] d = new long[index.routerWords()];
      index.match(m, d);
      assertArrayEquals(expected, d);
    }
  }

  @Test
  void emptyFilterMatchesEveryMessageAndEmptyPredicateNone() {
    BloomParameters p = new BloomParameters(64, 1);
    EncodedIndex index =
        EncodedIndex.build(
            p,
            Map.of(
                3, EncodedPredicate.ofFilters(p, List.of(new long[1])),
                7, EncodedPredicate.empty(p)));
    long[] d = new long[index.routerWords()];
    index.match(new long[1], d);
    assertEquals(1L << 3, d[0]);
    assertEquals(2, index.routerCount());
  }

  @Test
  void identicalFiltersAreStoredOnce() {
    BloomParameters p = new BloomParameters(64, 1);
    EncodedPredicate e = EncodedPredicate.ofFilters(p, List.of(new long[] {0b101}));
    EncodedIndex index = EncodedIndex.build(p, Map.of(1, e, 2, e, 65, e));
    assertEquals(3, index.filterCount());
    assertEquals(1, index.distinctFilterCount());
    long[] d = new long[index.routerWords()];
    assertEquals(1, index.match(new long[] {0b111}, d));
    assertArrayEquals(new long[] {0b110, 0b10}, d);
    long[] none = new long[index.routerWords()];
    assertEquals(0, index.match(new long[] {0b011}, none));
    assertArrayEquals(new long[2], none);
  }

  @Test
  void matcherRebuildsOnlyAfterChanges() {
    BloomParameters p = new BloomParameters(64, 1);
    EncodedMatcher matcher = new EncodedMatcher(p);
    EncodedPredicate e = EncodedPredicate.ofFilters(p, List.of(new long[] {1}));
    assertTrue(matcher.put(4, e));
    EncodedIndex first = matcher.snapshot();
    assertFalse(matcher.put(4, EncodedPredicate.ofFilters(p, List.of(new long[] {1}))));
    assertSame(first, matcher.snapshot());
    assertTrue(matcher.remove(4));
    assertFalse(matcher.remove(4));
    assertEquals(0, matcher.snapshot().routerCount());
    assertThrows(
        IllegalArgumentException.class,
        () -> matcher.put(1, EncodedPredicate.empty(new BloomParameters(128, 1))));
  }
}
