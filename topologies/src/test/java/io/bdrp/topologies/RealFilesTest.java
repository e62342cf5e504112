package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The four real BRITE files of shared/topologies-real, with the facts SOURCES.md states. */
class RealFilesTest {

  private static ReadResult read(String file) throws IOException {
    Path path = SharedFiles.realTopologies().resolve(file);
    return BriteReader.read(path);
  }

  @ParameterizedTest
  @CsvSource({
    "simrouting-RTWaxman20UNI.brite, 20, 40",
    "simrouting-RTBarabasi20HT.brite, 20, 37",
    "bsai-ASWaxman50.brite, 50, 100",
    "fnss-brite-bottomup100.brite, 100, 200"
  })
  void readsWithDocumentedCountsConnectedAndClean(String file, int nodes, int edges)
      throws IOException {
    ReadResult result = read(file);
    Topology t = result.topology();
    assertEquals(List.of(), result.warnings());
    assertEquals(nodes, t.nodeCount());
    assertEquals(edges, t.edgeCount());
    assertTrue(t.isConnected(), file + " is connected");
    // BRITE writes each node's undirected degree as in- and out-degree: every edge was read.
    for (int r = 0; r < t.nodeCount(); r++) {
      assertEquals(t.nodes().get(r).inDegree(), t.degree(r), file + " router " + r);
      assertEquals(t.nodes().get(r).outDegree(), t.degree(r), file + " router " + r);
    }
  }

  @Test
  void cppBriteModelLineLosesItsNulByteAndNodesLoseTrailingSpace() throws IOException {
    Topology t = read("simrouting-RTWaxman20UNI.brite").topology();
    assertEquals(List.of("Model ( 1 ): 20 1000 100 1 1 2 0.15 0.2 2 10 1024"), t.modelLines());
    Node first = t.nodes().get(0);
    assertEquals(new Node(0, 476.0, 316.0, 9, 9, -1, "RT_NODE"), first);
    Edge e = t.edges().get(0);
    assertEquals(
        new Edge(0, 2, 0, 334.98, 1.12, 313.38, -1, -1, "E_RT", Edge.Direction.UNDIRECTED), e);
  }

  @Test
  void cppBarabasiKeepsScientificBandwidthInItsModelLine() throws IOException {
    Topology t = read("simrouting-RTBarabasi20HT.brite").topology();
    assertEquals(List.of("Model ( 2 ): 20 1000 100 2 2 3 10 1e+06"), t.modelLines());
  }

  @Test
  void javaAsLevelFileHasAsNodesWithTheirOwnAsIds() throws IOException {
    Topology t = read("bsai-ASWaxman50.brite").topology();
    for (Node n : t.nodes()) {
      assertEquals("AS_NODE", n.type());
      assertEquals(n.id(), n.asId());
    }
    for (Edge e : t.edges()) {
      assertEquals("E_AS", e.type());
      assertEquals(Edge.Direction.UNDIRECTED, e.direction());
    }
  }

  @Test
  void bottomUpFileHasTwoModelLinesThirteenAsesAndTwoEdgeTypes() throws IOException {
    Topology t = read("fnss-brite-bottomup100.brite").topology();
    assertEquals(2, t.modelLines().size());
    assertTrue(t.modelLines().get(0).startsWith("Model (6 - BottomUp)"));
    assertTrue(t.modelLines().get(1).startsWith("Model (1 - RTWaxman)"));
    Set<Integer> ases = new HashSet<>();
    for (Node n : t.nodes()) {
      ases.add(n.asId());
    }
    // SOURCES.md says "AS ids 100-112"; the file has 13 distinct ids, 100-111 and 113.
    assertEquals(13, ases.size());
    assertTrue(ases.stream().allMatch(as -> as >= 100 && as <= 113), ases.toString());
    Map<String, Integer> types = new HashMap<>();
    for (Edge e : t.edges()) {
      types.merge(e.type(), 1, Integer::sum);
    }
    assertEquals(Map.of("E_RT", 57, "E_AS_BORDER", 143), types);
  }

  @ParameterizedTest
  @CsvSource({"bsai-ASWaxman50.brite", "fnss-brite-bottomup100.brite"})
  void javaBriteDelayIsLengthOverTheDocumentedLightSpeed(String file) throws IOException {
    for (Edge e : read(file).topology().edges()) {
      assertEquals(
          e.length() / BriteGenerator.LIGHT_SPEED_KM_PER_MS,
          e.delay(),
          1e-12 * e.length(),
          file + " edge " + e.id());
    }
  }

  @ParameterizedTest
  @CsvSource({
    "simrouting-RTWaxman20UNI.brite",
    "simrouting-RTBarabasi20HT.brite",
    "bsai-ASWaxman50.brite",
    "fnss-brite-bottomup100.brite"
  })
  void realFilesSurviveAWriteAndReadBack(String file) throws IOException {
    Topology t = read(file).topology();
    ReadResult again = BriteReader.parse(BriteWriter.toText(t), file + " (rewritten)");
    assertEquals(List.of(), again.warnings());
    assertEquals(t, again.topology());
  }
}
