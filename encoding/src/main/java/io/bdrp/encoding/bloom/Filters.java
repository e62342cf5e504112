package io.bdrp.encoding.bloom;

import java.util.Arrays;

/**
 * Operations on Bloom filters held as dense {@code long[]} bitmaps (message filters; predicate
 * filters are held as positions, {@link EncodedPredicate}). Stateless and thread-safe.
 */
public final class Filters {
  private Filters() {}

  /**
   * True when every bit of {@code small} is set in {@code large}: the paper's B_large ⊇ B_small.
   * Word by word, {@code (large & small) == small}.
   */
  public static boolean covers(long[] large, long[] small) {
    for (int i = 0; i < small.length; i++) {
      if ((large[i] & small[i]) != small[i]) {
        return false;
      }
    }
    return true;
  }

  /** Number of set bits. */
  public static int bitCount(long[] f) {
    int n = 0;
    for (long w : f) {
      n += Long.bitCount(w);
    }
    return n;
  }

  /** Lexicographic order of two filters of equal length, words compared unsigned. */
  public static int compare(long[] a, long[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /** The filter as hexadecimal, most significant word first. */
  public static String toHex(long[] f) {
    StringBuilder sb = new StringBuilder(f.length * 16);
    for (int i = f.length - 1; i >= 0; i--) {
      sb.append(String.format("%016x", f[i]));
    }
    return sb.toString();
  }
}
