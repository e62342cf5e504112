package io.bdrp.encoding.bloom;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * An immutable index over the encoded predicates of many routers that finds, for a message filter,
 * the set D of routers with a covered filter, without testing every filter.
 *
 * <p>Identical filters of different routers are stored once, with the list of routers that hold
 * them. Each distinct filter is written as the sequence of its set bits, least shared first, and
 * the filters are sorted by that sequence and stored one after another in a flat array. Over that
 * order sits a trie: a node stands for a common prefix of bits, and its filters form one contiguous
 * range of the array. Matching walks the trie from the root and descends only along bits that are
 * set in the message filter, since every filter below needs that bit. Where a node's range holds at
 * most a handful of filters ({@code bucketSize}), the trie stops and those filters are checked
 * directly, word by word, which is cheaper than more levels of nodes.
 *
 * <p>Why least shared first: a bit that many filters share is usually part of the existence
 * category of a popular attribute, which most messages also have; putting such bits deep keeps bits
 * that are likely set in a message from opening up the top of the trie. With a fraction d of the
 * message's bits set, a node at depth j is reached with probability about d^j.
 *
 * <p>Layout: a node is a record of {@value #NODE_INTS} ints in one array (range of the filters to
 * check at the node, range of its children, offset of its child mask). A node with many children
 * keeps their bits as a mask of M bits that is intersected with the message filter word by word, so
 * only children whose bit is set are touched.
 *
 * <p>Instances are immutable: the control path builds a new one when predicates change ({@link
 * EncodedMatcher}) and the forwarding path reads whichever snapshot it holds. {@link #match}
 * allocates nothing and may be called from many threads at once.
 */
public final class EncodedIndex {
  /** Default largest number of filters checked directly instead of splitting a node further. */
  public static final int DEFAULT_BUCKET_SIZE = 16;

  /** Nodes with at least this many children get a child mask. */
  private static final int MASK_MIN_CHILDREN = 8;

  // Node record fields.
  private static final int CHECK_LO = 0;
  private static final int CHECK_HI = 1;
  private static final int DEPTH = 2;
  private static final int CHILD_LO = 3;
  private static final int CHILD_HI = 4;
  private static final int MASK_AT = 5;
  private static final int NODE_INTS = 6;

  private final BloomParameters params;
  private final int words;
  private final int routerWords;
  private final int routerCount;
  private final int filterCount; // filters over all routers, before de-duplication

  private final int[] nodes; // NODE_INTS per node, node 0 is the root
  private final int[] childBit; // children of all nodes, by node then by bit
  private final int[] childNode;
  private final long[] masks; // child masks of wide nodes, words each
  // Distinct filters in trie order, each as its bit positions in rank order:
  // filterBits[filterBitStart[f] .. filterBitStart[f+1]).
  private final int[] filterBitStart;
  private final short[] filterBits;
  // Routers of filter f: filterRouters[filterRouterStart[f] .. filterRouterStart[f+1]).
  private final int[] filterRouterStart;
  private final int[] filterRouters;

  private EncodedIndex(
      BloomParameters params,
      int routerWords,
      int routerCount,
      int filterCount,
      int[] nodes,
      int[] childBit,
      int[] childNode,
      long[] masks,
      int[] filterBitStart,
      short[] filterBits,
      int[] filterRouterStart,
      int[] filterRouters) {
    this.params = params;
    this.words = params.words();
    this.routerWords = routerWords;
    this.routerCount = routerCount;
    this.filterCount = filterCount;
    this.nodes = nodes;
    this.childBit = childBit;
    this.childNode = childNode;
    this.masks = masks;
    this.filterBitStart = filterBitStart;
    this.filterBits = filterBits;
    this.filterRouterStart = filterRouterStart;
    this.filterRouters = filterRouters;
  }

  /** As {@link #build(BloomParameters, Map, int)} with {@link #DEFAULT_BUCKET_SIZE}. */
  public static EncodedIndex build(BloomParameters params, Map<Integer, EncodedPredicate> routers) {
    return build(params, routers, DEFAULT_BUCKET_SIZE);
  }

  /**
   * Builds the index of the given routers' predicates. Router numbers are small non-negative
   * integers; the destination bitmap has a bit per router number.
   *
   * @param bucketSize a node whose range holds at most this many filters is not split further (at
   *     least 1)
   */
  public static EncodedIndex build(
      BloomParameters params, Map<Integer, EncodedPredicate> routers, int bucketSize) {
    if (bucketSize < 1) {
      throw new IllegalArgumentException("bucketSize must be at least 1, got " + bucketSize);
    }
    int words = params.words();
    int bits = params.bits();
    // Built from a few flat arrays, never an object per filter: an index over millions of filters
    // is built while the router forwards, and objects that live through the build would be copied
    // by every young collection meanwhile (pauses of tens of ms on a small heap).

    // Every filter of every router, in the map's order: its positions and its router.
    int maxRouter = -1;
    int filterCount = 0;
    long positionCount = 0;
    for (Map.Entry<Integer, EncodedPredicate> e : routers.entrySet()) {
      int router = e.getKey();
      if (router < 0) {
        throw new IllegalArgumentException("router numbers are non-negative, got " + router);
      }
      EncodedPredicate p = e.getValue();
      if (!p.parameters().equals(params)) {
        throw new IllegalArgumentException(
            "router " + router + " has filters of " + p.parameters() + ", index uses " + params);
      }
      maxRouter = Math.max(maxRouter, router);
      filterCount += p.size();
      for (int i = 0; i < p.size(); i++) {
        positionCount += p.bitCount(i);
      }
    }
    int[] at = new int[filterCount + 1];
    char[] positions = new char[Math.toIntExact(positionCount)];
    int[] owner = new int[filterCount];
    int f = 0;
    for (Map.Entry<Integer, EncodedPredicate> e : routers.entrySet()) {
      EncodedPredicate p = e.getValue();
      for (int i = 0; i < p.size(); i++, f++) {
        int n = p.bitCount(i);
        for (int j = 0; j < n; j++) {
          positions[at[f] + j] = (char) p.position(i, j);
        }
        at[f + 1] = at[f] + n;
        owner[f] = e.getKey();
      }
    }

    // Distinct filters: all of them sorted by their positions (stably, so that the routers of a
    // filter keep the map's order), equal ones in a run; distinct filter d is the run
    // byPosition[run[d] .. run[d + 1]).
    int[] byPosition = identity(filterCount);
    IntSort.sort(
        byPosition,
        (x, y) -> Arrays.compare(positions, at[x], at[x + 1], positions, at[y], at[y + 1]));
    int[] run = new int[filterCount + 1];
    int n = 0;
    for (int i = 0; i < filterCount; i++) {
      if (i == 0 || !sameFilter(positions, at, byPosition[i - 1], byPosition[i])) {
        run[n++] = i;
      }
    }
    run[n] = filterCount;

    // Bit ranks: least shared bits first (see the class comment), counted over distinct filters.
    int[] shared = new int[bits];
    for (int d = 0; d < n; d++) {
      int g = byPosition[run[d]];
      for (int j = at[g]; j < at[g + 1]; j++) {
        shared[positions[j]]++;
      }
    }
    Integer[] byShare = new Integer[bits];
    for (int b = 0; b < bits; b++) {
      byShare[b] = b;
    }
    Arrays.sort(byShare, (x, y) -> shared[x] != shared[y] ? shared[x] - shared[y] : x - y);
    int[] rank = new int[bits];
    int[] bitOfRank = new int[bits];
    for (int r = 0; r < bits; r++) {
      rank[byShare[r]] = r;
      bitOfRank[r] = byShare[r];
    }

    // Each distinct filter as its ascending rank sequence; distinct filters sorted by sequence
    // (no two are equal: ranks are a permutation of the bits).
    int[] seqAt = new int[n + 1];
    for (int d = 0; d < n; d++) {
      int g = byPosition[run[d]];
      seqAt[d + 1] = seqAt[d] + at[g + 1] - at[g];
    }
    int[] seq = new int[seqAt[n]];
    for (int d = 0; d < n; d++) {
      int g = byPosition[run[d]];
      for (int j = at[g], k = seqAt[d]; j < at[g + 1]; j++, k++) {
        seq[k] = rank[positions[j]];
      }
      Arrays.sort(seq, seqAt[d], seqAt[d + 1]);
    }
    int[] bySeq = identity(n);
    IntSort.sort(
        bySeq, (x, y) -> Arrays.compare(seq, seqAt[x], seqAt[x + 1], seq, seqAt[y], seqAt[y + 1]));

    int[] sortedAt = new int[n + 1];
    int[] sortedSeq = new int[seq.length];
    short[] filterBits = new short[seq.length];
    int[] filterRouterStart = new int[n + 1];
    int[] filterRouters = new int[filterCount];
    int r = 0;
    for (int i = 0; i < n; i++) {
      int d = bySeq[i];
      int len = seqAt[d + 1] - seqAt[d];
      System.arraycopy(seq, seqAt[d], sortedSeq, sortedAt[i], len);
      sortedAt[i + 1] = sortedAt[i] + len;
      for (int j = sortedAt[i]; j < sortedAt[i + 1]; j++) {
        filterBits[j] = (short) bitOfRank[sortedSeq[j]];
      }
      filterRouterStart[i] = r;
      for (int k = run[d]; k < run[d + 1]; k++) {
        filterRouters[r++] = owner[byPosition[k]];
      }
    }
    filterRouterStart[n] = r;

    Builder b = new Builder(sortedAt, sortedSeq, bitOfRank, bucketSize, words);
    b.node(0, n, 0);
    return new EncodedIndex(
        params,
        Math.max(1, (maxRouter + 64) >>> 6),
        routers.size(),
        filterCount,
        b.nodes.toArray(),
        b.childBits.toArray(),
        b.childNodes.toArray(),
        b.masks(),
        sortedAt,
        filterBits,
        filterRouterStart,
        filterRouters);
  }

  private static int[] identity(int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    return a;
  }

  private static boolean sameFilter(char[] positions, int[] at, int x, int y) {
    return Arrays.equals(positions, at[x], at[x + 1], positions, at[y], at[y + 1]);
  }

  /** Depth-first construction over lexicographically sorted rank sequences. */
  private static final class Builder {
    final int[] at; // sequence i is seq[at[i] .. at[i + 1])
    final int[] seq;
    final int[] bitOfRank;
    final int bucketSize;
    final int words;
    final IntList nodes = new IntList();
    final IntList childBits = new IntList();
    final IntList childNodes = new IntList();
    final List<long[]> maskList = new ArrayList<>();

    Builder(int[] at, int[] seq, int[] bitOfRank, int bucketSize, int words) {
      this.at = at;
      this.seq = seq;
      this.bitOfRank = bitOfRank;
      this.bucketSize = bucketSize;
      this.words = words;
    }

    private int length(int i) {
      return at[i + 1] - at[i];
    }

    /** Creates the node for filters [lo, hi) sharing a prefix of length depth; returns its id. */
    int node(int lo, int hi, int depth) {
      int id = nodes.size() / NODE_INTS;
      for (int i = 0; i < NODE_INTS; i++) {
        nodes.add(0);
      }
      int base = id * NODE_INTS;
      if (hi - lo <= bucketSize) {
        // A bucket: check all its filters directly.
        nodes.set(base + CHECK_LO, lo);
        nodes.set(base + CHECK_HI, hi);
        nodes.set(base + DEPTH, depth);
        nodes.set(base + CHILD_LO, 0);
        nodes.set(base + CHILD_HI, 0);
        nodes.set(base + MASK_AT, -1);
        return id;
      }
      // Filters whose whole sequence is this prefix sort first; they are covered whenever the
      // walk gets here (their check has no bits left to test).
      int i = lo;
      while (i < hi && length(i) == depth) {
        i++;
      }
      nodes.set(base + CHECK_LO, lo);
      nodes.set(base + CHECK_HI, i);
      nodes.set(base + DEPTH, depth);
      int groups = 0;
      for (int j = i; j < hi; groups++) {
        int r = seq[at[j] + depth];
        while (j < hi && seq[at[j] + depth] == r) {
          j++;
        }
      }
      // Each group (filters whose next rank is the same) as its bit and its first filter, sorted
      // by bit so that a child mask's rank finds the children.
      long[] group = new long[groups];
      for (int g = 0, j = i; j < hi; g++) {
        int r = seq[at[j] + depth];
        group[g] = (long) bitOfRank[r] << 32 | j;
        while (j < hi && seq[at[j] + depth] == r) {
          j++;
        }
      }
      Arrays.sort(group);
      int[] ids = new int[groups];
      for (int g = 0; g < groups; g++) {
        int from = (int) group[g];
        int r = seq[at[from] + depth];
        int to = from;
        while (to < hi && seq[at[to] + depth] == r) {
          to++;
        }
        ids[g] = node(from, to, depth + 1);
      }
      int childLo = childBits.size();
      long[] mask = groups >= MASK_MIN_CHILDREN ? new long[words] : null;
      for (int g = 0; g < groups; g++) {
        int bit = (int) (group[g] >>> 32);
        childBits.add(bit);
        childNodes.add(ids[g]);
        if (mask != null) {
          mask[bit >>> 6] |= 1L << bit;
        }
      }
      nodes.set(base + CHILD_LO, childLo);
      nodes.set(base + CHILD_HI, childBits.size());
      if (mask != null) {
        nodes.set(base + MASK_AT, maskList.size() * words);
        maskList.add(mask);
      } else {
        nodes.set(base + MASK_AT, -1);
      }
      return id;
    }

    long[] masks() {
      long[] out = new long[maskList.size() * words];
      for (int i = 0; i < maskList.size(); i++) {
        System.arraycopy(maskList.get(i), 0, out, i * words, words);
      }
      return out;
    }
  }

  /** Growable int array for building. */
  private static final class IntList {
    int[] a = new int[64];
    int n;

    void add(int v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    void set(int i, int v) {
      a[i] = v;
    }

    int size() {
      return n;
    }

    int[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  public BloomParameters parameters() {
    return params;
  }

  /** Number of 64-bit words a destination bitmap needs for this index's router numbers. */
  public int routerWords() {
    return routerWords;
  }

  /** Number of routers with a predicate in the index (including empty ones). */
  public int routerCount() {
    return routerCount;
  }

  /** Number of filters over all routers. */
  public int filterCount() {
    return filterCount;
  }

  /** Number of distinct filters. */
  public int distinctFilterCount() {
    return filterRouterStart.length - 1;
  }

  /** Number of trie nodes. */
  public int nodeCount() {
    return nodes.length / NODE_INTS;
  }

  /**
   * Sets in {@code destinations} (a bitmap of at least {@link #routerWords()} words, router r at
   * bit r) the bit of every router that has a filter covered by {@code messageFilter}. Bits already
   * set are left set. Returns the number of distinct filters found covered.
   */
  public int match(long[] messageFilter, long[] destinations) {
    return filterRouterStart.length == 1 ? 0 : visit(0, messageFilter, destinations);
  }

  private int visit(int node, long[] m, long[] d) {
    int base = node * NODE_INTS;
    int found = 0;
    int depth = nodes[base + DEPTH];
    for (int f = nodes[base + CHECK_LO], end = nodes[base + CHECK_HI]; f < end; f++) {
      if (covers(m, f, depth)) {
        for (int i = filterRouterStart[f], e = filterRouterStart[f + 1]; i < e; i++) {
          int r = filterRouters[i];
          d[r >>> 6] |= 1L << r;
        }
        found++;
      }
    }
    int first = nodes[base + CHILD_LO];
    int mask = nodes[base + MASK_AT];
    if (mask < 0) {
      for (int c = first, end = nodes[base + CHILD_HI]; c < end; c++) {
        int bit = childBit[c];
        // Descend only along bits the message has: every filter below needs this bit.
        if ((m[bit >>> 6] & (1L << bit)) != 0) {
          found += visit(childNode[c], m, d);
        }
      }
    } else {
      int below = 0; // children whose bit is in an earlier word
      for (int w = 0; w < words; w++) {
        long cm = masks[mask + w];
        long x = cm & m[w];
        while (x != 0) {
          long lowest = x & -x;
          found += visit(childNode[first + below + Long.bitCount(cm & (lowest - 1))], m, d);
          x ^= lowest;
        }
        below += Long.bitCount(cm);
      }
    }
    return found;
  }

  /**
   * Whether the message has every bit of filter f after its first {@code known} bits (those are the
   * path to the node, already known to be set). The bits come rarest first, so a filter that is not
   * covered usually fails on the first test.
   */
  private boolean covers(long[] m, int f, int known) {
    for (int j = filterBitStart[f] + known, end = filterBitStart[f + 1]; j < end; j++) {
      int bit = filterBits[j];
      if ((m[bit >>> 6] & (1L << bit)) == 0) {
        return false;
      }
    }
    return true;
  }
}
