package io.bdrp.encoding.bloom;

import java.util.Arrays;
import java.util.List;

/**
 * A set of Bloom filters, each the ascending list of its set-bit positions, indexed by bit: for
 * every bit position, the list of members that set it. It answers the two questions that keep a set
 * minimal without looking at every member:
 *
 * <ul>
 *   <li>{@link #coversAny}: does a filter f cover some member (is a member a subset of f)? One
 *       counting pass over the lists of f's bits; a member counted as often as it has bits is a
 *       subset. Cost: the summed length of those lists.
 *   <li>{@link #supersetsOf}: which members cover f? Only members in the list of f's rarest bit
 *       can, and each of those is checked. Cost: that list's length times the bits compared.
 * </ul>
 *
 * <p>The empty filter (it matches every message) is a subset of every filter and covers only
 * filters that are empty too; members that are empty are kept apart from the lists.
 *
 * <p>Typical cost per query is a filter's few bits times short lists. The worst case stays
 * quadratic over a sequence of queries, as it is for minimal sets in general: members that all
 * share the bits of the queries make every list as long as the set. Whoever feeds an index must
 * therefore bound how many filters one source may put in it (the router caps filters per host).
 *
 * <p>Add and remove cost a member's bits (removal is constant time per list, through each member's
 * slot in each of its lists). Members are given ids, reused after removal. Memory: the lists are
 * found by bit in a small open-addressing table, about 12 bytes per bit that some member sets,
 * plus, per member, 8 bytes a set bit; nothing per unused bit position (a table by position cost 64
 * KiB at M = 8192 even for a single member, and every router holds two indexes over its hosts'
 * filters). Not thread-safe: owned by the thread that builds it.
 *
 * @param <T> what each member stands for, handed back by {@link #supersetsOf}
 */
public final class CoverIndex<T> {
  private static final int[] NONE = {};

  private final int bits;
  // The lists by bit, in an open-addressing table (linear probing): keys[i] is bit + 1 (0: free),
  // lists[i][0 .. sizes[i]) its members' ids. A list that empties keeps its key, without an array,
  // until the table is rebuilt.
  private int[] keys = new int[16];
  private int[][] lists = new int[16][];
  private int[] sizes = new int[16];
  private int used; // keys taken, empty lists included
  private char[][] members = new char[8][]; // by id; null for a free id
  private int[][] slots = new int[8][]; // slots[id][j]: index of id in the list of its j-th bit
  private Object[] values = new Object[8];
  private int[] counts = new int[8]; // scratch for coversAny; zero between calls
  private int[] touched = new int[8];
  private int[] free = new int[8];
  private int freeCount;
  private int nextId;
  private int size;
  private int[] empties = new int[2]; // ids of empty members
  private int emptyCount;
  private long checks;

  /** An empty index for filters of {@code bits} (M) positions. */
  public CoverIndex(int bits) {
    if (bits < 1) {
      throw new IllegalArgumentException("bits must be positive, got " + bits);
    }
    this.bits = bits;
  }

  /** The index in the table of bit {@code b}'s list, or -1 if no member sets it. */
  private int find(int b) {
    int mask = keys.length - 1;
    for (int i = hash(b) & mask; ; i = (i + 1) & mask) {
      int k = keys[i];
      if (k == b + 1) {
        return i;
      }
      if (k == 0) {
        return -1;
      }
    }
  }

  /** The index in the table of bit {@code b}'s list, taking a key for it if there is none. */
  private int slotOf(int b) {
    int i = find(b);
    if (i >= 0) {
      return i;
    }
    if (4 * (used + 1) > 3 * keys.length) {
      rebuild();
    }
    int mask = keys.length - 1;
    i = hash(b) & mask;
    while (keys[i] != 0) {
      i = (i + 1) & mask;
    }
    keys[i] = b + 1;
    used++;
    return i;
  }

  /** Rebuilds the table without the keys of emptied lists, twice as large if half full. */
  private void rebuild() {
    int live = 0;
    for (int i = 0; i < keys.length; i++) {
      if (sizes[i] > 0) {
        live++;
      }
    }
    int capacity = 4 * (live + 1) > keys.length ? 2 * keys.length : keys.length;
    int[] k0 = keys;
    int[][] l0 = lists;
    int[] s0 = sizes;
    keys = new int[capacity];
    lists = new int[capacity][];
    sizes = new int[capacity];
    int mask = capacity - 1;
    for (int i = 0; i < k0.length; i++) {
      if (s0[i] > 0) {
        int j = hash(k0[i] - 1) & mask;
        while (keys[j] != 0) {
          j = (j + 1) & mask;
        }
        keys[j] = k0[i];
        lists[j] = l0[i];
        sizes[j] = s0[i];
      }
    }
    used = live;
  }

