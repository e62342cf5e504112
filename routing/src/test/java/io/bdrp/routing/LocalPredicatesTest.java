package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import java.util.ArrayList;
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
