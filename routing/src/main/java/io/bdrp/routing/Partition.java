package io.bdrp.routing;

/**
 * The outcome of one forwarding decision, written into a reusable object so that the forwarding
 * path allocates nothing: whether the message is delivered to local hosts here, and the copies to
 * send, one per next hop, each with the part of the destination set behind that hop (or, for a
 * broadcast, no set: the copy follows the tree).
 *
 * <p>Owned by one forwarding thread; each decision overwrites the previous one.
 */
public final class Partition {
  private final int words;
  private long[][] sets;
  private int[] hops;
  private int count;
  private boolean local;
  private boolean broadcast;
  private int unreachable;
  private Drop drop = Drop.NONE;

  /** Why a packet was not forwarded further; counted by the caller. */
  public enum Drop {
    /** Not dropped. */
    NONE,
    /** Its hop limit ran out while it still had routers to reach. */
    HOP_LIMIT,
    /**
     * A broadcast that arrived from a neighbour other than this router's next hop towards its
     * source: a copy the tree does not send, seen only while routes change.
     */
    NOT_ON_TREE
  }

  /**
   * A partition for destination sets of {@code words} 64-bit words, with room for {@code maxHops}
   * next hops (it grows if a decision needs more).
   */
  public Partition(int words, int maxHops) {
    this.words = words;
    this.sets = new long[maxHops][words];
    this.hops = new int[maxHops];
  }

  /** Words of each destination set. */
  public int words() {
    return words;
  }

  /** The number of copies to send. */
  public int count() {
    return count;
  }

  /** The neighbour that copy {@code i} goes to. */
  public int hop(int i) {
    return hops[i];
  }

  /**
   * The destination set of copy {@code i}: routers behind {@link #hop(int) hop(i)}, as a bitmap.
   * Not meaningful for a broadcast. The array is reused by the next decision.
   */
  public long[] set(int i) {
    return sets[i];
  }

  /** Whether the message is delivered to this router's local hosts (after exact matching). */
  public boolean local() {
    return local;
  }

  /** Whether the copies are broadcast copies that follow the tree from the source. */
  public boolean broadcast() {
    return broadcast;
  }

  /** Routers of the destination set that this router has no route to (dropped, counted). */
  public int unreachable() {
    return unreachable;
  }

  /** Why forwarding stopped here, if it did. */
  public Drop drop() {
    return drop;
  }

  void reset(boolean local, boolean broadcast) {
    for (int i = 0; i < count; i++) {
      java.util.Arrays.fill(sets[i], 0L);
    }
    this.count = 0;
    this.local = local;
    this.broadcast = broadcast;
    this.unreachable = 0;
    this.drop = Drop.NONE;
  }

  /** The copy for {@code hop}, added if new; its set is empty when added. */
  int slot(int hop) {
    for (int i = 0; i < count; i++) {
      if (hops[i] == hop) {
        return i;
      }
    }
    if (count == hops.length) {
      // Only when a snapshot has more neighbours than any before: rare, and amortised.
      int n = Math.max(1, hops.length * 2);
      hops = java.util.Arrays.copyOf(hops, n);
      sets = java.util.Arrays.copyOf(sets, n);
      for (int i = count; i < n; i++) {
        sets[i] = new long[words];
      }
    }
    hops[count] = hop;
    return count++;
  }

  void clearLocal() {
    local = false;
  }

  void addUnreachable(int n) {
    unreachable += n;
  }

  void dropAll(Drop why) {
    for (int i = 0; i < count; i++) {
      java.util.Arrays.fill(sets[i], 0L);
    }
    count = 0;
    drop = why;
  }
}
