package io.bdrp.topologies;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An immutable BRITE topology: the model line(s) that describe how it was made, its nodes and its
 * edges, plus the undirected graph view that routing uses.
 *
 * <p><b>Router numbers.</b> File ids may start anywhere and have gaps (a top-down BRITE file
 * numbers its routers from 30). The routing view renumbers the nodes densely: router {@code r} is
 * the node with the {@code r}-th smallest file id, so {@code 0..nodeCount()-1} and {@link
 * #nodes()}{@code .get(r)} is router {@code r}'s node. {@link #routerOf(int)} and {@link
 * #nodeIdOf(int)} translate.
 *
 * <p><b>Undirected view.</b> Every edge links its two routers in both directions, whatever its
 * direction field says. A topology therefore never holds a self-loop nor two edges between the same
 * two nodes (in either direction); {@link BriteReader} drops those with a warning.
 *
 * <p><b>Equality</b> compares the model lines, the nodes (in router order) and the edges (in file
 * order), so a topology written by {@link BriteWriter} and read back by {@link BriteReader} equals
 * the original.
 *
 * <p>Instances are immutable and safe to share between threads; the accessors that return arrays
 * return fresh copies.
 */
public final class Topology {
  private final List<String> modelLines;
  private final List<Node> nodes;
  private final List<Edge> edges;
  private final Map<Integer, Integer> routerOfId;
  private final int[][] adjacency;

  private Topology(List<String> modelLines, List<Node> nodes, List<Edge> edges) {
    this.modelLines = List.copyOf(modelLines);
    List<Node> sorted = new ArrayList<>(nodes);
    sorted.sort(Comparator.comparingInt(Node::id));
    this.nodes = List.copyOf(sorted);
    this.edges = List.copyOf(edges);
    if (this.nodes.isEmpty()) {
      throw new IllegalArgumentException("a topology needs at least one node");
    }
    for (String line : this.modelLines) {
      checkModelLine(line);
    }
    Map<Integer, Integer> index = new HashMap<>();
    for (int r = 0; r < this.nodes.size(); r++) {
      Integer previous = index.put(this.nodes.get(r).id(), r);
      if (previous != null) {
        throw new IllegalArgumentException("duplicate node id " + this.nodes.get(r).id());
      }
    }
    this.routerOfId = Map.copyOf(index);
    int[] degree = new int[this.nodes.size()];
    Set<Integer> edgeIds = new HashSet<>();
    Set<Long> pairs = new HashSet<>();
    for (Edge e : this.edges) {
      if (!edgeIds.add(e.id())) {
        throw new IllegalArgumentException("duplicate edge id " + e.id());
      }
      Integer a = index.get(e.from());
      Integer b = index.get(e.to());
      if (a == null || b == null) {
        throw new IllegalArgumentException(
            "edge " + e.id() + " refers to unknown node " + (a == null ? e.from() : e.to()));
      }
      if (a.equals(b)) {
        throw new IllegalArgumentException(
            "edge " + e.id() + " is a self-loop on node " + e.from());
      }
      if (!pairs.add(pairKey(a, b))) {
        throw new IllegalArgumentException(
            "edge "
                + e.id()
                + " duplicates an earlier edge between nodes "
                + e.from()
                + " and "
                + e.to());
      }
      degree[a]++;
      degree[b]++;
    }
    int[][] adj = new int[this.nodes.size()][];
    for (int r = 0; r < adj.length; r++) {
      adj[r] = new int[degree[r]];
    }
    int[] fill = new int[adj.length];
    for (Edge e : this.edges) {
      int a = index.get(e.from());
      int b = index.get(e.to());
      adj[a][fill[a]++] = b;
      adj[b][fill[b]++] = a;
    }
    for (int[] row : adj) {
      Arrays.sort(row);
    }
    this.adjacency = adj;
  }

  /**
   * A topology of the given model lines, nodes (any order) and edges (kept in the given order).
   *
   * @param modelLines the {@code Model ...} lines, each starting with {@code Model}, trimmed, on
   *     one line; may be empty
   * @param nodes at least one node, with distinct ids
   * @param edges edges with distinct ids between known, distinct nodes, at most one per pair of
   *     nodes
   * @throws IllegalArgumentException naming the offending line, id or pair
   */
  public static Topology of(List<String> modelLines, List<Node> nodes, List<Edge> edges) {
    return new Topology(modelLines, nodes, edges);
  }

  /** Key of the unordered pair {a, b} of router numbers. */
  static long pairKey(int a, int b) {
    return ((long) Math.min(a, b) << 32) | Math.max(a, b);
  }

  static void checkModelLine(String line) {
    if (line == null || !line.startsWith("Model")) {
      throw new IllegalArgumentException("model line must start with \"Model\", got: " + line);
    }
    if (!line.equals(line.strip())) {
      throw new IllegalArgumentException(
          "model line must not start or end with white space: \"" + line + "\"");
    }
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (Character.isISOControl(c) && c != '\t') {
        throw new IllegalArgumentException(
            "model line holds control character U+"
                + String.format("%04X", (int) c)
                + " at column "
                + (i + 1));
      }
    }
  }

  /** The {@code Model ...} lines: one for flat topologies, two for hierarchical ones. */
  public List<String> modelLines() {
    return modelLines;
  }

  /** The nodes sorted by file id; index {@code r} is router number {@code r}. */
  public List<Node> nodes() {
    return nodes;
  }

  /** The edges in file order. */
  public List<Edge> edges() {
    return edges;
  }

  /** Number of nodes, i.e. of routers. */
  public int nodeCount() {
    return nodes.size();
  }

  /** Number of edges, i.e. of undirected links. */
  public int edgeCount() {
    return edges.size();
  }

  /**
   * The router number of the node with file id {@code nodeId}.
   *
   * @throws IllegalArgumentException if there is no such node
   */
  public int routerOf(int nodeId) {
    Integer r = routerOfId.get(nodeId);
    if (r == null) {
      throw new IllegalArgumentException("no node with id " + nodeId);
    }
    return r;
  }

  /**
   * The file id of router {@code router}.
   *
   * @throws IndexOutOfBoundsException if {@code router} is not in {@code 0..nodeCount()-1}
   */
  public int nodeIdOf(int router) {
    return nodes.get(router).id();
  }

  /** The map from file id to router number (unmodifiable). */
  public Map<Integer, Integer> routerNumbers() {
    return routerOfId;
  }

  /**
   * The neighbours of {@code router}, as router numbers in ascending order (a fresh array).
   *
   * @throws IndexOutOfBoundsException if {@code router} is not in {@code 0..nodeCount()-1}
   */
  public int[] neighbours(int router) {
    return adjacency[checkRouter(router)].clone();
  }

  /** The number of links of {@code router} in the undirected view. */
  public int degree(int router) {
    return adjacency[checkRouter(router)].length;
  }

  /**
   * Hop distances from {@code router} to every router (breadth-first search over the undirected
   * view); {@code -1} for routers that cannot be reached.
   */
  public int[] hopDistances(int router) {
    int[] dist = new int[adjacency.length];
    Arrays.fill(dist, -1);
    ArrayDeque<Integer> queue = new ArrayDeque<>();
    dist[checkRouter(router)] = 0;
    queue.add(router);
    while (!queue.isEmpty()) {
      int u = queue.poll();
      for (int v : adjacency[u]) {
        if (dist[v] < 0) {
          dist[v] = dist[u] + 1;
          queue.add(v);
        }
      }
    }
    return dist;
  }

  /** Whether every router can reach every other one. */
  public boolean isConnected() {
    for (int d : hopDistances(0)) {
      if (d < 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The diameter in hops: the largest hop distance between two routers (0 for a single router).
   *
   * @throws IllegalStateException if the topology is not connected
   */
  public int diameter() {
    int diameter = 0;
    for (int r = 0; r < adjacency.length; r++) {
      for (int d : hopDistances(r)) {
        if (d < 0) {
          throw new IllegalStateException(
              "the topology is not connected: router "
                  + r
                  + " (node "
                  + nodeIdOf(r)
                  + ") cannot reach every router");
        }
        diameter = Math.max(diameter, d);
      }
    }
    return diameter;
  }

  private int checkRouter(int router) {
    if (router < 0 || router >= adjacency.length) {
      throw new IndexOutOfBoundsException(
          "router " + router + " is not in 0.." + (adjacency.length - 1));
    }
    return router;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Topology t
        && modelLines.equals(t.modelLines)
        && nodes.equals(t.nodes)
        && edges.equals(t.edges);
  }

  @Override
  public int hashCode() {
    return (modelLines.hashCode() * 31 + nodes.hashCode()) * 31 + edges.hashCode();
  }

  @Override
  public String toString() {
    return "Topology["
        + nodes.size()
        + " nodes, "
        + edges.size()
        + " edges"
        + (modelLines.isEmpty() ? "" : ", " + modelLines.get(0))
        + "]";
  }
}
