package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.routing.PredicateTable.OriginTimes;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * PREDICATES' times by origin: open addressing while few origins have one, an array by origin while
 * many do (a cold start's origins without a route), the same answers either way.
 */
class OriginTimesTest {
  @Test
  void turnsDenseWhenMostOriginsHaveATimeAndBackWhenFewDo() {
    OriginTimes t = new OriginTimes(256);
    for (int o = 0; o < 200; o++) {
      t.putIfAbsent(o, 1_000 + o);
    }
    assertTrue(t.isDense(), "200 of 256 origins");
    assertEquals(200, t.size());
    t.putIfAbsent(5, 99_999);
    assertEquals(1_005, t.get(5), "putIfAbsent keeps the first time");
    t.put(5, 2_000);
    assertEquals(2_000, t.get(5));
    assertEquals(OriginTimes.NONE, t.get(200));
    assertEquals(OriginTimes.NONE, t.get(-1));
    assertEquals(OriginTimes.NONE, t.get(10_000));
    for (int o = 0; o < 195; o++) {
      t.remove(o);
    }
    assertFalse(t.isDense(), "5 of 256");
    assertEquals(5, t.size());
    for (int o = 195; o < 200; o++) {
      assertEquals(1_000 + o, t.get(o));
    }
    for (int o = 195; o < 200; o++) {
      t.remove(o);
    }
    assertEquals(0, t.size());
    assertEquals(OriginTimes.NONE, t.get(199));
  }

  @Test
  void aTimeOrOriginTheArrayCannotHoldTurnsItBack() {
    OriginTimes t = new OriginTimes(64);
    for (int o = 0; o < 40; o++) {
      t.put(o, o);
    }
    assertTrue(t.isDense());
    t.put(3, Long.MAX_VALUE - 7); // beyond an int's offset from the others
    assertFalse(t.isDense());
    assertEquals(Long.MAX_VALUE - 7, t.get(3));
    assertEquals(39, t.get(39));
    t.remove(3);
    t.put(40, 40);
    t.put(41, 41); // the table doubles here, and may turn dense again
    t.put(100, 7); // an origin beyond maxRouters (a refused number)
    assertFalse(t.isDense());
    assertEquals(7, t.get(100));
    assertEquals(41, t.get(41));
    assertEquals(42, t.size());
  }

  /** Random puts and removes against a map, with and without the array. */
  @Test
  void answersAsAMapWould() {
    for (int maxRouters : new int[] {0, 64, 1_000}) {
      SplittableRandom rnd = new SplittableRandom(maxRouters + 1);
      OriginTimes t = new OriginTimes(maxRouters);
      Map<Integer, Long> m = new HashMap<>();
      int range = Math.max(64, maxRouters);
      boolean sawDense = false;
      for (int step = 0; step < 50_000; step++) {
        int o = rnd.nextInt(range);
        // Phases: mostly puts, then mostly removes, so the table crosses both thresholds.
        boolean put = (step / 5_000) % 2 == 0 ? rnd.nextInt(10) < 9 : rnd.nextInt(10) < 1;
        if (put) {
          long time = 1_000_000L + rnd.nextInt(1_000_000);
          t.put(o, time);
          m.put(o, time);
        } else {
          t.remove(o);
          m.remove(o);
        }
        sawDense |= t.isDense();
        assertEquals(m.size(), t.size(), "size at step " + step);
        int q = rnd.nextInt(range);
        assertEquals(m.getOrDefault(q, OriginTimes.NONE), t.get(q), "origin " + q);
      }
      assertEquals(maxRouters > 0, sawDense, "maxRouters " + maxRouters);
    }
  }
}
