package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ForwardingTableTest {
  private static final int MAX = 200;

  private static long[] set(int... routers) {
    long[] d = new long[(MAX + 63) >>> 6];
    for (int r : routers) {
      d[r >>> 6] |= 1L << r;
    }
    return d;
  }

  private static boolean has(long[] d, int r) {
    return (d[r >>> 6] & (1L << r)) != 0;
  }

  /** Router 0 with neighbours 1 and 2; 3 and 4 behind 1, 5 and 130 behind 2, 7 unreachable. */
  private static ForwardingTable square() {
    int[] hops = new int[MAX];
    Arrays.fill(hops, -1);
    hops[1] = 1;
    hops[3] = 1;
    hops[4] = 1;
    hops[2] = 2;
    hops[5] = 2;
    hops[130] = 2;
    int[][] kids = new int[MAX][];
    kids[0] = new int[] {2, 1};
    kids[3] = new int[] {2};
    return ForwardingTable.of(0, MAX, hops, kids);
  }

  @Test
  void partitionGivesEachDestinationToItsNextHop() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.partition(set(3, 5, 130, 2), 10, p);
    assertFalse(p.local());
    assertEquals(2, p.count());
    for (int i = 0; i < p.count(); i++) {
      if (p.hop(i) == 1) {
        assertArrayEquals(set(3), p.set(i));
      } else {
        assertEquals(2, p.hop(i));
        assertArrayEquals(set(2, 5, 130), p.set(i));
      }
    }
    assertEquals(0, p.unreachable());
    assertEquals(Partition.Drop.NONE, p.drop());
  }

  @Test
  void selfInTheSetMeansLocalDeliveryAndIsNotForwarded() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.partition(set(0, 4), 10, p);
    assertTrue(p.local());
    assertEquals(1, p.count());
    assertEquals(1, p.hop(0));
    assertArrayEquals(set(4), p.set(0));
  }

  @Test
  void routersWithoutRouteAreCountedNotSent() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.partition(set(7, 8, 3), 10, p);
    assertEquals(2, p.unreachable());
    assertEquals(1, p.count());
    assertArrayEquals(set(3), p.set(0));
  }

  @Test
  void exhaustedHopLimitDropsTheCopies() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.partition(set(0, 3), 1, p);
    assertTrue(p.local(), "local delivery still happens");
    assertEquals(0, p.count());
    assertEquals(Partition.Drop.HOP_LIMIT, p.drop());
    t.partition(set(0), 1, p);
    assertEquals(Partition.Drop.NONE, p.drop(), "nothing to forward, nothing dropped");
  }

  @Test
  void aPartitionIsClearedBetweenDecisions() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.partition(set(3, 4, 5), 10, p);
    t.partition(set(130), 10, p);
    assertEquals(1, p.count());
    assertArrayEquals(set(130), p.set(0));
  }

  @Test
  void broadcastFollowsChildrenAndChecksTheParent() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.broadcast(0, -1, 10, p);
    assertTrue(p.broadcast());
    assertEquals(2, p.count());
    assertEquals(1, p.hop(0));
    assertEquals(2, p.hop(1));

    // From source 3, whose next hop is 1: accepted from 1, copied to child 2.
    t.broadcast(3, 1, 10, p);
    assertTrue(p.local());
    assertEquals(1, p.count());
    assertEquals(2, p.hop(0));

    // The same broadcast arriving from 2 is not on the tree.
    t.broadcast(3, 2, 10, p);
    assertFalse(p.local());
    assertEquals(0, p.count());
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop());
  }

  /**
   * A source may have several former next hops within their grace (a router that changed twice
   * before the first stopped sending): copies are taken from each of them, and from no other
   * neighbour.
   */
  @Test
  void broadcastsAreTakenFromEveryFormerNextHop() {
    int[] next = new int[16];
    java.util.Arrays.fill(next, -1);
    next[1] = 1;
    next[2] = 2;
    next[4] = 4;
    next[5] = 5;
    next[9] = 4;
    next[7] = 5;
    ForwardingTable t =
        ForwardingTable.of(
            0, 16, next, new int[16][], new int[][] {{9, 2}, {7, 1}, {9, 1}, {7, 2}, {7, 4}});
    Partition p = t.newPartition();
    for (int from : new int[] {4, 2, 1}) {
      t.broadcast(9, from, 10, p);
      assertEquals(Partition.Drop.NONE, p.drop(), "source 9 from " + from);
    }
    t.broadcast(9, 5, 10, p);
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop(), "5 was never the next hop towards 9");
    for (int from : new int[] {5, 1, 2, 4}) {
      t.broadcast(7, from, 10, p);
      assertEquals(Partition.Drop.NONE, p.drop(), "source 7 from " + from);
    }
    t.broadcast(5, 4, 10, p);
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop(), "no former next hop towards 5");
  }

  /**
   * A broadcast of this router itself that comes from a neighbour, and one of a source without a
   * route that comes from nowhere (-1), are off the tree. Guards against the old check, which
   * skipped the tree for this router's own broadcasts whoever sent them and took -1 for the next
   * hop of an unreachable source.
   */
  @Test
  void aBroadcastOfThisRouterFromANeighbourIsNotOnTheTree() {
    ForwardingTable t = square();
    Partition p = t.newPartition();
    t.broadcast(0, 1, 10, p);
    assertFalse(p.local());
    assertEquals(0, p.count());
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop());
    t.broadcast(7, -1, 10, p);
    assertFalse(p.local());
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop());
  }

  /** Only the routers of D with a route count in reachableIn, and self never does. */
  @Test
  void reachableInCountsTheRoutersOfDWithARoute() {
    ForwardingTable t = square();
    assertEquals(7 - 1, t.reachableCount());
    assertEquals(3, t.reachableIn(set(0, 3, 5, 7, 130)));
    assertEquals(0, t.reachableIn(set(7, 199)));
    assertEquals(
        2, t.reachableIn(new long[] {(1L << 3) | (1L << 4)}), "fewer words: the rest empty");
  }

  @Test
  void randomTablesPartitionExactly() {
    SplittableRandom rnd = new SplittableRandom(11);
    for (int round = 0; round < 500; round++) {
      int self = rnd.nextInt(MAX);
      int[] nbrs = rnd.ints(1 + rnd.nextInt(6), 0, MAX).toArray();
      int[] hops = new int[MAX];
      for (int r = 0; r < MAX; r++) {
        hops[r] = rnd.nextInt(5) == 0 ? -1 : nbrs[rnd.nextInt(nbrs.length)];
      }
      ForwardingTable t = ForwardingTable.of(self, MAX, hops, new int[0][]);
      long[] d = new long[t.words()];
      for (int r = 0; r < MAX; r++) {
        if (rnd.nextBoolean()) {
          d[r >>> 6] |= 1L << r;
        }
      }
      Partition p = t.newPartition();
      t.partition(d, 5, p);
      int unreachable = 0;
      for (int r = 0; r < MAX; r++) {
        if (!has(d, r) || r == self) {
          continue;
        }
        int carriers = 0;
        for (int i = 0; i < p.count(); i++) {
          if (has(p.set(i), r)) {
            carriers++;
            assertEquals(hops[r], p.hop(i), "router " + r + " sent towards its next hop");
          }
        }
        if (hops[r] < 0) {
          unreachable++;
          assertEquals(0, carriers);
        } else {
          assertEquals(1, carriers, "router " + r + " in exactly one copy");
        }
      }
      for (int i = 0; i < p.count(); i++) {
        for (int r = 0; r < MAX; r++) {
          if (has(p.set(i), r)) {
            assertTrue(has(d, r) && r != self, "copy carries only routers of D");
          }
        }
      }
      assertEquals(unreachable, p.unreachable());
      assertEquals(has(d, self), p.local());
    }
  }

  @Test
  void mismatchedSizesAreRefused() {
    ForwardingTable t = square();
    assertThrows(
        IllegalArgumentException.class, () -> t.partition(new long[1], 3, t.newPartition()));
    assertThrows(IllegalArgumentException.class, () -> t.partition(set(1), 3, new Partition(1, 2)));
    assertThrows(
        IllegalArgumentException.class, () -> ForwardingTable.of(MAX, MAX, new int[0], null));
  }
}
