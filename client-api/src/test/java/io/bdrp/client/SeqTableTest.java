package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The table of unconfirmed messages against a sorted map doing the same, step by step. */
class SeqTableTest {
  /** Checks every query of {@code t} against {@code model}. */
  private static void same(TreeMap<Long, String> model, SeqTable<String> t, long probe) {
    assertEquals(model.size(), t.size());
    assertEquals(model.isEmpty(), t.isEmpty());
    if (!model.isEmpty()) {
      assertEquals(model.firstKey(), t.first());
    }
    assertEquals(model.get(probe), t.get(probe));
    assertEquals(model.headMap(probe).size(), t.countBelow(probe));
    List<Map.Entry<Long, String>> fromModel = new ArrayList<>();
    for (Map.Entry<Long, String> e : model.tailMap(probe, true).entrySet()) {
      if (fromModel.size() == 5) {
        break;
      }
      fromModel.add(Map.entry(e.getKey(), e.getValue()));
    }
    List<Map.Entry<Long, String>> fromTable = new ArrayList<>();
    t.forEachFrom(
        probe,
        (seq, v) -> {
          fromTable.add(Map.entry(seq, v));
          return fromTable.size() < 5;
        });
    assertEquals(fromModel, fromTable, "the first values from " + probe);
  }

  @Test
  void addsInOrderAndRemovesInAnyOrderAsASortedMapWould() {
    SplittableRandom rnd = new SplittableRandom(7);
    SeqTable<String> t = new SeqTable<>(1);
    TreeMap<Long, String> model = new TreeMap<>();
    long next = 1;
    for (int step = 0; step < 20_000; step++) {
      int op = rnd.nextInt(10);
      if (op < 5) {
        String v = "m" + next;
        assertEquals(next, t.add(v));
        model.put(next++, v);
      } else if (!model.isEmpty()) {
        // Mostly the oldest (confirmations in order), sometimes any held or a number not held.
        long seq =
            op < 8
                ? model.firstKey()
                : model.firstKey() + rnd.nextLong(Math.max(1, next - model.firstKey()) + 2);
        assertEquals(model.remove(seq), t.remove(seq));
      }
      assertEquals(next, t.next());
      same(model, t, Math.max(1, next - 1 - rnd.nextLong(50)));
    }
  }

  @Test
  void aValueLeftFarBehindMovesAsideAndTheRingStaysSmall() {
    SeqTable<String> t = new SeqTable<>(1);
    TreeMap<Long, String> model = new TreeMap<>();
    t.add("stuck");
    model.put(1L, "stuck");
    long next = 2;
    // Everything after the first is answered at once: the first stays, far below the rest.
    for (int i = 0; i < 5 * SeqTable.MAX_GAP_SLOTS; i++) {
      t.add("m" + next);
      t.remove(next);
      next++;
    }
    assertTrue(
        t.slots() <= 2 * SeqTable.MAX_GAP_SLOTS,
        () -> t.slots() + " slots for a span of " + (5 * SeqTable.MAX_GAP_SLOTS));
    t.add("last");
    model.put(next, "last");
    same(model, t, 1);
    same(model, t, next);
    assertEquals("stuck", t.remove(1));
    model.remove(1L);
    same(model, t, 1);
    List<String> rest = new ArrayList<>();
    t.drainAll(rest::add);
    assertEquals(List.of("last"), rest);
    assertTrue(t.isEmpty());
    assertNull(t.get(next));
    assertEquals(next + 1, t.next());
  }
}
