package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The index's sort of ints by a comparator orders as a stable sort of boxed ints does. */
class IntSortTest {
  @Test
  void sortsStablyAsArraysSortDoesForEveryLength() {
    Random rnd = new Random(7);
    for (int n = 0; n < 300; n++) {
      int[] key = new int[n];
      for (int i = 0; i < n; i++) {
        key[i] = rnd.nextInt(1 + n / 4); // many equal keys: stability shows
      }
      int[] a = new int[n];
      Integer[] boxed = new Integer[n];
      for (int i = 0; i < n; i++) {
        a[i] = i;
        boxed[i] = i;
      }
      IntSort.sort(a, (x, y) -> Integer.compare(key[x], key[y]));
      Arrays.sort(boxed, (x, y) -> Integer.compare(key[x], key[y]));
      assertArrayEquals(Arrays.stream(boxed).mapToInt(Integer::intValue).toArray(), a, "n=" + n);
    }
  }
}
