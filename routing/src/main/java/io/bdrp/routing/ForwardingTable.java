package io.bdrp.routing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable snapshot of what the forwarding path needs from UNICAST: for each neighbour, the
 * bitmap of routers whose next hop it is, and for each source router, the neighbours that are this
 * router's children in the tree of shortest paths towards that source. The control path builds a
 * new snapshot when routes change; forwarding threads read whichever one they hold, without locks.
 *
 * <p><b>Dynamic receiver partitioning</b> ({@link #partition}): a destination set D (a bitmap of
 * router numbers) is split into one subset per next hop, D_i = D ∩ behind(i), a few word-wise ANDs
 * per neighbour. Each router of D lands in exactly one subset, so no router is sent a message twice
 * and no copy carries a router that another copy carries.
 *
 * <p><b>Broadcast</b> ({@link #broadcast}): a copy that carries no set follows the tree of shortest
 * paths from its source: a router accepts it only from its own next hop towards the source (or, for
 * a short grace after that next hop changed, from the former ones: make before break, see {@link
 * DistanceVector}) and passes it to its children for that source, tentative children included. With
 * converged routes every router receives it exactly once; while routes change, the acceptance check
 * and the receivers' duplicate window keep a copy from looping or being delivered twice.
 */
public final class ForwardingTable {
  private static final char NO_HOP = 0xFFFF;

  private final int self;
  private final int words;
  // By router number, the index in neighbours of the next hop (NO_HOP: no route): two bytes a
  // router rather than four, since a large network's routers each hold one per other router.
  private final char[] hop;
  private final int[] neighbours; // up neighbours, ascending
  private final long[][] behind; // behind[i]: routers whose next hop is neighbours[i]
  private final long[] reachable; // routers with a route, self excluded
  // By source router number, the index in childSets of its children (0: none): a router has a few
  // distinct sets of children and thousands of sources. Null when the sets are too many to number
  // in two bytes; childrenBySource holds them instead.
  private final char[] childSet;
  private final int[][] childSets;
  private final int[][] childrenBySource;
  private final int reachableCount;
  // Sources whose next hop changed within the make-before-break grace, ascending (a source once
  // per former next hop), and for each the former next hop, from which broadcasts are still taken
  // (empty in a settled network).
  private final int[] formerSources;
  private final int[] formerHops;

  private ForwardingTable(
      int self,
      int words,
      char[] hop,
      int[] neighbours,
      long[][] behind,
      long[] reachable,
      char[] childSet,
      int[][] childSets,
      int[][] childrenBySource,
      int[] formerSources,
      int[] formerHops) {
    this.self = self;
    this.formerSources = formerSources;
    this.formerHops = formerHops;
    this.words = words;
    this.hop = hop;
    this.neighbours = neighbours;
    this.behind = behind;
    this.reachable = reachable;
    this.childSet = childSet;
    this.childSets = childSets;
    this.childrenBySource = childrenBySource;
    int n = 0;
    for (long w : reachable) {
      n += Long.bitCount(w);
    }
    this.reachableCount = n;
  }

  /**
   * Builds a snapshot.
   *
   * @param self this router's number
   * @param maxRouters router numbers are below this
   * @param nextHop next hop by router number (-1: no route); read up to its length
   * @param children children by source router number (null or empty: none); read up to its length
   */
  public static ForwardingTable of(int self, int maxRouters, int[] nextHop, int[][] children) {
    return of(self, maxRouters, nextHop, children, new int[0][]);
  }

  /**
   * Builds a snapshot in which broadcasts are also taken from a former next hop: {@code
   * formerParents} holds pairs {source, neighbour} (see {@link DistanceVector#formerParents()}).
   */
  public static ForwardingTable of(
      int self, int maxRouters, int[] nextHop, int[][] children, int[][] formerParents) {
    if (self < 0 || self >= maxRouters) {
      throw new IllegalArgumentException("router " + self + " outside 0.." + (maxRouters - 1));
    }
    int words = (maxRouters + 63) >>> 6;
    int[] hops = new int[maxRouters];
    Arrays.fill(hops, -1);
    int[] neighbourOf = new int[0];
    int n = 0;
    long[] reach = new long[words];
    for (int r = 0; r < Math.min(nextHop.length, maxRouters); r++) {
      int h = nextHop[r];
      if (h < 0 || r == self) {
        continue;
      }
      if (h >= maxRouters) {
        throw new IllegalArgumentException("next hop " + h + " of router " + r + " out of range");
      }
      hops[r] = h;
      reach[r >>> 6] |= 1L << r;
      if (Arrays.binarySearch(neighbourOf, 0, n, h) < 0) {
        neighbourOf = Arrays.copyOf(neighbourOf, n + 1);
        neighbourOf[n++] = h;
        Arrays.sort(neighbourOf);
      }
    }
    int sources = Math.min(children.length, maxRouters);
    for (int s = 0; s < sources; s++) {
      int[] c = children[s];
      for (int k : c == null ? NONE : c) {
        if (Arrays.binarySearch(neighbourOf, 0, n, k) < 0) {
          neighbourOf = Arrays.copyOf(neighbourOf, n + 1);
          neighbourOf[n++] = k;
          Arrays.sort(neighbourOf);
        }
      }
    }
    // One array per distinct set of children, numbered: a router has a few such sets and
    // thousands of sources, most with one child.
    char[] childSet = new char[maxRouters];
    List<int[]> setList = new ArrayList<>();
    setList.add(NONE);
    Map<IntArrayKey, Integer> sets = new HashMap<>();
    int[][] bySource = null; // the sets by source, if too many to number in a char
    for (int s = 0; s < sources; s++) {
      int[] c = children[s];
      if (c == null || c.length == 0) {
        continue;
      }
      int[] sorted = c.clone();
      Arrays.sort(sorted);
      Integer k = sets.get(new IntArrayKey(sorted));
      if (k == null) {
        k = setList.size();
        setList.add(sorted);
        sets.put(new IntArrayKey(sorted), k);
      }
      if (bySource == null && k > Character.MAX_VALUE) {
        bySource = new int[maxRouters][];
        for (int r = 0; r < s; r++) {
          bySource[r] = setList.get(childSet[r]);
        }
      }
      if (bySource != null) {
        bySource[s] = setList.get(k);
      } else {
        childSet[s] = (char) (int) k;
      }
    }
    long[][] behind = new long[n][words];
    char[] hop = new char[maxRouters];
    Arrays.fill(hop, NO_HOP);
    for (int r = 0; r < maxRouters; r++) {
      if (hops[r] >= 0) {
        int i = Arrays.binarySearch(neighbourOf, 0, n, hops[r]);
        behind[i][r >>> 6] |= 1L << r;
        hop[r] = (char) i;
      }
    }
    int[][] former = formerParents.clone();
    Arrays.sort(
        former, (a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
    int[] formerSources = new int[former.length];
    int[] formerHops = new int[former.length];
    for (int i = 0; i < former.length; i++) {
      formerSources[i] = former[i][0];
      formerHops[i] = former[i][1];
    }
    return new ForwardingTable(
        self,
        words,
        hop,
        Arrays.copyOf(neighbourOf, n),
        behind,
        reach,
        bySource == null ? childSet : null,
        bySource == null ? setList.toArray(new int[0][]) : null,
        bySource,
        formerSources,
        formerHops);
  }

  /** A set of children as a map key, by its elements. */
  private record IntArrayKey(int[] a) {
    @Override
    public boolean equals(Object o) {
      return o instanceof IntArrayKey k && Arrays.equals(a, k.a);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(a);
    }
  }

  /** Whether {@code from} is a former next hop towards {@code source} still within its grace. */
  public boolean isFormerHop(int source, int from) {
    if (formerSources.length == 0) {
      return false;
    }
    int i = Arrays.binarySearch(formerSources, source);
    if (i < 0) {
      return false;
    }
    while (i > 0 && formerSources[i - 1] == source) {
      i--; // the first pair of this source
    }
    for (; i < formerSources.length && formerSources[i] == source; i++) {
      if (formerHops[i] == from) {
        return true;
      }
    }
    return false;
  }

  /** This router's number. */
  public int self() {
    return self;
  }

  /** Words of a destination bitmap. */
  public int words() {
    return words;
  }

  /** The largest number of copies one decision can produce: the neighbours in this snapshot. */
  public int maxHops() {
    return Math.max(1, neighbours.length);
  }

  /** A partition object sized for this table. */
  public Partition newPartition() {
    return new Partition(words, maxHops());
  }

  /** The next hop towards {@code router}, or -1. */
  public int nextHop(int router) {
    if (router < 0 || router >= hop.length) {
      return -1;
    }
    char i = hop[router];
    return i == NO_HOP ? -1 : neighbours[i];
  }

  /**
   * The routers whose next hop is {@code neighbour}, one bit each ({@link #words()} words; bit r of
   * word r / 64 = router r); all zero when it is no router's next hop.
   */
  public long[] behind(int neighbour) {
    int i = Arrays.binarySearch(neighbours, neighbour);
    return i < 0 ? new long[words] : behind[i].clone();
  }

  /** The number of routers this router has a route to, itself excluded. */
  public int reachableCount() {
    return reachableCount;
  }

  /**
   * The number of routers of destination set {@code d} ({@link #words()} words, or fewer: the
   * missing ones are empty) that this router has a route to, itself excluded. Allocates nothing.
   */
  public int reachableIn(long[] d) {
    int n = 0;
    for (int w = 0, k = Math.min(d.length, words); w < k; w++) {
      n += Long.bitCount(d[w] & reachable[w]);
    }
    return n;
  }

  /** This router's children in the tree of shortest paths towards {@code source}; do not modify. */
  int[] children(int source) {
    if (source < 0 || source >= hop.length) {
      return NONE;
    }
    if (childSet != null) {
      return childSets[childSet[source]];
    }
    int[] c = childrenBySource[source];
    return c == null ? NONE : c;
  }

  private static final int[] NONE = new int[0];

  /** A copy of the children of {@code source}, ascending. */
  public int[] childrenOf(int source) {
    return children(source).clone();
  }

  /**
   * Partitions destination set {@code d} by next hop into {@code out}. {@code out.local()} tells
   * whether this router is in d; routers of d without a route are counted in {@code
   * out.unreachable()}. With {@code hopLimit} (the limit the packet arrived with, or the initial
   * limit at the ingress router) at 1 or below, copies are not sent and the drop is recorded.
   * {@code d} is not modified.
   */
  public void partition(long[] d, int hopLimit, Partition out) {
    checkWords(d, out);
    boolean local = (d[self >>> 6] & (1L << self)) != 0;
    out.reset(local, false);
    int lost = 0;
    for (int w = 0; w < words; w++) {
      long dw = d[w];
      if (dw == 0) {
        continue;
      }
      if (w == self >>> 6) {
        dw &= ~(1L << self);
      }
      lost += Long.bitCount(dw & ~reachable[w]);
      dw &= reachable[w];
      // Each reachable router sits in exactly one neighbour's bitmap.
      for (int i = 0; dw != 0 && i < neighbours.length; i++) {
        long part = dw & behind[i][w];
        if (part != 0) {
          out.set(out.slot(neighbours[i]))[w] = part;
          dw &= ~part;
        }
      }
    }
    out.addUnreachable(lost);
    if (out.count() > 0 && hopLimit <= 1) {
      out.dropAll(Partition.Drop.HOP_LIMIT);
    }
  }

  /**
   * The decision for a broadcast from {@code source} that arrived from neighbour {@code from} (for
   * a broadcast this router originates, {@code from} is -1 and {@code source} is itself): deliver
   * locally and copy to the children for that source, or, when {@code from} is not the next hop
   * towards the source, drop it (the tree does not carry it there). A broadcast of this router that
   * arrives from a neighbour ({@code from} not -1) is off the tree too: the tree starts here. The
   * next hop of a source without a route is -1, which no neighbour is: dropped as well.
   */
  public void broadcast(int source, int from, int hopLimit, Partition out) {
    boolean onTree =
        source == self
            ? from == -1
            : from >= 0 && (from == nextHop(source) || isFormerHop(source, from));
    if (!onTree) {
      out.reset(false, true);
      out.dropAll(Partition.Drop.NOT_ON_TREE);
      return;
    }
    out.reset(true, true);
    for (int c : children(source)) {
      if (c != from) {
        out.slot(c);
      }
    }
    if (out.count() > 0 && hopLimit <= 1) {
      out.dropAll(Partition.Drop.HOP_LIMIT);
    }
  }

  private void checkWords(long[] d, Partition out) {
    if (out.words() != words) {
      throw new IllegalArgumentException(
          "partition has " + out.words() + " words, routes need " + words);
    }
    if (d.length < words) {
      throw new IllegalArgumentException(
          "destination set has " + d.length + " words, routes need " + words);
    }
  }
}
