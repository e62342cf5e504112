package io.bdrp.topologies;

import io.bdrp.topologies.BriteGenerator.Bandwidth;
import io.bdrp.topologies.BriteGenerator.Params;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How each bundled topology is made. {@code routers-1}, {@code -2} and {@code -4} are drawn by hand
 * (the paper's 1-, 2- and 4-broker networks); {@code routers-8} and {@code -42} are generated with
 * fixed parameters, taking the first seed from 1 up whose topology has the paper's diameter.
 */
final class BundledRecipes {
  /** The paper's links carry 1 MByte/s; BRITE writes Mbps. */
  static final double BANDWIDTH_MBPS = 8.0;

  /** Side of the hand-drawn square, in plane units (km). */
  private static final int SIDE = 100;

  private BundledRecipes() {}

  /** A generated topology: everything but the seed, and the diameter the seed must give. */
  record Generated(Params params, int diameter) {}

  static final Map<String, Generated> GENERATED =
      Map.of(
          "routers-8", new Generated(constantBandwidth(Params.waxman(8, 2, 1)), 3),
          "routers-42", new Generated(constantBandwidth(Params.waxman(42, 1, 1)), 11));

  private static Params constantBandwidth(Params p) {
    return p.withBandwidth(Bandwidth.CONSTANT, BANDWIDTH_MBPS, BANDWIDTH_MBPS);
  }

  /** The first seed from 1 up for which {@code recipe} gives its diameter. */
  static Params findSeed(Generated recipe) {
    for (long seed = 1; seed <= 100_000; seed++) {
      Params p = recipe.params().withSeed(seed);
      if (BriteGenerator.generate(p).diameter() == recipe.diameter()) {
        return p;
      }
    }
    throw new IllegalStateException("no seed up to 100000 gives " + recipe);
  }

  /** Every bundled topology by name, in {@link Bundled#names()} order, seeds searched afresh. */
  static Map<String, Topology> all() {
    Map<String, Topology> all = new LinkedHashMap<>();
    all.put(
        "routers-1",
        manual("Model (0 - Manual): one router", new int[][] {{0, 0}}, new int[][] {}));
    all.put(
        "routers-2",
        manual(
            "Model (0 - Manual): two routers " + SIDE + " km apart and the link between them",
            new int[][] {{0, 0}, {SIDE, 0}},
            new int[][] {{1, 0}}));
    all.put(
        "routers-4",
        manual(
            "Model (0 - Manual): a square of side "
                + SIDE
                + " km with corners 0-1-2-3 and the diagonal 0-2",
            new int[][] {{0, 0}, {SIDE, 0}, {SIDE, SIDE}, {0, SIDE}},
            new int[][] {{1, 0}, {2, 1}, {3, 2}, {3, 0}, {2, 0}}));
    for (String name : List.of("routers-8", "routers-42")) {
      all.put(name, BriteGenerator.generate(findSeed(GENERATED.get(name))));
    }
    return all;
  }

  /**
   * A hand-drawn router topology: node {@code i} at {@code points[i]}, edge {@code k} from {@code
   * links[k][0]} to {@code links[k][1]}, with BRITE's attributes computed as the generator does.
   */
  static Topology manual(String model, int[][] points, int[][] links) {
    int[] degree = new int[points.length];
    List<Edge> edges = new ArrayList<>();
    for (int k = 0; k < links.length; k++) {
      int from = links[k][0];
      int to = links[k][1];
      degree[from]++;
      degree[to]++;
      double length =
          StrictMath.hypot(points[from][0] - points[to][0], points[from][1] - points[to][1]);
      edges.add(
          new Edge(
              k,
              from,
              to,
              length,
              length / BriteGenerator.LIGHT_SPEED_KM_PER_MS,
              BANDWIDTH_MBPS,
              Node.NO_AS,
              Node.NO_AS,
              Edge.ROUTER_LINK,
              Edge.Direction.UNDIRECTED));
    }
    List<Node> nodes = new ArrayList<>();
    for (int i = 0; i < points.length; i++) {
      nodes.add(
          new Node(i, points[i][0], points[i][1], degree[i], degree[i], Node.NO_AS, Node.ROUTER));
    }
    String line = model + "; BW=" + BANDWIDTH_MBPS + " Mbps generator=manual";
    return Topology.of(List.of(line), nodes, edges);
  }
}
