package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.topologies.BriteGenerator.Bandwidth;
import io.bdrp.topologies.BriteGenerator.Model;
import io.bdrp.topologies.BriteGenerator.Params;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class BriteGeneratorTest {

  private static Params params(boolean waxman, int n, int m, long seed) {
    return waxman ? Params.waxman(n, m, seed) : Params.barabasiAlbert(n, m, seed);
  }

  /** Edges of incremental growth: a path over the first min(N, m) nodes, then m per node. */
  private static int expectedEdges(int n, int m) {
    return Math.min(n, m) - 1 + m * Math.max(0, n - m);
  }

  @Property(tries = 300)
  void growthGivesAConnectedGraphWithMLinksPerJoiningNode(
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 80) int n,
      @ForAll @IntRange(min = 1, max = 5) int m,
      @ForAll boolean waxman) {
    Topology t = BriteGenerator.generate(params(waxman, n, m, seed).withPlane(40, 10));
    assertEquals(n, t.nodeCount());
    assertEquals(expectedEdges(n, m), t.edgeCount());
    assertTrue(t.isConnected());
    int[] linksMade = new int[n];
    for (Edge e : t.edges()) {
      assertTrue(e.to() < e.from(), "edges go from the joining node to an earlier one: " + e);
      linksMade[e.from()]++;
    }
    for (int u = 1; u < n; u++) {
      assertEquals(u < m ? 1 : m, linksMade[u], "links made by node " + u);
    }
  }

  @Property(tries = 200)
  void nodesAndEdgesCarryBriteAttributes(
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 60) int n,
      @ForAll @IntRange(min = 1, max = 3) int m,
      @ForAll boolean waxman) {
    int hs = 50;
    Params p =
        params(waxman, n, m, seed).withPlane(hs, 5).withBandwidth(Bandwidth.UNIFORM, 2.5, 7.5);
    Topology t = BriteGenerator.generate(p);
    assertEquals(List.of(p.modelLine()), t.modelLines());
    Set<Long> points = new HashSet<>();
    for (Node node : t.nodes()) {
      assertEquals(node.x(), Math.rint(node.x()));
      assertTrue(node.x() >= 0 && node.x() < hs && node.y() >= 0 && node.y() < hs, node.toString());
      assertTrue(points.add((long) node.x() * hs + (long) node.y()), "one node per point");
      int degree = t.degree(t.routerOf(node.id()));
      assertEquals(new Node(node.id(), node.x(), node.y(), degree, degree, -1, "RT_NODE"), node);
    }
    for (Edge e : t.edges()) {
      Node a = t.nodes().get(t.routerOf(e.from()));
      Node b = t.nodes().get(t.routerOf(e.to()));
      assertEquals(Math.hypot(a.x() - b.x(), a.y() - b.y()), e.length(), 1e-9);
      assertEquals(e.length() / 299.792458, e.delay(), 1e-12);
      assertTrue(e.bandwidth() >= 2.5 && e.bandwidth() <= 7.5, e.toString());
      assertEquals("E_RT", e.type());
      assertEquals(Edge.Direction.UNDIRECTED, e.direction());
    }
  }

  @Property(tries = 50)
  void sameParamsGiveTheSameTopology(@ForAll long seed, @ForAll boolean waxman) {
    Params p = params(waxman, 50, 2, seed).withBandwidth(Bandwidth.UNIFORM, 1, 100);
    assertEquals(BriteGenerator.generate(p), BriteGenerator.generate(p));
  }

  @Test
  void differentSeedsGiveDifferentTopologies() {
    Set<List<Edge>> seen = new HashSet<>();
    for (long seed = 1; seed <= 20; seed++) {
      seen.add(BriteGenerator.generate(Params.waxman(30, 2, seed)).edges());
    }
    assertEquals(20, seen.size());
  }

  @Test
  void constantBandwidthIsBwMin() {
    Topology t =
        BriteGenerator.generate(
            Params.barabasiAlbert(20, 2, 1).withBandwidth(Bandwidth.CONSTANT, 8, 8));
    assertTrue(t.edges().stream().allMatch(e -> e.bandwidth() == 8.0));
  }

  @Test
  void uniformBandwidthVaries() {
    Topology t =
        BriteGenerator.generate(Params.waxman(20, 2, 1).withBandwidth(Bandwidth.UNIFORM, 1, 2));
    assertTrue(t.edges().stream().map(Edge::bandwidth).distinct().count() > 1);
  }

  private static int maxDegree(Topology t) {
    int max = 0;
    for (int r = 0; r < t.nodeCount(); r++) {
      max = Math.max(max, t.degree(r));
    }
    return max;
  }

  @Test
  void barabasiAlbertGrowsHubsThatWaxmanDoesNot() {
    // Preferential attachment gives a heavy-tailed degree distribution: its largest degree grows
    // like sqrt(N), while Waxman's grows like log(N). At N = 1000 the gap is several-fold.
    for (long seed = 1; seed <= 5; seed++) {
      int ba = maxDegree(BriteGenerator.generate(Params.barabasiAlbert(1000, 2, seed)));
      int wax = maxDegree(BriteGenerator.generate(Params.waxman(1000, 2, seed)));
      assertTrue(ba > 2 * wax, "seed " + seed + ": BA max degree " + ba + ", Waxman " + wax);
    }
  }

  private static double meanLength(Topology t) {
    return t.edges().stream().mapToDouble(Edge::length).average().orElseThrow();
  }

  @Test
  void smallWaxmanBetaFavoursShortLinks() {
    // BA ignores distance: its links are as long as random pairs (about 0.52 HS). Waxman with a
    // small beta mostly links a joining node to its nearest earlier nodes.
    for (long seed = 1; seed <= 3; seed++) {
      double local =
          meanLength(BriteGenerator.generate(Params.waxman(500, 2, seed).withWaxman(0.15, 0.05)));
      double ba = meanLength(BriteGenerator.generate(Params.barabasiAlbert(500, 2, seed)));
      assertTrue(local < ba / 2, "seed " + seed + ": Waxman " + local + ", BA " + ba);
    }
  }

  @Test
  void alphaScalesAllProbabilitiesAlikeAndLeavesTheGraphAlone() {
    Topology a = BriteGenerator.generate(Params.waxman(60, 2, 9).withWaxman(0.15, 0.2));
    Topology b = BriteGenerator.generate(Params.waxman(60, 2, 9).withWaxman(0.9, 0.2));
    assertEquals(a.edges(), b.edges());
    assertNotEquals(a.modelLines(), b.modelLines());
  }

  @Test
  void tinyBetaStillPicksTheNearestNodes() {
    // exp(-d / (beta L)) underflows for every candidate; weights relative to the nearest do not.
    Topology t = BriteGenerator.generate(Params.waxman(30, 1, 3).withWaxman(0.15, 1e-9));
    for (Edge e : t.edges()) {
      Node u = t.nodes().get(e.from());
      double nearest = Double.POSITIVE_INFINITY;
      for (int v = 0; v < e.from(); v++) {
        Node w = t.nodes().get(v);
        nearest = Math.min(nearest, Math.hypot(u.x() - w.x(), u.y() - w.y()));
      }
      assertEquals(nearest, e.length(), 1e-9, "node " + e.from() + " links to its nearest");
    }
  }

  @Property(tries = 200)
  void modelLineRecordsEveryParameter(
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 10_000) int n,
      @ForAll @IntRange(min = 1, max = 9) int m,
      @ForAll boolean waxman,
      @ForAll boolean uniform) {
    Params p =
        params(waxman, n, m, seed)
            .withPlane(1000 + (int) (seed & 0xff), 1 + (int) ((seed >>> 8) & 0x3f))
            .withBandwidth(uniform ? Bandwidth.UNIFORM : Bandwidth.CONSTANT, 0.1, 1e6 / 3);
    if (waxman) {
      p = p.withWaxman(1.0 / 3, 0.7 + Math.floorMod(seed, 5));
    }
    assertEquals(p, Params.fromModelLine(p.modelLine()));
  }

  @Test
  void modelLineUsesBriteNames() {
    assertEquals(
        "Model (1 - RTWaxman): N=42 HS=1000 LS=100 NP=1 IG=1 m=1 alpha=0.15 beta=0.2 BWdist=1"
            + " BWmin=8.0 BWmax=8.0 seed=3 generator=bdrp",
        Params.waxman(42, 1, 3).withBandwidth(Bandwidth.CONSTANT, 8, 8).modelLine());
    assertEquals(
        "Model (2 - RTBarabasi): N=8 HS=1000 LS=100 NP=1 IG=1 m=2 BWdist=2 BWmin=1.0 BWmax=2.0"
            + " seed=-5 generator=bdrp",
        Params.barabasiAlbert(8, 2, -5).withBandwidth(Bandwidth.UNIFORM, 1, 2).modelLine());
  }

  @Test
  void fromModelLineRejectsLinesItDidNotWrite() {
    String good = Params.waxman(42, 1, 3).modelLine();
    for (String bad :
        List.of(
            "Model (1 - RTWaxman):  100 1000 100 1  2  0.15 0.2 1 1 10.0 1024.0",
            good.replace("generator=bdrp", "generator=brite"),
            good.replace(" seed=3", ""),
            good.replace("seed=3", "seed=3 colour=red"),
            good.replace("seed=3", "seed=3 seed=4"),
            good.replace("NP=1", "NP=2"),
            good.replace("BWdist=1", "BWdist=3"),
            good.replace("N=42", "N=x"),
            good.replace("RTWaxman", "RTGlp"),
            good.replace("alpha=0.15", "alpha=2"))) {
      assertThrows(IllegalArgumentException.class, () -> Params.fromModelLine(bad), bad);
    }
  }

  @Test
  void paramsNameTheKnobThatIsOutOfRange() {
    Params w = Params.waxman(10, 2, 1);
    record Case(String knob, Runnable make) {}
    List<Case> cases =
        List.of(
            new Case("N", () -> Params.waxman(0, 2, 1)),
            new Case("m", () -> Params.waxman(10, 0, 1)),
            new Case("HS", () -> w.withPlane(0, 1)),
            new Case("LS", () -> w.withPlane(10, 11)),
            new Case("HS*HS", () -> Params.waxman(10, 2, 1).withPlane(3, 1)),
            new Case("alpha", () -> w.withWaxman(0, 0.2)),
            new Case("alpha", () -> w.withWaxman(1.5, 0.2)),
            new Case("beta", () -> w.withWaxman(0.15, 0)),
            new Case("beta", () -> w.withWaxman(0.15, Double.NaN)),
            new Case("BWmin", () -> w.withBandwidth(Bandwidth.UNIFORM, 0, 1)),
            new Case("BWmax", () -> w.withBandwidth(Bandwidth.UNIFORM, 2, 1)),
            new Case("alpha and beta", () -> Params.barabasiAlbert(10, 2, 1).withWaxman(0.1, 0.1)),
            new Case(
                "model", () -> new Params(null, 1, 1, 1, 1, 0, 0, Bandwidth.CONSTANT, 1, 1, 0)));
    for (Case c : cases) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c.make()::run);
      assertTrue(e.getMessage().contains(c.knob()), c.knob() + ": " + e.getMessage());
    }
  }

  @Test
  void aFullPlaneIsFilled() {
    Topology t = BriteGenerator.generate(Params.barabasiAlbert(16, 1, 7).withPlane(4, 1));
    assertEquals(16, t.nodes().stream().map(n -> n.x() * 4 + n.y()).distinct().count());
    assertEquals(Model.BARABASI_ALBERT, Params.fromModelLine(t.modelLines().get(0)).model());
  }
}
