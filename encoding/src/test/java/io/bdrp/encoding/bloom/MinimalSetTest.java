package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Predicate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * The minimal set ({@link EncodedPredicate#ofFilters}, {@link EncodedPredicate#ofPositions}, {@link
 * EncodedPredicate#union}) is computed through the index by bit ({@link CoverIndex}) and must equal
 * what the obvious quadratic algorithm gives, on random and adversarial sets; and it must cost
 * about each filter's bits times short lists, not the size of the set, on the shape an attacker
 * used: 1,024 conjunctions of three {@code exists}, 27,648 filters, which the quadratic scan over
 * dense 1 KiB filters took minutes to reduce.
 */
class MinimalSetTest {
  /** The obvious algorithm: keep each distinct filter that covers no other distinct filter. */
  static List<long[]> quadraticMinimal(List<long[]> filters) {
    List<long[]> distinct = new ArrayList<>();
    for (long[] f : filters) {
      if (distinct.stream().noneMatch(d -> Arrays.equals(d, f))) {
        distinct.add(f);
      }
    }
    List<long[]> kept = new ArrayList<>();
    for (long[] f : distinct) {
      boolean redundant = false;
      for (long[] g : distinct) {
        if (g != f && Filters.covers(f, g)) {
          redundant = true;
        }
      }
      if (!redundant) {
        kept.add(f);
      }
    }
    kept.sort(Filters::compare);
    return kept;
  }

  private static void assertSameFilters(List<long[]> want, EncodedPredicate got) {
    assertEquals(want.size(), got.size(), "number of filters");
    for (int i = 0; i < want.size(); i++) {
      assertArrayEquals(want.get(i), got.filter(i), "filter " + i);
    }
  }

  /**
   * Random sets over a few bits, so that filters share bits, nest and repeat; sizes on both sides
   * of the pairwise threshold; the empty filter now and then.
   */
  static List<long[]> randomSet(Random r, BloomParameters p) {
    int n = r.nextInt(3 * EncodedPredicate.PAIRWISE_MAX);
    int universe = 2 + r.nextInt(Math.min(p.bits(), 40));
    int offset = r.nextInt(p.bits() - universe + 1);
    List<long[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] f = p.newFilter();
      if (r.nextInt(40) != 0) {
        int bits = 1 + r.nextInt(6);
        for (int b = 0; b < bits; b++) {
          int pos = offset + r.nextInt(universe);
          f[pos >>> 6] |= 1L << pos;
        }
      }
      out.add(f);
      if (r.nextInt(8) == 0) {
        out.add(f.clone()); // a duplicate
      }
    }
    return out;
  }

  @Property(tries = 400)
  void equalsTheQuadraticAlgorithmOnRandomSets(@ForAll long seed) {
    Random r = new Random(seed);
    for (BloomParameters p :
        List.of(new BloomParameters(64, 1), new BloomParameters(130, 2), BloomParameters.DEFAULT)) {
      List<long[]> set = randomSet(r, p);
      List<long[]> want = quadraticMinimal(set);
      assertSameFilters(want, EncodedPredicate.ofFilters(p, set));
      List<char[]> sparse = new ArrayList<>();
      for (long[] f : set) {
        sparse.add(EncodedPredicate.positionsOf(p, f));
      }
      assertSameFilters(want, EncodedPredicate.ofPositions(p, sparse));
      // The union of two halves is the minimal set of the whole.
      int cut = set.isEmpty() ? 0 : r.nextInt(set.size());
      EncodedPredicate a = EncodedPredicate.ofFilters(p, set.subList(0, cut));
      EncodedPredicate b = EncodedPredicate.ofFilters(p, set.subList(cut, set.size()));
      assertSameFilters(want, a.union(b));
    }
  }

  @Test
  void equalsTheQuadraticAlgorithmOnAdversarialSets() {
    BloomParameters p = BloomParameters.DEFAULT;
    List<List<long[]>> sets = new ArrayList<>();
    // A chain of nested filters {0}, {0,1}, {0,1,2} ..., shuffled: only {0} is left.
    List<long[]> chain = new ArrayList<>();
    for (int n = 1; n <= 100; n++) {
      long[] f = p.newFilter();
      for (int b = 0; b < n; b++) {
        f[b >>> 6] |= 1L << b;
      }
      chain.add(f);
    }
    Collections.shuffle(chain, new Random(1));
    sets.add(chain);
    // Every filter shares bit 7 and has one bit of its own; plus {7} itself halfway.
    List<long[]> shared = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      shared.add(filter(p, 7, 100 + i));
    }
    sets.add(new ArrayList<>(shared));
    shared.add(100, filter(p, 7));
    sets.add(shared);
    // The empty filter among many: it covers nothing and is covered by all, so it alone is left.
    List<long[]> withEmpty = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      withEmpty.add(filter(p, i, i + 1));
      if (i == 60) {
        withEmpty.add(p.newFilter());
        withEmpty.add(p.newFilter());
      }
    }
    sets.add(withEmpty);
    // Many copies of few filters, in words far apart (word order decides the canonical order).
    List<long[]> copies = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      copies.add(filter(p, 8191 - (i % 5), i % 3));
    }
    sets.add(copies);
    for (List<long[]> set : sets) {
      assertSameFilters(quadraticMinimal(set), EncodedPredicate.ofFilters(p, set));
    }
  }

  static long[] filter(BloomParameters p, int... positions) {
    long[] f = p.newFilter();
    for (int b : positions) {
      f[b >>> 6] |= 1L << b;
    }
    return f;
  }

  /** 1,024 conjunctions of three {@code exists} on distinct names: about 50 KB of text. */
  static Predicate existsShape() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 1024; i++) {
      if (i > 0) {
        sb.append(" || ");
      }
      sb.append("exists(a")
          .append(i)
          .append(") && exists(b")
          .append(i)
          .append(") && exists(c")
          .append(i)
          .append(')');
    }
    return Predicate.parse(sb.toString());
  }

  @Test
  void theExistsShapeCostsAFewListStepsAFilter() {
    BloomParameters p = BloomParameters.DEFAULT;
    Encoder enc = new Encoder(p);
    List<char[]> filters = new ArrayList<>();
    for (Conjunction c : existsShape().conjunctions()) {
      for (long[] f : enc.encode(c)) {
        filters.add(EncodedPredicate.positionsOf(p, f));
      }
    }
    assertEquals(1024 * 27, filters.size());
    long[] work = new long[1];
    EncodedPredicate e = EncodedPredicate.minimalSet(p, filters, work);
    assertEquals(enc.encode(existsShape()), e);
    double perFilter = work[0] / (double) filters.size();
    // The quadratic scan did about n^2/2 = 3.8e8 checks; the index does a few tens a filter.
    assertTrue(perFilter < 64, "list steps per filter: " + perFilter);
    // Held sparsely: 3 positions and a start a filter, not 1 KiB.
    assertTrue(
        e.byteSize() <= 12L * e.size() + 4, e.byteSize() + " bytes for " + e.size() + " filters");
    assertEquals(1024L * e.size(), e.bitmapByteSize());
  }

  /** 0 to 5 positions among 12, across a word boundary (60 to 71). */
  private static char[] randomPositions(Random r) {
    return new Random(r.nextLong())
        .ints(r.nextInt(6), 60, 72)
        .distinct()
        .sorted()
        .collect(StringBuilder::new, (sb, x) -> sb.append((char) x), StringBuilder::append)
        .toString()
        .toCharArray();
  }

  /** The index's answers against brute force, through random additions and removals. */
  @Property(tries = 200)
  void coverIndexAnswersAsBruteForce(@ForAll long seed) {
    Random r = new Random(seed);
    BloomParameters p = new BloomParameters(130, 1);
    CoverIndex<char[]> index = new CoverIndex<>(p.bits());
    List<char[]> members = new ArrayList<>();
    List<Integer> ids = new ArrayList<>();
    for (int step = 0; step < 300; step++) {
      char[] f = randomPositions(r);
      if (!members.isEmpty() && r.nextInt(3) == 0) {
        int i = r.nextInt(members.size());
        index.remove(ids.remove(i));
        members.remove(i);
      } else {
        ids.add(index.add(f, f));
        members.add(f);
      }
      char[] q = randomPositions(r);
      boolean covers = false;
      List<char[]> supersets = new ArrayList<>();
      for (char[] m : members) {
        covers |= EncodedPredicate.isSubset(m, 0, m.length, q, 0, q.length);
        if (EncodedPredicate.isSubset(q, 0, q.length, m, 0, m.length)) {
          supersets.add(m);
        }
      }
      assertEquals(covers, index.coversAny(q, 0, q.length), "coversAny at step " + step);
      List<char[]> got = new ArrayList<>();
      index.supersetsOf(q, 0, q.length, got);
      assertEquals(supersets.size(), got.size(), "supersets at step " + step);
      assertTrue(got.stream().allMatch(g -> supersets.stream().anyMatch(s -> s == g)));
      assertEquals(members.size(), index.size());
    }
  }
}
