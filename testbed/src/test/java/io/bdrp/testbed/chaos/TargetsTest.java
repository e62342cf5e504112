package io.bdrp.testbed.chaos;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.testbed.net.Emulator;
import io.bdrp.topologies.Bundled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where the faults strike, on the bundled topologies and on small hand-made graphs. */
class TargetsTest {
  private static Targets of(String bundled) {
    return ChaosRun.targets(Emulator.plan(Bundled.load(bundled), "t", 8_000_000));
  }

  private static Targets of(int routers, int[]... links) {
    return new Targets(routers, List.of(links));
  }

  @Test
  void theLinkOfLinkFaultsIsOnACycleOfTheSquare() {
    Targets t = of("routers-4"); // square 0-1-2-3 with the diagonal 0-2: every link on a cycle
    Targets.Link l = t.linkOnCycle();
    assertTrue(t.onCycle(l));
    // Shortest paths over 0-1 and 0-3: 4 each, over the others 2; the first in link order wins.
    assertEquals(new Targets.Link(0, 1), l);
  }

  @Test
  void aBridgeIsNeverChosenAndATreeHasNoLinkOnACycle() {
    // A triangle 0-1-2 with a tail 2-3: the tail is a bridge.
    Targets t = of(4, new int[] {0, 1}, new int[] {1, 2}, new int[] {0, 2}, new int[] {2, 3});
    assertFalse(t.onCycle(new Targets.Link(2, 3)));
    assertTrue(t.onCycle(t.linkOnCycle()));
    Targets tree = of(3, new int[] {0, 1}, new int[] {1, 2});
    var e = assertThrows(IllegalArgumentException.class, tree::linkOnCycle);
    assertTrue(e.getMessage().contains("no cycle"), e.getMessage());
  }

  @Test
  void theKilledRouterIsATransitRouterWhoseLossLeavesTheOthersConnected() {
    // A path 0-1-2 and a square 2-3-4-5: 1 carries the most paths but cutting it isolates 0; 2
    // is an articulation point too; of the rest, the square's corners carry transit.
    Targets t =
        of(
            6,
            new int[] {0, 1},
            new int[] {1, 2},
            new int[] {2, 3},
            new int[] {3, 4},
            new int[] {4, 5},
            new int[] {2, 5});
    int r = t.transitRouter();
    assertTrue(t.othersConnectedWithout(r), "router " + r);
    assertTrue(r == 3 || r == 5, "a square corner next to 2, got " + r);
    Targets mesh = of("routers-8");
    assertTrue(mesh.othersConnectedWithout(mesh.transitRouter()));
  }

  @Test
  void thePartitionSplitsTheNetworkIntoTwoConnectedHalvesWithFewestLinks() {
    // Two triangles joined by one link 2-3: the split is the triangles, cutting that link.
    Targets t =
        of(
            6,
            new int[] {0, 1},
            new int[] {1, 2},
            new int[] {0, 2},
            new int[] {3, 4},
            new int[] {4, 5},
            new int[] {3, 5},
            new int[] {2, 3});
    Targets.Cut c = t.partition();
    assertEquals(List.of(new Targets.Link(2, 3)), c.links());
    assertArrayEquals(new boolean[] {true, true, true, false, false, false}, c.side());
    assertEquals("{0,1,2} from {3,4,5}, cutting [2-3]", c.describe());

    Targets mesh = of("routers-8");
    Targets.Cut m = mesh.partition();
    int a = 0;
    for (boolean s : m.side()) {
      a += s ? 1 : 0;
    }
    assertEquals(4, a, "an even split of 8 routers");
    for (Targets.Link l : m.links()) {
      assertTrue(m.side()[l.a()] != m.side()[l.b()], "a cut link joins the halves: " + l);
    }
  }

  @Test
  void aGivenCutMustSplitTheNetworkAndGivenLinksMustExist() {
    Targets t = of("routers-4");
    var c = t.partition(List.of(new Targets.Link(0, 1), new Targets.Link(1, 2)));
    assertArrayEquals(new boolean[] {true, false, true, true}, c.side(), "router 1 alone");
    var whole =
        assertThrows(
            IllegalArgumentException.class, () -> t.partition(List.of(new Targets.Link(0, 1))));
    assertTrue(whole.getMessage().contains("leaves the network connected"), whole.getMessage());
    var none = assertThrows(IllegalArgumentException.class, () -> t.check(new Targets.Link(1, 3)));
    assertTrue(none.getMessage().contains("no link 1-3"), none.getMessage());
  }

  @Test
  void linksParseInEitherOrder() {
    assertEquals(new Targets.Link(1, 3), Targets.Link.parse("3-1"));
    assertEquals("1-3", Targets.Link.parse(" 1-3 ").toString());
    assertThrows(IllegalArgumentException.class, () -> Targets.Link.parse("1"));
    assertThrows(IllegalArgumentException.class, () -> Targets.Link.parse("a-b"));
    assertThrows(IllegalArgumentException.class, () -> Targets.Link.parse("2-2"));
  }
}
