package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link CoverIndex} answers as a scan over its members does while members come and go: its lists
 * by bit live in a table that grows, keeps the keys of emptied lists and is rebuilt without them.
 */
class CoverIndexTest {
  private static final int BITS = 8192;

  /** Ascending distinct positions, {@code k} of them, from {@code pool} positions. */
  private static char[] filter(SplittableRandom rnd, int k, int pool) {
    TreeSet<Integer> s = new TreeSet<>();
    while (s.size() < k) {
      s.add(rnd.nextInt(pool) * (BITS / pool));
    }
    char[] f = new char[k];
    int i = 0;
    for (int b : s) {
      f[i++] = (char) b;
    }
    return f;
  }

  private static boolean subset(char[] small, char[] big) {
    return EncodedPredicate.isSubset(small, 0, small.length, big, 0, big.length);
  }

  @Test
  void answersAsAScanOverTheMembersWhileMembersComeAndGo() {
    SplittableRandom rnd = new SplittableRandom(7);
    CoverIndex<char[]> index = new CoverIndex<>(BITS);
    Map<Integer, char[]> members = new HashMap<>();
    for (int step = 0; step < 20_000; step++) {
      // Phases of growth and of shrinking, so that the table grows, empties lists and is rebuilt;
      // positions from a pool that changes with the phase, so that old keys stop being used.
      boolean growing = (step / 2_000) % 2 == 0;
      int pool = 64 << ((step / 4_000) % 4);
      if (!members.isEmpty() && (!growing || rnd.nextInt(4) == 0)) {
        int id = new ArrayList<>(members.keySet()).get(rnd.nextInt(members.size()));
        index.remove(id);
        members.remove(id);
      } else {
        char[] f = filter(rnd, rnd.nextInt(6), pool);
        members.put(index.add(f, f), f);
      }
      char[] q = filter(rnd, 1 + rnd.nextInt(12), pool);
      boolean covers = members.values().stream().anyMatch(m -> subset(m, q));
      assertEquals(covers, index.coversAny(q, 0, q.length), "coversAny at step " + step);
      List<char[]> found = new ArrayList<>();
      index.supersetsOf(q, 0, q.length, found);
      long supersets = members.values().stream().filter(m -> subset(q, m)).count();
      assertEquals(supersets, found.size(), "supersetsOf at step " + step);
      for (char[] m : found) {
        assertTrue(subset(q, m), "a member found that does not cover the query");
      }
      assertEquals(members.size(), index.size());
    }
  }
}
