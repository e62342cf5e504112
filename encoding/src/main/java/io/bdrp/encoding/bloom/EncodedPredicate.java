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
 *
 * <p>Canonical order is that of the filters as {@code long[]} bitmaps compared word by word from
 * word 0, each word unsigned ({@link Filters#compare}); {@link #compare(char[], int, int, char[],
 * int, int)} computes it on positions.
 *
 * <p><b>Held sparsely.</b> A filter sets a handful of its M bits, so each is held as the ascending
 * list of its set-bit positions, all filters' lists one after another in one {@code char[]} (M is
 * at most 8192, so a position fits in a char) with an {@code int[]} of where each starts: 2 bytes a
 * set bit plus 4 a filter ({@link #byteSize}), instead of M/8 bytes a filter. {@link #filter} and
 * {@link #filterInto} still give a filter as a dense {@code long[]} to callers that want one; the
 * codec and the index read {@link #bitCount(int)} and {@link #position(int, int)} instead.
 */
public final class EncodedPredicate {
  private static final int[] NO_STARTS = {0};
  private static final char[] NO_POSITIONS = {};

  /**
   * Sets of at most this many filters are made minimal by comparing every pair; larger ones through
   * a {@link CoverIndex}, whose per-bit lists cost a few tens of KiB to set up.
   */
  static final int PAIRWISE_MAX = 32;

  private final BloomParameters params;
  private final int count;
  private final int[] starts; // count + 1 entries: filter i is positions[starts[i] .. starts[i+1])
  private final char[] positions; // ascending within a filter, all below M
  private int wireLength; // 0 until first asked for; a racy write of the same value is harmless

  private EncodedPredicate(BloomParameters params, int count, int[] starts, char[] positions) {
    this.params = params;
    this.count = count;
    this.starts = starts;
    this.positions = positions;
  }

  /** The empty set: matches no message. */
  public static EncodedPredicate empty(BloomParameters params) {
    return new EncodedPredicate(params, 0, NO_STARTS, NO_POSITIONS);
  }

  /**
   * The minimal set of the given filters (each of {@link BloomParameters#words()} words; the arrays
   * are not kept). See {@link #ofPositions} for the cost.
   */
  public static EncodedPredicate ofFilters(BloomParameters params, Collection<long[]> filters) {
    List<char[]> sparse = new ArrayList<>(filters.size());
    for (long[] f : filters) {
      sparse.add(positionsOf(params, f));
    }
    return minimalSet(params, sparse, null);
  }

  /**
   * The minimal set of the given filters, each the ascending list of its set-bit positions (the
   * arrays are not kept and not changed).
   *
   * <p>Cost: the filters are sorted by number of bits, and each is kept unless it covers a filter
   * kept before it, which a {@link CoverIndex} answers by a counting pass over the lists of the
   * filter's bits. A filter therefore costs about its own bits times the number of kept filters
   * sharing each of them: near-linear for filters that share few bits (1,024 conjunctions of three
   * {@code exists} make 27,648 filters of 3 bits at about 30 list steps each; see {@code
   * MinimalSetTest}). The worst case of a minimal set is quadratic in general (many filters that
   * share many bits), so whoever feeds this must bound the number of filters it takes from one
   * source; the router caps filters per host.
   *
   * @throws IllegalArgumentException if a list is not ascending or has a position at or beyond M
   */
  public static EncodedPredicate ofPositions(BloomParameters params, Collection<char[]> filters) {
    List<char[]> copies = new ArrayList<>(filters.size());
    for (char[] f : filters) {
      checkPositions(params, f, 0, f.length);
      copies.add(f);
    }
    return minimalSet(params, copies, null);
  }

  /**
   * The minimal set of {@code filters} (valid position lists); adds to {@code work[0]}, when given,
   * the list steps and pairwise checks it did (for tests that bound the cost).
   */
  static EncodedPredicate minimalSet(BloomParameters params, List<char[]> filters, long[] work) {
    char[][] sorted = filters.toArray(new char[0][]);
    // f is redundant when it covers a kept filter k; then k has fewer bits than f (or as many,
    // and is equal to f). Fewest bits first, so every such k is kept before f is looked at.
    Arrays.sort(
        sorted,
        (a, b) -> {
          int c = Integer.compare(a.length, b.length);
          return c != 0 ? c : compare(a, 0, a.length, b, 0, b.length);
        });
    List<char[]> kept = new ArrayList<>();
    long steps = 0;
    if (sorted.length <= PAIRWISE_MAX) {
      for (char[] f : sorted) {
        boolean redundant = false;
        for (int i = 0; i < kept.size() && !redundant; i++) {
          steps++;
          char[] k = kept.get(i);
          redundant = isSubset(k, 0, k.length, f, 0, f.length);
        }
        if (!redundant) {
          kept.add(f);
        }
      }
    } else {
      CoverIndex<char[]> index = new CoverIndex<>(params.bits());
      for (char[] f : sorted) {
        if (!index.coversAny(f, 0, f.length)) {
          index.add(f, f);
          kept.add(f);
        }
      }
      steps += index.checks();
    }
    if (work != null) {
      work[0] += steps;
    }
    kept.sort((a, b) -> compare(a, 0, a.length, b, 0, b.length));
    int total = 0;
    for (char[] k : kept) {
      total += k.length;
    }
    Builder out = new Builder(params, kept.size(), total);
    for (char[] k : kept) {
      out.appendUnchecked(k, 0, k.length);
    }
    return out.build();
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
    int total = 0;
    for (int i = 0; i < count; i++) {
      if (tail != 0 && (flat[i * words + words - 1] >>> tail) != 0) {
        throw new IllegalArgumentException(
            "filter " + i + " has bits set beyond M = " + params.bits());
      }
      for (int w = 0; w < words; w++) {
        total += Long.bitCount(flat[i * words + w]);
      }
    }
    Builder b = new Builder(params, count, total);
    char[] f = new char[params.bits()];
    for (int i = 0; i < count; i++) {
      int n = positions(flat, i * words, words, f);
      if (!b.append(f, 0, n)) {
        throw new IllegalArgumentException(
            "filter " + i + " is not greater than the one before it");
      }
    }
    return b.build();
  }

  /**
   * Appends filters given as position lists in canonical order, checking that order as it goes, and
   * makes an {@link EncodedPredicate} of them without re-minimising (as {@link #ofSortedFilters}).
   * Used by decoders and by code that keeps its filters sorted, so that no filter is ever made
   * dense. Memory grows with the positions appended: exactly what the two expected sizes say when
   * they are right, twice as much at most while growing otherwise. Not thread-safe; one use.
   */
  public static final class Builder {
    private final BloomParameters params;
    private int[] starts;
    private char[] positions;
    private int count;
    private boolean built;

    /** A builder for about {@code filters} filters of {@code positions} set bits in all. */
    public Builder(BloomParameters params, int filters, int positions) {
      if (filters < 0 || positions < 0) {
        throw new IllegalArgumentException(
            "expected sizes must be non-negative, got " + filters + " and " + positions);
      }
      this.params = params;
      this.starts = new int[filters + 1];
      this.positions = new char[positions];
    }

    /** A builder that grows as needed. */
    public Builder(BloomParameters params) {
      this(params, 4, 16);
    }

    /**
     * Appends the filter whose set bits are {@code f[from .. to)}. Returns false, appending
     * nothing, when it is not greater than the filter appended before it in canonical order (out of
     * order, or a repeat).
     *
     * @throws IllegalArgumentException if the positions are not ascending or reach M
     */
    public boolean append(char[] f, int from, int to) {
      checkPositions(params, f, from, to);
      if (count > 0) {
        int s = starts[count - 1];
        if (compare(positions, s, starts[count], f, from, to) >= 0) {
          return false;
        }
      }
      appendUnchecked(f, from, to);
      return true;
    }

    /** Appends without checks: the caller knows the list is valid and in order. */
    void appendUnchecked(char[] f, int from, int to) {
      if (built) {
        throw new IllegalStateException("already built");
      }
      int at = starts[count];
      int n = to - from;
      if (at + n > positions.length) {
        positions = Arrays.copyOf(positions, Math.max(at + n, 2 * positions.length));
      }
      if (count + 2 > starts.length) {
        starts = Arrays.copyOf(starts, Math.max(count + 2, 2 * starts.length));
      }
      System.arraycopy(f, from, positions, at, n);
      count++;
      starts[count] = at + n;
    }

    /** Number of filters appended. */
    public int size() {
      return count;
    }

    /** The encoded predicate of the filters appended; the builder cannot be used after. */
    public EncodedPredicate build() {
      if (built) {
        throw new IllegalStateException("already built");
      }
      built = true;
      if (count == 0) {
        return empty(params);
      }
      int total = starts[count];
      int[] s = starts.length == count + 1 ? starts : Arrays.copyOf(starts, count + 1);
      char[] p = positions.length == total ? positions : Arrays.copyOf(positions, total);
      return new EncodedPredicate(params, count, s, p);
    }
  }

  /**
   * Compares two filters given as ascending position lists in canonical order: as {@link
   * Filters#compare} compares their bitmaps (word 0 first, each word unsigned). Linear in the two
   * lengths.
   */
  public static int compare(char[] a, int aFrom, int aTo, char[] b, int bFrom, int bTo) {
    int i = aFrom;
    int j = bFrom;
    while (i < aTo || j < bTo) {
      int wa = i < aTo ? a[i] >>> 6 : Integer.MAX_VALUE;
      int wb = j < bTo ? b[j] >>> 6 : Integer.MAX_VALUE;
      int w = Math.min(wa, wb);
      long x = 0;
      long y = 0;
      for (; i < aTo && a[i] >>> 6 == w; i++) {
        x |= 1L << a[i];
      }
      for (; j < bTo && b[j] >>> 6 == w; j++) {
        y |= 1L << b[j];
      }
      if (x != y) {
        return Long.compareUnsigned(x, y);
      }
    }
    return 0;
  }

  /**
   * Whether every position of {@code small} is in {@code large} (both ascending): large ⊇ small.
   */
  static boolean isSubset(char[] small, int sFrom, int sTo, char[] large, int lFrom, int lTo) {
    if (sTo - sFrom > lTo - lFrom) {
      return false;
    }
    int j = lFrom;
    for (int i = sFrom; i < sTo; i++) {
      char p = small[i];
      while (j < lTo && large[j] < p) {
        j++;
      }
      if (j == lTo || large[j] != p) {
        return false;
      }
      j++;
    }
    return true;
  }

  /** The set-bit positions of a dense filter, ascending; checks its length and unused bits. */
  static char[] positionsOf(BloomParameters params, long[] f) {
    int words = params.words();
    if (f.length != words) {
      throw new IllegalArgumentException(
          "filter has " + f.length + " words, parameters say " + words);
    }
    int tail = params.bits() & 63;
    if (tail != 0 && (f[words - 1] >>> tail) != 0) {
      throw new IllegalArgumentException("filter has bits set beyond M = " + params.bits());
    }
    char[] out = new char[Filters.bitCount(f)];
    positions(f, 0, words, out);
    return out;
  }

  /**
   * Writes the set-bit positions of {@code words} words at {@code flat[at]} to dst; their count.
   */
  private static int positions(long[] flat, int at, int words, char[] dst) {
    int n = 0;
    for (int w = 0; w < words; w++) {
      for (long word = flat[at + w]; word != 0; word &= word - 1) {
        dst[n++] = (char) (w * 64 + Long.numberOfTrailingZeros(word));
      }
    }
    return n;
  }

  private static void checkPositions(BloomParameters params, char[] f, int from, int to) {
    int prev = -1;
    for (int i = from; i < to; i++) {
      int p = f[i];
      if (p <= prev) {
        throw new IllegalArgumentException("positions are not ascending at " + p);
      }
      if (p >= params.bits()) {
        throw new IllegalArgumentException(
            "position " + p + " is at or beyond M = " + params.bits());
      }
      prev = p;
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

  /** Number of set bits of the i-th filter. */
  public int bitCount(int i) {
    return starts[i + 1] - starts[i];
  }

  /** The j-th lowest set bit of the i-th filter (0 &le; j &lt; {@link #bitCount(int)}). */
  public int position(int i, int j) {
    if (j < 0 || j >= bitCount(i)) {
      throw new IndexOutOfBoundsException("filter " + i + " has no position " + j);
    }
    return positions[starts[i] + j];
  }

  /** The set-bit positions of the i-th filter, ascending (a copy). */
  public char[] positions(int i) {
    return Arrays.copyOfRange(positions, starts[i], starts[i + 1]);
  }

  /** A copy of the i-th filter as a dense bitmap of {@link BloomParameters#words()} words. */
  public long[] filter(int i) {
    long[] f = params.newFilter();
    filterInto(i, f);
    return f;
  }

  /**
   * Writes the i-th filter as a dense bitmap into the first {@link BloomParameters#words()} words
   * of {@code dst}, clearing the bits it does not set.
   */
  public void filterInto(int i, long[] dst) {
    Arrays.fill(dst, 0, params.words(), 0L);
    for (int j = starts[i], end = starts[i + 1]; j < end; j++) {
      int p = positions[j];
      dst[p >>> 6] |= 1L << p;
    }
  }

  /** The filters as dense bitmaps (copies). */
  public List<long[]> filters() {
    List<long[]> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(filter(i));
    }
    return out;
  }

  /**
   * True when the message filter covers some filter of the set. Linear in the set bits of the set's
   * filters; allocates nothing.
   */
  public boolean matches(long[] messageFilter) {
    for (int i = 0; i < count; i++) {
      int j = starts[i];
      int end = starts[i + 1];
      while (j < end && (messageFilter[positions[j] >>> 6] & (1L << positions[j])) != 0) {
        j++;
      }
      if (j == end) {
        return true;
      }
    }
    return false;
  }

  /** The minimal set of the union of both sets (for aggregating predicates). */
  public EncodedPredicate union(EncodedPredicate other) {
    sameParameters(other);
    List<char[]> all = new ArrayList<>(count + other.count);
    for (int i = 0; i < count; i++) {
      all.add(positions(i));
    }
    for (int i = 0; i < other.count; i++) {
      all.add(other.positions(i));
    }
    return minimalSet(params, all, null);
  }

  private int compareFilters(int i, EncodedPredicate o, int j) {
    return compare(positions, starts[i], starts[i + 1], o.positions, o.starts[j], o.starts[j + 1]);
  }

  private void appendFilter(Builder b, int i) {
    b.appendUnchecked(positions, starts[i], starts[i + 1]);
  }

  /**
   * The filters of this set that are not in {@code other}, in order: {@code old.minus(new)} are the
   * filters a change removed, {@code new.minus(old)} those it added. Linear in both sizes.
   */
  public EncodedPredicate minus(EncodedPredicate other) {
    sameParameters(other);
    Builder out = new Builder(params, count, positions.length);
    int j = 0;
    for (int i = 0; i < count; i++) {
      int c = 1;
      while (j < other.count && (c = compareFilters(i, other, j)) > 0) {
        j++;
      }
      if (j == other.count || c != 0) {
        appendFilter(out, i);
      }
    }
    return out.build();
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
    Builder out =
        new Builder(params, count + added.count, positions.length + added.positions.length);
    int r = 0;
    int a = 0;
    for (int i = 0; i <= count; i++) {
      // Added filters that come before filter i (or all that are left, after the last).
      while (a < added.count && (i == count || added.compareFilters(a, this, i) < 0)) {
        added.appendFilter(out, a);
        a++;
      }
      if (i == count) {
        break;
      }
      if (a < added.count && added.compareFilters(a, this, i) == 0) {
        return null; // added, but already there
      }
      if (r < removed.count) {
        int c = removed.compareFilters(r, this, i);
        if (c == 0) {
          r++;
          continue;
        }
        if (c < 0) {
          return null; // removed, but not there
        }
      }
      appendFilter(out, i);
    }
    if (r < removed.count) {
      return null;
    }
    return out.build();
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
   * budget check, and measuring each filter again every time would cost time per filter. {@code f}
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

  /**
   * Number of bytes the filters take as held: 2 a set bit and 4 a filter (plus 4), the payload of
   * the two arrays (their object headers, 16 bytes each, are not counted).
   */
  public int byteSize() {
    return positions.length * Character.BYTES + starts.length * Integer.BYTES;
  }

  /** The bytes the filters would take as dense bitmaps, M/8 each (for comparison). */
  public long bitmapByteSize() {
    return (long) count * params.words() * Long.BYTES;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EncodedPredicate e
        && params.equals(e.params)
        && count == e.count
        && Arrays.equals(starts, e.starts)
        && Arrays.equals(positions, e.positions);
  }

  @Override
  public int hashCode() {
    return (params.hashCode() * 31 + Arrays.hashCode(starts)) * 31 + Arrays.hashCode(positions);
  }

  @Override
  public String toString() {
    return "EncodedPredicate[" + params + ", " + count + " filters]";
  }
}
