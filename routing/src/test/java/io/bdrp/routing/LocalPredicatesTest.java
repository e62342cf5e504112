package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.bloom.Filters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class LocalPredicatesTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 2);

  private static Predicate random(SplittableRandom rnd) {
    StringBuilder sb = new StringBuilder();
    int conjs = 1 + rnd.nextInt(3);
    for (int c = 0; c < conjs; c++) {
      if (c > 0) {
        sb.append(" || ");
      }
      int k = 1 + rnd.nextInt(3);
      for (int i = 0; i < k; i++) {
        if (i > 0) {
          sb.append(" && ");
        }
        String name = "a" + rnd.nextInt(4);
        switch (rnd.nextInt(3)) {
          case 0 -> sb.append(name).append(" = ").append(rnd.nextInt(3));
          case 1 -> sb.append(name).append(" > ").append(rnd.nextInt(3));
          default -> sb.append("exists(").append(name).append(")");
        }
      }
    }
    return Predicate.parse(sb.toString());
  }

  @Test
  void aggregateIsTheMinimalUnionOfEveryHostsFilters() {
    SplittableRandom rnd = new SplittableRandom(5);
    Encoder encoder = new Encoder(PARAMS);
    LocalPredicates local = new LocalPredicates(PARAMS);
    Map<Integer, Predicate> model = new HashMap<>();
    EncodedPredicate previous = local.aggregate();
    for (int step = 0; step < 3_000; step++) {
      int host = rnd.nextInt(12);
      boolean changed;
      if (rnd.nextInt(4) == 0) {
        model.remove(host);
        changed = local.remove(host);
      } else {
        Predicate p = random(rnd);
        if (p.equals(Predicate.NONE)) {
          model.remove(host); // a contradiction: the host no longer matches anything
        } else {
          model.put(host, p);
        }
        changed = local.set(host, p);
      }
      List<long[]> all = new ArrayList<>();
      for (Predicate p : model.values()) {
        all.addAll(encoder.encode(p).filters());
      }
      EncodedPredicate expected = EncodedPredicate.ofFilters(PARAMS, all);
      assertEquals(expected, local.aggregate(), "step " + step);
      assertEquals(!expected.equals(previous), changed, "change reported at step " + step);
      previous = expected;
      assertEquals(model.size(), local.hostCount());
    }
  }

  /** The obvious quadratic minimal set of dense filters: each distinct one that covers no other. */
  private static List<long[]> quadraticMinimal(List<long[]> filters) {
    List<long[]> distinct = new ArrayList<>();
    for (long[] f : filters) {
      if (distinct.stream().noneMatch(d -> Arrays.equals(d, f))) {
        distinct.add(f);
      }
    }
    List<long[]> kept = new ArrayList<>();
    for (long[] f : distinct) {
      if (distinct.stream().noneMatch(g -> g != f && Filters.covers(f, g))) {
        kept.add(f);
      }
    }
    kept.sort(Filters::compare);
    return kept;
  }

  /**
   * Predicates over two names and few values, so that hosts' filters share bits, nest (a
   * conjunction and a longer one that contains it) and repeat; now and then {@code true}, whose
   * filter is empty: it covers nothing and every filter covers it.
   */
  private static Predicate adversarial(SplittableRandom rnd) {
    if (rnd.nextInt(25) == 0) {
      return Predicate.ALL;
    }
    StringBuilder sb = new StringBuilder();
    int conjs = 1 + rnd.nextInt(4);
    for (int c = 0; c < conjs; c++) {
      if (c > 0) {
        sb.append(" || ");
      }
      sb.append("exists(x)");
      for (int i = rnd.nextInt(3); i > 0; i--) {
        sb.append(" && ")
            .append(rnd.nextBoolean() ? "y" : "x")
            .append(" = ")
            .append(rnd.nextInt(2));
      }
    }
    return Predicate.parse(sb.toString());
  }

  /**
   * The incremental minimal set (through the indexes by bit) against the quadratic algorithm over
   * every host's filters, through random sets, changes and removals of hosts, on random and on
   * adversarial predicates (shared bits, nesting, duplicates, the empty filter).
   */
  @Test
  void incrementalMinimalSetEqualsTheQuadraticAlgorithm() {
    for (boolean nasty : new boolean[] {false, true}) {
      SplittableRandom rnd = new SplittableRandom(nasty ? 11 : 13);
      Encoder encoder = new Encoder(PARAMS);
      LocalPredicates local = new LocalPredicates(PARAMS);
      Map<Integer, Predicate> model = new HashMap<>();
      for (int step = 0; step < 2_000; step++) {
        int host = rnd.nextInt(10);
        if (rnd.nextInt(5) == 0) {
          model.remove(host);
          local.remove(host);
        } else {
          Predicate p = nasty ? adversarial(rnd) : random(rnd);
          if (p.equals(Predicate.NONE)) {
            model.remove(host);
          } else {
            model.put(host, p);
          }
          local.set(host, p);
        }
        List<long[]> all = new ArrayList<>();
        for (Predicate p : model.values()) {
          all.addAll(encoder.encode(p).filters());
        }
        List<long[]> want = quadraticMinimal(all);
        EncodedPredicate got = local.aggregate();
        assertEquals(want.size(), got.size(), "filters at step " + step);
        for (int i = 0; i < want.size(); i++) {
          assertArrayEquals(want.get(i), got.filter(i), "filter " + i + " at step " + step);
        }
      }
    }
  }

  /** n conjunctions of three {@code exists} on distinct names (about 50 KB of text for 1,024). */
  private static String existsShape(int from, int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = from; i < from + n; i++) {
      if (i > from) {
        sb.append(" || ");
      }
      sb.append("exists(a").append(i).append(") && exists(b").append(i);
      sb.append(") && exists(c").append(i).append(')');
    }
    return sb.toString();
  }

  /**
   * The shape that stalled a router for minutes (27,648 filters, each covering-checked against
   * every minimal filter, 128 words a check): set by one host, then by 1,024 hosts one conjunction
   * each, then every host removed. The work the minimal set does is counted: a few tens of list
   * steps a filter, where the scan did the set's size (about 3.8e8 checks for one host).
   */
  @Test
  void theExistsShapeCostsAFewListStepsAFilter() {
    BloomParameters params = BloomParameters.DEFAULT;
    LocalPredicates local = new LocalPredicates(params);
    assertTrue(local.set(1, Predicate.parse(existsShape(0, 1024))));
    int filters = local.distinctFilterCount();
    // 27 filters a conjunction (an exists is one of three types); a few coincide at M = 8192.
    assertTrue(filters > 27_000 && filters <= 1024 * 27, filters + " distinct filters");
    EncodedPredicate whole = local.aggregate();
    assertEquals(new Encoder(params).encode(Predicate.parse(existsShape(0, 1024))), whole);
    long afterOne = local.coverChecks();
    assertTrue(afterOne < 64L * filters, afterOne + " checks for " + filters + " filters");

    for (int h = 0; h < 1024; h++) {
      local.set(100 + h, Predicate.parse(existsShape(h, 1)));
    }
    assertFalse(local.remove(1), "the other hosts hold every filter of host 1");
    assertEquals(whole, local.aggregate(), "the same filters, from 1,024 hosts");
    for (int h = 0; h < 1024; h++) {
      local.remove(100 + h);
    }
    assertTrue(local.aggregate().isEmpty());
    long all = local.coverChecks();
    // Every filter added twice and removed twice: a few tens of steps a filter in all.
    assertTrue(all < 64L * filters, all + " checks for 4 x " + filters + " filter changes");
  }

  @Test
  void matchFindsExactlyTheHostsWhosePredicateHolds() {
    SplittableRandom rnd = new SplittableRandom(9);
    LocalPredicates local = new LocalPredicates(PARAMS);
    Map<Integer, Predicate> model = new HashMap<>();
    for (int h = 0; h < 30; h++) {
      Predicate p = random(rnd);
      model.put(h, p);
      local.set(h, p);
    }
    for (int i = 0; i < 500; i++) {
      Message.Builder b = Message.builder();
      for (int a = 0; a < 4; a++) {
        if (rnd.nextBoolean()) {
          b.put("a" + a, (long) rnd.nextInt(4));
        }
      }
      Message m = b.build();
      TreeSet<Integer> got = new TreeSet<>();
      local.match(m, got::add);
      TreeSet<Integer> want = new TreeSet<>();
      model.forEach(
          (h, p) -> {
            if (p.matches(m)) {
              want.add(h);
            }
          });
      assertEquals(want, got, m.toString());
    }
  }

  @Test
  void settingTheSamePredicateAgainChangesNothing() {
    LocalPredicates local = new LocalPredicates(PARAMS);
    Predicate p = Predicate.parse("x = 1 && y > 2");
    assertTrue(local.set(1, p));
    assertFalse(local.set(1, p));
    assertFalse(local.set(2, p), "a second host with an equal predicate adds no filter");
    assertFalse(local.remove(1), "host 2 still holds the filter");
    assertTrue(local.remove(2));
    assertTrue(local.aggregate().isEmpty());
    assertFalse(local.remove(2));
  }
}
