package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TopologyTest {

  private static Node node(int id) {
    return new Node(id, id, 0, 0, 0, -1, "RT_NODE");
  }

  private static Edge edge(int id, int from, int to) {
    return new Edge(id, from, to, 1, 1, 1, -1, -1, "E_RT", Edge.Direction.UNDIRECTED);
  }

  /** A path 10 - 20 - 30 - 40 given in shuffled node order. */
  private static Topology path() {
    return Topology.of(
        List.of("Model (0 - Test): path"),
        List.of(node(30), node(10), node(40), node(20)),
        List.of(edge(0, 10, 20), edge(1, 30, 20), edge(2, 30, 40)));
  }

  @Test
  void routersAreNumberedByAscendingFileId() {
    Topology t = path();
    assertEquals(List.of(10, 20, 30, 40), t.nodes().stream().map(Node::id).toList());
    assertEquals(2, t.routerOf(30));
    assertEquals(40, t.nodeIdOf(3));
    assertEquals(4, t.routerNumbers().size());
    assertEquals(1, t.routerNumbers().get(20));
  }

  @Test
  void undirectedViewHasSortedNeighboursAndBfsDistances() {
    Topology t = path();
    assertArrayEquals(new int[] {0, 2}, t.neighbours(1));
    assertEquals(2, t.degree(2));
    assertEquals(1, t.degree(3));
    assertArrayEquals(new int[] {3, 2, 1, 0}, t.hopDistances(3));
    assertTrue(t.isConnected());
    assertEquals(3, t.diameter());
  }

  @Test
  void neighboursReturnsACopy() {
    Topology t = path();
    t.neighbours(1)[0] = 99;
    assertArrayEquals(new int[] {0, 2}, t.neighbours(1));
  }

  @Test
  void disconnectedTopologyHasUnreachableRoutersAndNoDiameter() {
    Topology t = Topology.of(List.of(), List.of(node(0), node(1), node(2)), List.of(edge(0, 0, 1)));
    assertFalse(t.isConnected());
    assertArrayEquals(new int[] {0, 1, -1}, t.hopDistances(0));
    IllegalStateException e = assertThrows(IllegalStateException.class, t::diameter);
    assertTrue(e.getMessage().contains("not connected"), e.getMessage());
  }

  @Test
  void singleRouterIsConnectedWithDiameterZero() {
    Topology t = Topology.of(List.of(), List.of(node(5)), List.of());
    assertTrue(t.isConnected());
    assertEquals(0, t.diameter());
    assertArrayEquals(new int[0], t.neighbours(0));
  }

  @Test
  void equalityIgnoresNodeOrderButNotEdgesOrModelLines() {
    Topology a = path();
    Topology b =
        Topology.of(
            List.of("Model (0 - Test): path"),
            List.of(node(10), node(20), node(30), node(40)),
            List.of(edge(0, 10, 20), edge(1, 30, 20), edge(2, 30, 40)));
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    Topology otherModel = Topology.of(List.of("Model x"), b.nodes(), b.edges());
    assertNotEquals(a, otherModel);
    List<Edge> reversed = new ArrayList<>(b.edges());
    java.util.Collections.reverse(reversed);
    assertNotEquals(a, Topology.of(b.modelLines(), b.nodes(), reversed));
  }

  @Test
  void rejectsWhatTheUndirectedViewCannotHold() {
    List<Node> two = List.of(node(0), node(1));
    assertEquals(
        "edge 1 duplicates an earlier edge between nodes 1 and 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> Topology.of(List.of(), two, List.of(edge(0, 0, 1), edge(1, 1, 0))))
            .getMessage());
    assertEquals(
        "edge 0 is a self-loop on node 1",
        assertThrows(
                IllegalArgumentException.class,
                () -> Topology.of(List.of(), two, List.of(edge(0, 1, 1))))
            .getMessage());
    assertEquals(
        "edge 0 refers to unknown node 7",
        assertThrows(
                IllegalArgumentException.class,
                () -> Topology.of(List.of(), two, List.of(edge(0, 1, 7))))
            .getMessage());
    assertEquals(
        "duplicate node id 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> Topology.of(List.of(), List.of(node(0), node(0)), List.of()))
            .getMessage());
    assertEquals(
        "duplicate edge id 3",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    Topology.of(
                        List.of(),
                        List.of(node(0), node(1), node(2)),
                        List.of(edge(3, 0, 1), edge(3, 1, 2))))
            .getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> Topology.of(List.of(), List.of(), List.of()));
  }

  @Test
  void modelLinesMustBeWritableAsOneModelLine() {
    List<Node> one = List.of(node(0));
    for (String bad : List.of("Topology x", "Model a\nb", " Model", "Model x ", "Model\u0000")) {
      assertThrows(
          IllegalArgumentException.class, () -> Topology.of(List.of(bad), one, List.of()), bad);
    }
  }

  @Test
  void nodeAndEdgeFieldsAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> new Node(-1, 0, 0, 0, 0, -1, "RT_NODE"));
    assertThrows(
        IllegalArgumentException.class, () -> new Node(0, Double.NaN, 0, 0, 0, -1, "RT_NODE"));
    assertThrows(IllegalArgumentException.class, () -> new Node(0, 0, 0, -1, 0, -1, "RT_NODE"));
    assertThrows(IllegalArgumentException.class, () -> new Node(0, 0, 0, 0, 0, -1, "RT NODE"));
    assertThrows(IllegalArgumentException.class, () -> new Node(0, 0, 0, 0, 0, -1, ""));
    assertThrows(
        IllegalArgumentException.class,
        () -> new Edge(0, 0, 1, -1, 0, 0, -1, -1, "E_RT", Edge.Direction.ABSENT));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new Edge(
                0, 0, 1, 0, Double.POSITIVE_INFINITY, 0, -1, -1, "E_RT", Edge.Direction.ABSENT));
    assertThrows(
        IllegalArgumentException.class,
        () -> new Edge(0, 0, 1, 0, 0, 0, -1, -1, "E\tRT", Edge.Direction.ABSENT));
  }
}