  private static int hash(int b) {
    int h = b * 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  /** Number of members. */
  public int size() {
    return size;
  }

  /**
   * Steps taken by queries so far: list entries visited by {@link #coversAny} and candidates
   * checked by {@link #supersetsOf}. Tests bound it to show the cost per filter.
   */
  public long checks() {
    return checks;
  }

  /**
   * Adds a member; returns its id. The array is kept (not copied) and must not change; it must be
   * ascending, without repeats, all below M.
   */
  public int add(char[] filter, T value) {
    for (int j = 0; j < filter.length; j++) {
      if (filter[j] >= bits || (j > 0 && filter[j] <= filter[j - 1])) {
        throw new IllegalArgumentException("positions must be ascending and below " + bits);
      }
    }
    int id = freeCount > 0 ? free[--freeCount] : nextId++;
    if (id >= members.length) {
      int n = Math.max(id + 1, 2 * members.length);
      members = Arrays.copyOf(members, n);
      slots = Arrays.copyOf(slots, n);
      values = Arrays.copyOf(values, n);
      counts = Arrays.copyOf(counts, n);
      touched = Arrays.copyOf(touched, n);
    }
    members[id] = filter;
    values[id] = value;
    size++;
    if (filter.length == 0) {
      if (emptyCount == empties.length) {
        empties = Arrays.copyOf(empties, 2 * emptyCount);
      }
      empties[emptyCount++] = id;
      slots[id] = NONE;
      return id;
    }
    int[] s = new int[filter.length];
    for (int j = 0; j < filter.length; j++) {
      int b = slotOf(filter[j]);
      int[] l = lists[b];
      int n = sizes[b];
      if (l == null) {
        l = lists[b] = new int[2];
      } else if (n == l.length) {
        l = lists[b] = Arrays.copyOf(l, 2 * n);
      }
      l[n] = id;
      s[j] = n;
      sizes[b] = n + 1;
    }
    slots[id] = s;
    return id;
  }

  /** Removes the member {@code id}. */
  public void remove(int id) {
    char[] f = id >= 0 && id < members.length ? members[id] : null;
    if (f == null) {
      throw new IllegalArgumentException("no member " + id);
    }
    if (f.length == 0) {
      for (int i = 0; i < emptyCount; i++) {
        if (empties[i] == id) {
          empties[i] = empties[--emptyCount];
          break;
        }
      }
    }
    int[] s = slots[id];
    for (int j = 0; j < f.length; j++) {
      int b = f[j];
      int i = find(b);
      int[] l = lists[i];
      int last = --sizes[i];
      int moved = l[last];
      l[s[j]] = moved;
      if (moved != id) {
        // The moved member's slot for bit b: b is among its positions, which are ascending.
        slots[moved][Arrays.binarySearch(members[moved], (char) b)] = s[j];
      }
      if (last == 0) {
        lists[i] = null; // an emptied list gives its memory back
      }
    }
    members[id] = null;
    slots[id] = null;
    values[id] = null;
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, 2 * freeCount);
    }
    free[freeCount++] = id;
    size--;
  }

  /**
   * Whether {@code f[from .. to)} (ascending positions) covers some member, that is whether some
   * member's bits are all among f's. An empty member is covered by every filter.
   */
  public boolean coversAny(char[] f, int from, int to) {
    if (emptyCount > 0) {
      return true;
    }
    int t = 0;
    boolean found = false;
    scan:
    for (int j = from; j < to; j++) {
      int b = find(f[j]);
      if (b < 0) {
        continue;
      }
      int[] l = lists[b];
      for (int k = 0, n = sizes[b]; k < n; k++) {
        int id = l[k];
        checks++;
        int c = counts[id]++;
        if (c == 0) {
          touched[t++] = id;
        }
        if (c + 1 == members[id].length) {
          found = true;
          break scan;
        }
      }
    }
    for (int i = 0; i < t; i++) {
      counts[touched[i]] = 0;
    }
    return found;
  }

  /**
   * Adds to {@code out} the value of every member that covers {@code f[from .. to)} (ascending
   * positions), including one equal to it. Every member covers the empty filter.
   */
  @SuppressWarnings("unchecked")
  public void supersetsOf(char[] f, int from, int to, List<? super T> out) {
    if (from == to) {
      for (int id = 0; id < nextId; id++) {
        if (members[id] != null) {
          checks++;
          out.add((T) values[id]);
        }
      }
      return;
    }
    int rarest = find(f[from]);
    for (int j = from + 1; j < to && rarest >= 0; j++) {
      int i = find(f[j]);
      if (i < 0 || sizes[i] < sizes[rarest]) {
        rarest = i;
      }
    }
    if (rarest < 0) {
      return; // a bit of f that no member sets: no member covers f
    }
    int[] l = lists[rarest];
    for (int k = 0, n = sizes[rarest]; k < n; k++) {
      int id = l[k];
      checks++;
      char[] m = members[id];
      if (EncodedPredicate.isSubset(f, from, to, m, 0, m.length)) {
        out.add((T) values[id]);
      }
    }
  }
}
