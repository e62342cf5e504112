package io.bdrp.encoding.bloom;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
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
    int maxRouter = -1;
    int filterCount = 0;
    Map<Key, List<Integer>> distinct = new HashMap<>();
    List<Key> order = new ArrayList<>();
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
      for (int i = 0; i < p.size(); i++) {
        Key k = new Key(p.positions(i)); // as positions: no filter is made dense here
        List<Integer> holders = distinct.get(k);
        if (holders == null) {
          holders = new ArrayList<>(1);
          distinct.put(k, holders);
          order.add(k);
        }
        holders.add(router);
        filterCount++;
      }
    }
    int n = order.size();
    int bits = params.bits();

    // Bit ranks: least shared bits first (see the class comment).
    int[] shared = new int[bits];
    for (Key k : order) {
      for (char b : k.bits) {
        shared[b]++;
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

    // Each filter as its ascending rank sequence; filters sorted by sequence.
    int[][] seq = new int[n][];
    for (int f = 0; f < n; f++) {
      char[] fb = order.get(f).bits;
      int[] s = new int[fb.length];
      for (int j = 0; j < fb.length; j++) {
        s[j] = rank[fb[j]];
      }
      Arrays.sort(s);
      seq[f] = s;
    }
    Integer[] sortedIds = new Integer[n];
    for (int f = 0; f < n; f++) {
      sortedIds[f] = f;
    }
    Arrays.sort(sortedIds, (x, y) -> Arrays.compare(seq[x], seq[y]));
    int[][] sortedSeq = new int[n][];
    int[] filterBitStart = new int[n + 1];
    int totalBits = 0;
    for (int[] q : seq) {
      totalBits += q.length;
    }
    short[] filterBits = new short[totalBits];
    int[] filterRouterStart = new int[n + 1];
    int[] filterRouters = new int[filterCount];
    int at = 0;
    for (int i = 0; i < n; i++) {
      Key k = order.get(sortedIds[i]);
      sortedSeq[i] = seq[sortedIds[i]];
      filterBitStart[i + 1] = filterBitStart[i] + sortedSeq[i].length;
      for (int j = 0; j < sortedSeq[i].length; j++) {
        filterBits[filterBitStart[i] + j] = (short) bitOfRank[sortedSeq[i][j]];
      }
      filterRouterStart[i] = at;
      for (int r : distinct.get(k)) {
        filterRouters[at++] = r;
      }
    }
    filterRouterStart[n] = at;

    Builder b = new Builder(sortedSeq, bitOfRank, bucketSize, words);
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
        filterBitStart,
        filterBits,
        filterRouterStart,
        filterRouters);
  }

  /** Depth-first construction over lexicographically sorted rank sequences. */
  private static final class Builder {
    final int[][] seq;
    final int[] bitOfRank;
    final int bucketSize;
    final int words;
    final IntList nodes = new IntList();
    final IntList childBits = new IntList();
    final IntList childNodes = new IntList();
    final List<long[]> maskList = new ArrayList<>();

    Builder(int[][] seq, int[] bitOfRank, int bucketSize, int words) {
      this.seq = seq;
      this.bitOfRank = bitOfRank;
      this.bucketSize = bucketSize;
      this.words = words;
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
      while (i < hi && seq[i].length == depth) {
        i++;
      }
      nodes.set(base + CHECK_LO, lo);
      nodes.set(base + CHECK_HI, i);
      nodes.set(base + DEPTH, depth);
      List<int[]> groups = new ArrayList<>();
      while (i < hi) {
        int r = seq[i][depth];
        int j = i;
        while (j < hi && seq[j][depth] == r) {
          j++;
        }
        groups.add(new int[] {bitOfRank[r], i, j});
        i = j;
      }
      // Children by bit, so that a child mask's rank finds them.
      groups.sort((x, y) -> Integer.compare(x[0], y[0]));
      int[] ids = new int[groups.size()];
      for (int g = 0; g < groups.size(); g++) {
        int[] gr = groups.get(g);
        ids[g] = node(gr[1], gr[2], depth + 1);
      }
      int childLo = childBits.size();
      long[] mask = groups.size() >= MASK_MIN_CHILDREN ? new long[words] : null;
      for (int g = 0; g < groups.size(); g++) {
        int bit = groups.get(g)[0];
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

  /** A filter, as its set-bit positions, as a hash key. */
  private record Key(char[] bits) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.equals(bits, k.bits);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bits);
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
