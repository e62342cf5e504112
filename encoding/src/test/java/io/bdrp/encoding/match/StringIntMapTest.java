package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

class StringIntMapTest {

  /** Random puts and removes over a small key space agree with java.util.HashMap at every step. */
  @Property(tries = 500)
  void behavesLikeAHashMap(@ForAll long seed) {
    Random r = new Random(seed);
    StringIntMap map = new StringIntMap();
    Map<String, Integer> reference = new HashMap<>();
    int keySpace = 1 + r.nextInt(60);
    for (int step = 0; step < 400; step++) {
      // "Aa" and "BB" have equal hash codes: keys built from them collide on purpose.
      String key = (r.nextBoolean() ? "Aa" : "BB") + r.nextInt(keySpace);
      switch (r.nextInt(3)) {
        case 0 -> {
          int v = r.nextInt(1000);
          map.put(key, v);
          reference.put(key, v);
        }
        case 1 -> {
          map.remove(key);
          reference.remove(key);
        }
        default -> {}
      }
      assertEquals(reference.size(), map.size());
      for (int k = 0; k < keySpace; k++) {
        for (String prefix : new String[] {"Aa", "BB"}) {
          String probe = prefix + k;
          assertEquals(reference.getOrDefault(probe, -1), map.get(probe), probe);
        }
      }
    }
  }
}
