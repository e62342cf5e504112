package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * The categorisation invariant, checked on the categories themselves rather than through Bloom
 * filters (where a saturated filter would hide a mistake): for both schemes, when a message
 * satisfies a conjunction, the message's categories include every category of one of the
 * conjunction's alternatives. Messages are built to sit on and around the operands, where a range
 * cover or a prefix category would go wrong first.
 */
class CategoryInvariantTest {
  private static final long[] EDGES = {
    0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 37, 63, 64, 100, 1L << 40, Long.MAX_VALUE, Long.MIN_VALUE
  };

  @Property(tries = 3000)
  void aSatisfiedConjunctionHasAnAlternativeWithinTheMessagesCategories(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Random random = r.random();
    Predicate p = r.predicate(3, 4);
    for (CategoryScheme scheme : CategoryScheme.values()) {
      Encoder enc = new Encoder(BloomParameters.DEFAULT.withCategories(scheme));
      for (int i = 0; i < 20; i++) {
        Message m = i % 2 == 0 ? r.messageNear(p) : nudged(r.messageNear(p), p, random);
        Set<Long> mine = new HashSet<>();
        enc.categories(m, mine::add);
        for (Conjunction c : p.conjunctions()) {
          if (c.matches(m)) {
            List<long[]> alternatives = enc.categories(c);
            assertTrue(
                alternatives.stream().anyMatch(a -> containsAll(mine, a)),
                () -> scheme + ": " + c + " on " + m);
          }
        }
      }
    }
  }

  /** The message with each numeric attribute named by a range constraint moved next to a bound. */
  private static Message nudged(Message m, Predicate p, Random random) {
    if (p.isEmpty()) {
      return m;
    }
    Conjunction c = p.get(random.nextInt(p.size()));
    Message.Builder b = Message.builder();
    List<String> done = new ArrayList<>();
    for (Constraint k : c.constraints()) {
      Value v = k.value();
      if (v == null || done.contains(k.name())) {
        continue;
      }
      done.add(k.name());
      if (v.type() == ValueType.INTEGER || v.type() == ValueType.DOUBLE) {
        double d = v.toDouble();
        b.put(
            k.name(),
            switch (random.nextInt(6)) {
              case 0 -> Value.of(d - 0.5);
              case 1 -> Value.of(d + 0.5);
              case 2 -> Value.of(v.type() == ValueType.INTEGER ? v.asLong() - 1 : d - 1);
              case 3 -> Value.of(v.type() == ValueType.INTEGER ? v.asLong() + 1 : d + 1);
              case 4 -> Value.of(EDGES[random.nextInt(EDGES.length)]);
              default -> Value.of(-(double) EDGES[random.nextInt(EDGES.length)]);
            });
      } else if (v.type() == ValueType.STRING && k.op() == Op.PREFIX) {
        b.put(k.name(), v.asString() + "\uD83D\uDE00");
      } else {
        b.put(k.name(), v);
      }
    }
    for (int i = 0; i < m.size(); i++) {
      if (!done.contains(m.name(i))) {
        b.put(m.name(i), m.value(i));
      }
    }
    return b.build();
  }

  private static boolean containsAll(Set<Long> mine, long[] alternative) {
    for (long c : alternative) {
      if (!mine.contains(c)) {
        return false;
      }
    }
    return true;
  }

  @Test
  void cellsFollowTheOrderOfNumbers() {
    long prev = Long.MIN_VALUE;
    int prevCell = Categories.cell(prev);
    assertEquals(8, prevCell);
    assertEquals(503, Categories.cell(Long.MAX_VALUE));
    assertEquals(255, Categories.cell(-1));
    assertEquals(256, Categories.cell(0));
    assertEquals(Categories.cell(37), Categories.cell(32)); // [32, 40) is one cell
    assertEquals(Categories.cell(40), Categories.cell(32) + 1);
    assertEquals(Categories.cell(2), Categories.cell(2.999));
    assertEquals(Categories.cell(-1), Categories.cell(-0.5));
    assertEquals(Categories.cell(Long.MAX_VALUE), Categories.cell(1e300));
    assertEquals(Categories.cell(Long.MIN_VALUE), Categories.cell(-1e300));
    Random random = new Random(5);
    for (int i = 0; i < 100_000; i++) {
      long a = random.nextInt(3) == 0 ? random.nextInt(2000) - 1000 : random.nextLong();
      long b = random.nextInt(3) == 0 ? a + random.nextInt(5) : random.nextLong();
      if (a <= b) {
        assertTrue(Categories.cell(a) <= Categories.cell(b), a + " " + b);
      } else {
        assertTrue(Categories.cell(a) >= Categories.cell(b), a + " " + b);
      }
    }
  }

  @Test
  void aRangeIsCoveredByAlignedBlocks() {
    // x < 37 over cells [0, cell(36)]: negatives (one level-8 block), [0, 32) (level 4) and the
    // cell of [32, 40) (level 0).
    int high = Categories.cell(36);
    int[][] blocks = Encoder.cover(0, high, 8);
    assertEquals(3, blocks.length);
    assertCovers(blocks, 0, high);
    // Fewer blocks allowed: wider ones, still covering.
    for (int max = 1; max <= 8; max++) {
      int[][] wider = Encoder.cover(Categories.cell(37), Categories.CELLS - 1, max);
      assertTrue(wider.length <= max);
      if (wider.length > 0) {
        assertCovers(wider, Categories.cell(37), Categories.CELLS - 1);
      }
    }
    // A cover of every cell says nothing: none.
    assertEquals(0, Encoder.cover(0, Categories.CELLS - 1, 8).length);
  }

  private static void assertCovers(int[][] blocks, int low, int high) {
    for (int c = low; c <= high; c++) {
      int cell = c;
      boolean in = false;
      for (int[] b : blocks) {
        in |= (cell >>> b[0]) == b[1];
      }
      assertTrue(in, "cell " + c + " not covered");
    }
  }
}
