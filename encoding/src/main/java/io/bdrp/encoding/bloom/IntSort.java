package io.bdrp.encoding.bloom;

/**
 * A stable sort of an {@code int[]} by a comparator over its values, without boxing: a merge sort
 * (insertion sort below a few elements) with one scratch array of the same length. What {@link
 * java.util.Arrays#sort(Object[], java.util.Comparator)} does for {@code Integer[]}, without an
 * object per element.
 */
final class IntSort {
  /** Compares two ints. */
  @FunctionalInterface
  interface IntComparator {
    int compare(int x, int y);
  }

  private static final int INSERTION = 16;

  private IntSort() {}

  /** Sorts {@code a} by {@code c}; equal elements keep their order. */
  static void sort(int[] a, IntComparator c) {
    if (a.length < 2) {
      return;
    }
    int[] scratch = a.clone();
    sort(scratch, a, 0, a.length, c);
  }

  /** Sorts {@code src[lo, hi)} into {@code dst[lo, hi)}; both hold the same elements on entry. */
  private static void sort(int[] src, int[] dst, int lo, int hi, IntComparator c) {
    if (hi - lo <= INSERTION) {
      for (int i = lo + 1; i < hi; i++) {
        int v = dst[i];
        int j = i - 1;
        for (; j >= lo && c.compare(dst[j], v) > 0; j--) {
          dst[j + 1] = dst[j];
        }
        dst[j + 1] = v;
      }
      return;
    }
    int mid = (lo + hi) >>> 1;
    sort(dst, src, lo, mid, c); // the halves sorted into src...
    sort(dst, src, mid, hi, c);
    if (c.compare(src[mid - 1], src[mid]) <= 0) { // ...already in order
      System.arraycopy(src, lo, dst, lo, hi - lo);
      return;
    }
    for (int i = lo, p = lo, q = mid; i < hi; i++) { // ...and merged into dst
      dst[i] = q >= hi || (p < mid && c.compare(src[p], src[q]) <= 0) ? src[p++] : src[q++];
    }
  }
}
