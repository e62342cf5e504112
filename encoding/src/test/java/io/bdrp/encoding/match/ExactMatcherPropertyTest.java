package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The matcher agrees exactly with the reference evaluator {@link Predicate#matches} on random
 * workloads: random hosts and predicates, interleaved puts, replacements and removals, and after
 * every batch of changes random messages, half of them built to satisfy some host's predicate.
 */
class ExactMatcherPropertyTest {

  /** Host ids: mostly a small dense range (so that hosts are often replaced), some large ones. */
  private static int hostId(Random random) {
    return random.nextInt(8) == 0 ? 1_000_000 + random.nextInt(4) : random.nextInt(12);
  }

  private static Predicate predicate(RandomModel r) {
    Random random = r.random();
    return switch (random.nextInt(10)) {
      case 0 -> Predicate.NONE;
      case 1, 2 -> r.predicate(1, 2);
      case 3 -> r.predicate(8, 6);
      default -> r.predicate(4, 4);
    };
  }

  private static int[] naive(Map<Integer, Predicate> model, Message m) {
    return model.entrySet().stream()
        .filter(e -> e.getValue().matches(m))
        .mapToInt(Map.Entry::getKey)
        .toArray(); // a TreeMap: already sorted
  }

  @Property(tries = 2000)
  void matcherAgreesWithTheReferenceEvaluator(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Random random = r.random();
    // Half the tries without interval tables: the per-operator searches a name falls back to
    // when its table would be too large.
    ExactMatcher matcher = new ExactMatcher((seed & 1) == 0);
    TreeMap<Integer, Predicate> model = new TreeMap<>();
    for (int round = 0; round < 6; round++) {
      int changes = 1 + random.nextInt(6);
      for (int i = 0; i < changes; i++) {
        int host =
            random.nextInt(5) == 0 && !model.isEmpty() ? anyHost(model, random) : hostId(random);
        if (random.nextInt(5) == 0) {
          assertEquals(model.remove(host) != null, matcher.remove(host));
        } else {
          Predicate p = predicate(r);
          matcher.put(host, p);
          if (p.isEmpty()) {
            model.remove(host);
          } else {
            model.put(host, p);
          }
        }
      }
      checkCounts(matcher, model);
      List<Predicate> live = new ArrayList<>(model.values());
      for (int i = 0; i < 25; i++) {
        Message m =
            i % 2 == 0 || live.isEmpty()
                ? r.message()
                : r.messageNear(live.get(random.nextInt(live.size())));
        int[] expected = naive(model, m);
        assertArrayEquals(expected, matcher.match(m), () -> model + " on " + m);
        List<Integer> viaSink = new ArrayList<>();
        matcher.match(m, viaSink::add);
        assertEquals(expected.length, viaSink.size(), () -> "sink saw " + viaSink + " on " + m);
        assertEquals(expected.length, new HashSet<>(viaSink).size(), "a host reported twice");
      }
    }
  }

  private static int anyHost(TreeMap<Integer, Predicate> model, Random random) {
    int skip = random.nextInt(model.size());
    for (int h : model.keySet()) {
      if (skip-- == 0) {
        return h;
      }
    }
    throw new AssertionError("unreachable: skip is below the model size");
  }

  private static void checkCounts(ExactMatcher matcher, Map<Integer, Predicate> model) {
    assertEquals(model.size(), matcher.hostCount());
    int conjunctions = 0;
    Set<Constraint> distinct = new HashSet<>();
    for (Map.Entry<Integer, Predicate> e : model.entrySet()) {
      assertEquals(e.getValue(), matcher.predicate(e.getKey()));
      conjunctions += e.getValue().size();
      for (Conjunction c : e.getValue().conjunctions()) {
        distinct.addAll(c.constraints());
      }
    }
    assertEquals(conjunctions, matcher.conjunctionCount());
    assertEquals(distinct.size(), matcher.constraintCount());
  }
}
