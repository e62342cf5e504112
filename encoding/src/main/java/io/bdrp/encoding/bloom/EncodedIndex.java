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
 * <p>Identical filters of different routers are stored once. Each distinct filter is written as the
 * sequence of its set bits, ordered by how many filters share the bit (most shared first, so that
 * sequences share long prefixes), and the sequences form a trie. Matching walks the trie from the
 * root and descends only along bits that are set in the message filter; a filter whose sequence
 * ends at a reached node is covered. Subtrees under a bit the message lacks are never looked at,
 * which is what makes the walk cheap: with message density d (the fraction of bits set), a node at
 * depth j is reached with probability about d^j.
 *
 * <p>A node with many children also keeps their bits as a mask of M bits; the walk intersects it
 * with the message filter word by word and touches only the children whose bit is set, instead of
 * testing every child.
 *
 * <p>The trie is stored in flat arrays in depth-first order. Instances are immutable: the control
 * path builds a new one when predicates change ({@link EncodedMatcher}) and the forwarding path
 * reads whichever snapshot it holds. {@link #match} allocates nothing and may be called from many
 * threads at once.
 */
public final class EncodedIndex {
  /** Nodes with at least this many children get a child mask. */
  private static final int MASK_MIN_CHILDREN = 8;

  private final BloomParameters params;
  private final int routerWords;
  private final int routerCount;
  private final int filterCount; // filters over all routers, before de-duplication

  // Trie, node n: children in [childStart[n], childStart[n+1]), terminals in
  // [termStart[n], termStart[n+1]).
  private final int[] childStart;
  private final int[] childBit;
  private final int[] childNode;
  private final int[] termStart;
  private final int[] termFilter;
  // Nodes with at least MASK_MIN_CHILDREN children: maskAt[n] is the offset in masks of
  // the node's child bit mask (params.words() words), else -1. Children are sorted by bit, so
  // the child for a bit is childStart[n] + the number of mask bits below it.
  private final int[] maskAt;
  private final long[] masks;
  // Routers of distinct filter f: filterRouters[filterRouterStart[f] .. filterRouterStart[f+1]).
  private final int[] filterRouterStart;
  private final int[] filterRouters;

  private EncodedIndex(
      BloomParameters params,
      int routerWords,
      int routerCount,
      int filterCount,
      int[] childStart,
      int[] childBit,
      int[] childNode,
      int[] termStart,
      int[] termFilter,
      int[] maskAt,
      long[] masks,
      int[] filterRouterStart,
      int[] filterRouters) {
    this.params = params;
    this.routerWords = routerWords;
    this.routerCount = routerCount;
    this.filterCount = filterCount;
    this.childStart = childStart;
    this.childBit = childBit;
    this.childNode = childNode;
    this.termStart = termStart;
    this.termFilter = termFilter;
    this.maskAt = maskAt;
    this.masks = masks;
    this.filterRouterStart = filterRouterStart;
    this.filterRouters = filterRouters;
  }

  /**
   * Builds the index of the given routers' predicates. Router numbers are small non-negative
   * integers; the destination bitmap has a bit per router number.
   */
  public static EncodedIndex build(BloomParameters params, Map<Integer, EncodedPredicate> routers) {
    int words = params.words();
    int maxRouter = -1;
    int filterCount = 0;
    // Distinct filters and the routers that hold each.
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
        Key k = new Key(p.filter(i));
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

    // Bit ranks: least shared bits first. A bit that many filters share is usually part of the
    // existence category of a popular attribute, which most messages have too; putting such
    // bits deep in the trie keeps the likely-set bits from opening up the top of it.
    int[] shared = new int[params.bits()];
    for (Key k : order) {
      for (int b = 0; b < params.bits(); b++) {
        if ((k.bits[b >>> 6] & (1L << b)) != 0) {
          shared[b]++;
        }
      }
    }
    Integer[] byShare = new Integer[params.bits()];
    for (int b = 0; b < byShare.length; b++) {
      byShare[b] = b;
    }
    boolean rare = !Boolean.getBoolean("bdrp.trie.sharedFirst");
    Arrays.sort(
        byShare,
        (x, y) ->
            shared[x] != shared[y]
                ? (rare ? shared[x] - shared[y] : shared[y] - shared[x])
                : x - y);
    int[] rank = new int[params.bits()];
    for (int r = 0; r < byShare.length; r++) {
      rank[byShare[r]] = r;
    }

    // Each filter as its ascending rank sequence; sort sequences lexicographically.
    int[][] seq = new int[n][];
    for (int f = 0; f < n; f++) {
      long[] bits = order.get(f).bits;
      int[] s = new int[Filters.bitCount(bits)];
      int j = 0;
      for (int b = 0; b < params.bits(); b++) {
        if ((bits[b >>> 6] & (1L << b)) != 0) {
          s[j++] = rank[b];
        }
      }
      Arrays.sort(s);
      seq[f] = s;
    }
    Integer[] sortedFilters = new Integer[n];
    for (int f = 0; f < n; f++) {
      sortedFilters[f] = f;
    }
    Arrays.sort(sortedFilters, (x, y) -> Arrays.compare(seq[x], seq[y]));

    Builder b = new Builder(byShare);
    b.node(seq, sortedFilters, 0, n, 0);

    int[] filterRouterStart = new int[n + 1];
    int[] filterRouters = new int[filterCount];
    int at = 0;
    for (int f = 0; f < n; f++) {
      filterRouterStart[f] = at;
      for (int r : distinct.get(order.get(f))) {
        filterRouters[at++] = r;
      }
    }
    filterRouterStart[n] = at;
    int[] childStart = b.childStart();
    int[] childBits = b.childBits.toArray();
    int[] childNodes = b.childNodes.toArray();
    int nodes = childStart.length - 1;
    int[] maskAt = new int[nodes];
    int wide = 0;
    for (int v = 0; v < nodes; v++) {
      if (childStart[v + 1] - childStart[v] >= MASK_MIN_CHILDREN) {
        wide++;
      }
    }
    long[] masks = new long[wide * words];
    int next = 0;
    for (int v = 0; v < nodes; v++) {
      if (childStart[v + 1] - childStart[v] >= MASK_MIN_CHILDREN) {
        maskAt[v] = next;
        for (int c = childStart[v]; c < childStart[v + 1]; c++) {
          masks[next + (childBits[c] >>> 6)] |= 1L << childBits[c];
        }
        next += words;
      } else {
        maskAt[v] = -1;
      }
    }
    return new EncodedIndex(
        params,
        Math.max(1, (maxRouter + 64) >>> 6),
        routers.size(),
        filterCount,
        childStart,
        childBits,
        childNodes,
        b.termStart(),
        b.termFilters.toArray(),
        maskAt,
        masks,
        filterRouterStart,
        filterRouters);
  }

  /** Depth-first trie construction over lexicographically sorted rank sequences. */
  private static final class Builder {
    final int[] bitOfRank;
    final IntList nodeChildStart = new IntList();
    final IntList nodeTermStart = new IntList();
    final IntList childBits = new IntList();
    final IntList childNodes = new IntList();
    final IntList termFilters = new IntList();
    // Children are appended after the parent's whole subtree is known, so collect per node.
    // Per node, its children as (bit, child node) pairs; laid out flat once all nodes exist.
    final List<int[]> pendingChildren = new ArrayList<>();

    Builder(Integer[] byShare) {
      bitOfRank = new int[byShare.length];
      for (int r = 0; r < byShare.length; r++) {
        bitOfRank[r] = byShare[r];
      }
    }

    /** Creates the node for sequences sorted[lo..hi) sharing a prefix of length depth. */
    int node(int[][] seq, Integer[] sorted, int lo, int hi, int depth) {
      int id = pendingChildren.size();
      pendingChildren.add(null);
      nodeTermStart.add(termFilters.size());
      int i = lo;
      // Sequences that end here sort first among those sharing the prefix.
      while (i < hi && seq[sorted[i]].length == depth) {
        termFilters.add(sorted[i]);
        i++;
      }
      List<int[]> children = new ArrayList<>();
      while (i < hi) {
        int r = seq[sorted[i]][depth];
        int j = i;
        while (j < hi && seq[sorted[j]][depth] == r) {
          j++;
        }
        children.add(new int[] {bitOfRank[r], -1, i, j});
        i = j;
      }
      // Lay children out by bit, so that a child mask's rank finds them (see maskAt).
      children.sort((x, y) -> Integer.compare(x[0], y[0]));
      int[] pairs = new int[children.size() * 2];
      pendingChildren.set(id, pairs);
      for (int c = 0; c < children.size(); c++) {
        int[] ch = children.get(c);
        pairs[2 * c] = ch[0];
        pairs[2 * c + 1] = node(seq, sorted, ch[2], ch[3], depth + 1);
      }
      return id;
    }

    int[] childStart() {
      int nodes = pendingChildren.size();
      int[] start = new int[nodes + 1];
      for (int n = 0; n < nodes; n++) {
        int[] pairs = pendingChildren.get(n);
        start[n] = childBits.size();
        for (int c = 0; c < pairs.length; c += 2) {
          childBits.add(pairs[c]);
          childNodes.add(pairs[c + 1]);
        }
      }
      start[nodes] = childBits.size();
      return start;
    }

    int[] termStart() {
      int nodes = pendingChildren.size();
      int[] start = new int[nodes + 1];
      for (int n = 0; n < nodes; n++) {
        start[n] = nodeTermStart.get(n);
      }
      // Nodes are numbered in depth-first pre-order and a node's terminals are added when the
      // node is created, so node n's terminals end where node n+1's begin.
      start[nodes] = termFilters.size();
      return start;
    }
  }

  /** Growable int array for building. */
  private static final class IntList {
    int[] a = new int[16];
    int n;

    void add(int v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    int get(int i) {
      return a[i];
    }

    int size() {
      return n;
    }

    int[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  /** A filter as a hash key. */
  private record Key(long[] bits) {
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
    return childStart.length - 1;
  }

  /**
   * Sets in {@code destinations} (a bitmap of at least {@link #routerWords()} words, router r at
   * bit r) the bit of every router that has a filter covered by {@code messageFilter}. Bits already
   * set are left set. Returns the number of distinct filters found covered.
   */
  public int match(long[] messageFilter, long[] destinations) {
    return visit(0, messageFilter, destinations);
  }

  private int visit(int node, long[] m, long[] d) {
    int found = 0;
    for (int t = termStart[node], end = termStart[node + 1]; t < end; t++) {
      int f = termFilter[t];
      for (int i = filterRouterStart[f], e = filterRouterStart[f + 1]; i < e; i++) {
        int r = filterRouters[i];
        d[r >>> 6] |= 1L << r;
      }
      found++;
    }
    int first = childStart[node];
    int mask = maskAt[node];
    if (mask < 0) {
      for (int c = first, end = childStart[node + 1]; c < end; c++) {
        int bit = childBit[c];
        // Descend only along bits the message has: everything below needs this bit.
        if ((m[bit >>> 6] & (1L << bit)) != 0) {
          found += visit(childNode[c], m, d);
        }
      }
    } else {
      int below = 0; // children with a bit in earlier words
      for (int w = 0; w < m.length; w++) {
        long cm = masks[mask + w];
        long x = cm & m[w];
        while (x != 0) {
          long lowest = x & -x;
          int c = first + below + Long.bitCount(cm & (lowest - 1));
          found += visit(childNode[c], m, d);
          x ^= lowest;
        }
        below += Long.bitCount(cm);
      }
    }
    return found;
  }
}
