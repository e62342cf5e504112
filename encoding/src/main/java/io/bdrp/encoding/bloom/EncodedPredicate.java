package io.bdrp.encoding.bloom;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * An encoded predicate: a set of Bloom filters, one per conjunction (paper §3). A message filter
 * B_m matches when it covers some filter B_p of the set.
 *
 * <p>Always minimal and in canonical order: a filter that covers another filter of the set is
 * redundant (every message that covers it covers the smaller one too) and is dropped, as are
 * duplicates; the rest are sorted. Two encoded predicates that match the same message filters by
 * the same minimal set are {@link #equals equal}, which is how a router decides whether its
 * aggregate changed and must be re-advertised. Immutable and thread-safe.
 */
public final class EncodedPredicate {
  private final BloomParameters params;
  private final long[] flat; // filters one after another, params.words() each
  private final int count;
  private int wireLength; // 0 until first asked for; a racy write of the same value is harmless

  private EncodedPredicate(BloomParameters params, long[] flat, int count) {
    this.params = params;
    this.flat = flat;
    this.count = count;
  }

  /** The empty set: matches no message. */
  public static EncodedPredicate empty(BloomParameters params) {
    return new EncodedPredicate(params, new long[0], 0);
  }

  /**
   * The minimal set of the given filters (each of {@link BloomParameters#words()} words; the arrays
   * are copied).
   */
  public static EncodedPredicate ofFilters(BloomParameters params, Collection<long[]> filters) {
    int words = params.words();
    long[][] sorted = new long[filters.size()][];
    int n = 0;
    for (long[] f : filters) {
      if (f.length != words) {
        throw new IllegalArgumentException(
            "filter has " + f.length + " words, parameters say " + words);
      }
      checkUnusedBits(params, f);
      sorted[n++] = f.clone();
    }
    // f is redundant when it covers a kept filter k; then k has fewer bits than f (or as many,
    // and is equal to f). Fewest bits first, so every such k is kept before f is looked at.
    Arrays.sort(
        sorted,
        (a, b) -> {
          int c = Integer.compare(Filters.bitCount(a), Filters.bitCount(b));
          return c != 0 ? c : Filters.compare(a, b);
        });
    List<long[]> kept = new ArrayList<>(n);
    for (long[] f : sorted) {
      boolean redundant = false;
      for (long[] k : kept) {
        if (Filters.covers(f, k)) {
          redundant = true;
          break;
        }
      }
      if (!redundant) {
        kept.add(f);
      }
    }
    kept.sort(Filters::compare);
    long[] flat = new long[kept.size() * words];
    for (int i = 0; i < kept.size(); i++) {
      System.arraycopy(kept.get(i), 0, flat, i * words, words);
    }
    return new EncodedPredicate(params, flat, kept.size());
  }

  /**
   * An encoded predicate from filters that are already distinct and in canonical (ascending
   * unsigned) order, such as those received from another router. Order and bounds are checked in
   * linear time; minimality is not checked (a redundant filter changes no match, only the size), so
   * that a peer cannot make this router do quadratic work.
   *
   * @param flat the filters one after another, {@link BloomParameters#words()} words each
   * @throws IllegalArgumentException if the filters are out of order, repeated, or have bits beyond
   *     M; the message gives the index of the first bad filter
   */
  public static EncodedPredicate ofSortedFilters(BloomParameters params, long[] flat) {
    int words = params.words();
    if (flat.length % words != 0) {
      throw new IllegalArgumentException(
          "filter data of "
              + flat.length
              + " words is not a whole number of "
              + words
              + "-word filters");
    }
    int count = flat.length / words;
    int tail = params.bits() & 63;
    for (int i = 0; i < count; i++) {
      if (tail != 0 && (flat[i * words + words - 1] >>> tail) != 0) {
        throw new IllegalArgumentException(
            "filter " + i + " has bits set beyond M = " + params.bits());
      }
      if (i > 0
          && Arrays.compareUnsigned(
                  flat, (i - 1) * words, i * words, flat, i * words, (i + 1) * words)
              >= 0) {
        throw new IllegalArgumentException(
            "filter " + i + " is not greater than the one before it");
      }
    }
    return new EncodedPredicate(params, flat.clone(), count);
  }

  private static void checkUnusedBits(BloomParameters params, long[] f) {
    int tail = params.bits() & 63;
    if (tail != 0 && (f[f.length - 1] >>> tail) != 0) {
      throw new IllegalArgumentException("filter has bits set beyond M = " + params.bits());
    }
  }

  public BloomParameters parameters() {
    return params;
  }

  /** Number of filters. */
  public int size() {
    return count;
  }

  public boolean isEmpty() {
    return count == 0;
  }

  /** A copy of the i-th filter. */
  public long[] filter(int i) {
    int w = params.words();
    return Arrays.copyOfRange(flat, i * w, (i + 1) * w);
  }

  /** Copies the i-th filter into {@code dst} (of {@link BloomParameters#words()} words). */
  public void filterInto(int i, long[] dst) {
    int w = params.words();
    System.arraycopy(flat, i * w, dst, 0, w);
  }

  /** The filters (copies). */
  public List<long[]> filters() {
    List<long[]> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(filter(i));
    }
    return out;
  }

  /** True when the message filter covers some filter of the set. Linear in the set size. */
  public boolean matches(long[] messageFilter) {
    int w = params.words();
    for (int i = 0; i < count; i++) {
      if (Filters.covers(messageFilter, flat, i * w, w)) {
        return true;
      }
    }
    return false;
  }

  /** The minimal set of the union of both sets (for aggregating predicates). */
  public EncodedPredicate union(EncodedPredicate other) {
    if (!params.equals(other.params)) {
      throw new IllegalArgumentException(
          "cannot combine filters of " + params + " with filters of " + other.params);
    }
    List<long[]> all = filters();
    all.addAll(other.filters());
    return ofFilters(params, all);
  }

  /**
   * The filters of this set that are not in {@code other}, in order: {@code old.minus(new)} are the
   * filters a change removed, {@code new.minus(old)} those it added. Linear in both sizes.
   */
  public EncodedPredicate minus(EncodedPredicate other) {
    sameParameters(other);
    int w = params.words();
    long[] out = new long[flat.length];
    int n = 0;
    int j = 0;
    for (int i = 0; i < count; i++) {
      int c = 1;
      while (j < other.count
          && (c = Arrays.compareUnsigned(flat, i * w, (i + 1) * w, other.flat, j * w, (j + 1) * w))
              > 0) {
        j++;
      }
      if (j == other.count || c != 0) {
        System.arraycopy(flat, i * w, out, n * w, w);
        n++;
      }
    }
    return new EncodedPredicate(params, Arrays.copyOf(out, n * w), n);
  }

  /**
   * This set without {@code removed} and with {@code added}: the version a change described by
   * ({@code removed}, {@code added}) makes of this one. Null when the change does not fit this set,
   * that is when a removed filter is not in it or an added one already is (the change was made
   * against another version). Linear in the three sizes.
   */
  public EncodedPredicate apply(EncodedPredicate removed, EncodedPredicate added) {
    sameParameters(removed);
    sameParameters(added);
    int w = params.words();
    long[] out = new long[(count + added.count) * w];
    int n = 0;
    int r = 0;
    int a = 0;
    for (int i = 0; i <= count; i++) {
      // Added filters that come before filter i (or all that are left, after the last).
      while (a < added.count
          && (i == count
              || Arrays.compareUnsigned(added.flat, a * w, (a + 1) * w, flat, i * w, (i + 1) * w)
                  < 0)) {
        System.arraycopy(added.flat, a * w, out, n * w, w);
        n++;
        a++;
      }
      if (i == count) {
        break;
      }
      if (a < added.count
          && Arrays.equals(added.flat, a * w, (a + 1) * w, flat, i * w, (i + 1) * w)) {
        return null; // added, but already there
      }
      if (r < removed.count
          && Arrays.equals(removed.flat, r * w, (r + 1) * w, flat, i * w, (i + 1) * w)) {
        r++;
        continue;
      }
      if (r < removed.count
          && Arrays.compareUnsigned(removed.flat, r * w, (r + 1) * w, flat, i * w, (i + 1) * w)
              < 0) {
        return null; // removed, but not there
      }
      System.arraycopy(flat, i * w, out, n * w, w);
      n++;
    }
    if (r < removed.count) {
      return null;
    }
    return new EncodedPredicate(params, Arrays.copyOf(out, n * w), n);
  }

  private void sameParameters(EncodedPredicate other) {
    if (!params.equals(other.params)) {
      throw new IllegalArgumentException(
          "cannot combine filters of " + params + " with filters of " + other.params);
    }
  }

  /**
   * The predicate's length in a wire form, computed by {@code f} the first time and remembered (the
   * predicate is immutable): an advertisement is counted once per link it crosses and per frame
   * budget check, and measuring each filter again every time would cost O(M) per filter. {@code f}
   * must return a positive value and the same one for every call.
   */
  public int wireLength(ToIntFunction<EncodedPredicate> f) {
    int n = wireLength;
    if (n == 0) {
      n = f.applyAsInt(this);
      wireLength = n;
    }
    return n;
  }

  /** Number of bytes the filters take. */
  public int byteSize() {
    return flat.length * Long.BYTES;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EncodedPredicate e
        && params.equals(e.params)
        && count == e.count
        && Arrays.equals(flat, e.flat);
  }

  @Override
  public int hashCode() {
    return params.hashCode() * 31 + Arrays.hashCode(flat);
  }

  @Override
  public String toString() {
    return "EncodedPredicate[" + params + ", " + count + " filters]";
  }
}
