package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** One focused test per quirk of real BRITE files, and per kind of malformed input. */
class BriteReaderTest {

  /** A small Java-BRITE style file: a triangle 0-1-2 plus node 3 hanging off 2. */
  private static final String JAVA =
      """
      Topology: ( 4 Nodes, 4 Edges )
      Model (1 - RTWaxman):  4 10 5 1  1  0.15 0.2 1 1 10.0 1024.0

      Nodes: ( 4 )
      0\t1\t3\t2\t2\t-1\tRT_NODE
      1\t0\t3\t2\t2\t-1\tRT_NODE
      2\t4\t3\t3\t3\t-1\tRT_NODE
      3\t3\t1\t1\t1\t-1\tRT_NODE


      Edges: ( 4 )
      0\t1\t0\t1.0\t0.5\t10.0\t-1\t-1\tE_RT\tU
      1\t2\t0\t3.0\t0.5\t10.0\t-1\t-1\tE_RT\tU
      2\t2\t1\t4.0\t0.5\t10.0\t-1\t-1\tE_RT\tU
      3\t3\t2\t2.2\t0.5\t10.0\t-1\t-1\tE_RT\tU
      """;

  private static ReadResult parse(String text) {
    return BriteReader.parse(text, "t.brite");
  }

  private static BriteFormatException malformed(String text) {
    return assertThrows(BriteFormatException.class, () -> parse(text));
  }

  /** JAVA with line {@code lineNumber} (1-based) replaced. */
  private static String withLine(int lineNumber, String line) {
    List<String> lines = new java.util.ArrayList<>(JAVA.lines().toList());
    lines.set(lineNumber - 1, line);
    return String.join("\n", lines) + "\n";
  }

  @Test
  void readsAPlainJavaFile() {
    ReadResult r = parse(JAVA);
    assertEquals(List.of(), r.warnings());
    Topology t = r.topology();
    assertEquals(4, t.nodeCount());
    assertEquals(4, t.edgeCount());
    assertEquals(
        List.of("Model (1 - RTWaxman):  4 10 5 1  1  0.15 0.2 1 1 10.0 1024.0"), t.modelLines());
    assertEquals(new Node(2, 4, 3, 3, 3, -1, "RT_NODE"), t.nodes().get(2));
    assertEquals(
        new Edge(3, 3, 2, 2.2, 0.5, 10.0, -1, -1, "E_RT", Edge.Direction.UNDIRECTED),
        t.edges().get(3));
  }

  @Test
  void nulBytesAreDropped() {
    String text =
        JAVA.replace("1024.0\n", "1024.0\0\n")
            .replace("3\t3\t1\t1\t1\t-1\tRT_NODE", "3\t3\t1\t1\t1\t-1\tRT_NODE\0");
    ReadResult r = parse(text);
    assertEquals(List.of(), r.warnings());
    assertEquals(parse(JAVA).topology(), r.topology());
  }

  @Test
  void spacesTrailingSpacesAndTabsAreTheSameSeparator() {
    String spaced = JAVA.replace('\t', ' ').replace("RT_NODE\n", "RT_NODE \n");
    String mixed = JAVA.replace("\t", " \t ");
    assertEquals(parse(JAVA).topology(), parse(spaced).topology());
    assertEquals(parse(JAVA).topology(), parse(mixed).topology());
  }

  @Test
  void crLfAndCrLineEndsAndAByteOrderMarkAreAccepted() {
    assertEquals(parse(JAVA).topology(), parse(JAVA.replace("\n", "\r\n")).topology());
    assertEquals(parse(JAVA).topology(), parse(JAVA.replace("\n", "\r")).topology());
    assertEquals(parse(JAVA).topology(), parse("\uFEFF" + JAVA).topology());
  }

  @Test
  void sectionCountsWithAndWithoutSpacesAndWithColon() {
    for (String nodes : List.of("Nodes: ( 4 )", "Nodes: (4)", "Nodes:(4):", "Nodes: ( 4 ):")) {
      for (String edges : List.of("Edges: ( 4 )", "Edges: (4):", "Edges:(4)")) {
        String text = JAVA.replace("Nodes: ( 4 )", nodes).replace("Edges: ( 4 )", edges);
        ReadResult r = parse(text);
        assertEquals(List.of(), r.warnings(), nodes + " / " + edges);
        assertEquals(parse(JAVA).topology(), r.topology());
      }
    }
  }

  @Test
  void emptyFieldsBetweenTabsAreTolerated() {
    // As in a hand-edited file: several tabs in a row between length and delay.
    String text = JAVA.replace("0\t1\t0\t1.0\t0.5\t", "0\t1\t0\t1.0\t\t\t0.5\t");
    Edge e = parse(text).topology().edges().get(0);
    assertEquals(1.0, e.length());
    assertEquals(0.5, e.delay());
    assertEquals(10.0, e.bandwidth());
    assertEquals("E_RT", e.type());
  }

  @Test
  void missingDirectionFieldIsAbsentNotAnError() {
    String text = JAVA.replace("E_RT\tU\n", "E_RT\n");
    Topology t = parse(text).topology();
    assertTrue(t.edges().stream().allMatch(e -> e.direction() == Edge.Direction.ABSENT));
    assertEquals(
        Edge.Direction.DIRECTED,
        parse(JAVA.replace("E_RT\tU", "E_RT\tD")).topology().edges().get(0).direction());
  }

  @Test
  void idsStartingAtThirtyWithGapsAreRenumberedDensely() {
    String text =
        """
        Topology: ( 3 Nodes, 2 Edges )
        Model (5 - TopDown): 1 2 3
        Model (3 - ASWaxman): 1 2 3

        Nodes: ( 3 )
        41 0 0 1 1 7 RT_NODE
        30 1 0 2 2 7 RT_NODE
        35 2 0 1 1 7 RT_NODE

        Edges: ( 2 )
        0 41 30 1.0 0.1 10.0 7 7 E_RT U
        7 30 35 1.0 0.1 10.0 7 7 E_RT U
        """;
    Topology t = parse(text).topology();
    assertEquals(2, t.modelLines().size());
    assertEquals(0, t.routerOf(30));
    assertEquals(1, t.routerOf(35));
    assertEquals(2, t.routerOf(41));
    assertEquals(41, t.nodeIdOf(2));
    assertArrayEquals(new int[] {1, 2}, t.neighbours(t.routerOf(30)));
    assertArrayEquals(new int[] {1, 0, 2}, t.hopDistances(t.routerOf(35)));
    assertEquals(2, t.diameter());
    assertThrows(IllegalArgumentException.class, () -> t.routerOf(0));
  }

  @Test
  void headerCountsThatDisagreeWithTheBodyAreWarnings() {
    String text =
        JAVA.replace("( 4 Nodes, 4 Edges )", "( 5 Nodes, 6 Edges )")
            .replace("Nodes: ( 4 )", "Nodes: ( 3 )")
            .replace("Edges: ( 4 )", "Edges: ( 9 )");
    ReadResult r = parse(text);
    assertEquals(parse(JAVA).topology(), r.topology());
    assertEquals(
        List.of(
            "t.brite:1: Topology line says 5 nodes, the file has 4",
            "t.brite:1: Topology line says 6 edges, the file has 4",
            "t.brite:4: Nodes line says 3 nodes, the file has 4",
            "t.brite:11: Edges line says 9 edges, the file has 4"),
        r.warnings());
  }

  @Test
  void selfLoopsAndDuplicateEdgesAreSkippedWithAWarning() {
    String text =
        JAVA.replace("( 4 Nodes, 4 Edges )", "( 4 Nodes, 6 Edges )")
                .replace("Edges: ( 4 )", "Edges: ( 6 )")
            + "4\t3\t3\t0.0\t0.0\t10.0\t-1\t-1\tE_RT\tU\n"
            + "5\t0\t1\t1.0\t0.5\t10.0\t-1\t-1\tE_RT\tU\n";
    ReadResult r = parse(text);
    assertEquals(parse(JAVA).topology(), r.topology());
    assertEquals(
        List.of(
            "t.brite:16: edge 4 is a self-loop on node 3; skipped",
            "t.brite:17: edge 5 duplicates edge 0 between nodes 0 and 1; skipped"),
        r.warnings());
  }

  @Test
  void nonNumericIdIsAnErrorNamingTheLine() {
    BriteFormatException e = malformed(withLine(6, "x\t0\t3\t2\t2\t-1\tRT_NODE"));
    assertEquals(6, e.lineNumber());
    assertEquals("t.brite", e.source());
    assertEquals("node line: field 'id' is not an integer: \"x\"", e.problem());
    assertTrue(e.getMessage().startsWith("t.brite:6: "), e.getMessage());
  }

  @Test
  void nonNumericCoordinateAndNonFiniteNumbersAreErrors() {
    assertEquals(
        "node line: field 'y' is not a decimal number: \"3a\"",
        malformed(withLine(5, "0\t1\t3a\t2\t2\t-1\tRT_NODE")).problem());
    assertEquals(
        "edge line: field 'length' is not a decimal number: \"NaN\"",
        malformed(withLine(12, "0\t1\t0\tNaN\t0.5\t10.0\t-1\t-1\tE_RT\tU")).problem());
    assertEquals(
        "edge line: field 'delay' is out of range: \"1e999\"",
        malformed(withLine(12, "0\t1\t0\t1.0\t1e999\t10.0\t-1\t-1\tE_RT\tU")).problem());
    assertEquals(
        "edge 0: bandwidth must be >= 0, got -10.0",
        malformed(withLine(12, "0\t1\t0\t1.0\t0.5\t-10.0\t-1\t-1\tE_RT\tU")).problem());
  }

  @Test
  void edgeToAnUnknownNodeIsAnErrorNamingTheLine() {
    BriteFormatException e = malformed(withLine(15, "3\t3\t9\t4.0\t0.5\t10.0\t-1\t-1\tE_RT\tU"));
    assertEquals(15, e.lineNumber());
    assertEquals("edge 3 refers to unknown node 9", e.problem());
  }

  @Test
  void missingAndExtraFieldsAreErrors() {
    BriteFormatException node = malformed(withLine(7, "2\t4\t3\t3\t3\t-1"));
    assertEquals(7, node.lineNumber());
    assertEquals(
        "node line has 6 fields, expected 7 (id x y indegree outdegree ASid type)", node.problem());
    BriteFormatException edge = malformed(withLine(13, "1\t2\t0\t3.0\t0.5\t10.0\t-1\t-1"));
    assertEquals(13, edge.lineNumber());
    assertTrue(edge.problem().startsWith("edge line has 8 fields, expected 9 or 10"));
    assertEquals(
        "edge line has 11 fields, expected 9 or 10"
            + " (id from to length delay bandwidth ASfrom ASto type [direction])",
        malformed(withLine(13, "1\t2\t0\t3.0\t0.5\t10.0\t-1\t-1\tE_RT\tU\tX")).problem());
  }

  @Test
  void badDirectionDuplicateIdsAndStrayLinesAreErrors() {
    assertEquals(
        "edge line: field 'direction': direction must be U or D, got \"B\"",
        malformed(withLine(12, "0\t1\t0\t1.0\t0.5\t10.0\t-1\t-1\tE_RT\tB")).problem());
    assertEquals(
        "duplicate node id 0 (first defined on line 5)",
        malformed(withLine(6, "0\t0\t3\t2\t2\t-1\tRT_NODE")).problem());
    assertEquals(
        "duplicate edge id 0 (first defined on line 12)",
        malformed(withLine(13, "0\t2\t0\t3.0\t0.5\t10.0\t-1\t-1\tE_RT\tU")).problem());
    assertEquals(
        "second Nodes section header: \"Nodes: ( 4 )\"",
        malformed(withLine(9, "Nodes: ( 4 )")).problem());
    assertEquals(
        "section header inside the Edges section: \"Edges: ( 4 )\"",
        malformed(JAVA + "Edges: ( 4 )\n").problem());
    BriteFormatException stray = malformed(withLine(3, "hello"));
    assertEquals(3, stray.lineNumber());
    assertTrue(stray.problem().startsWith("unexpected line before the Nodes section"));
    assertEquals(
        "expected \"Nodes: ( N )\", got \"Nodes: four\"",
        malformed(withLine(4, "Nodes: four")).problem());
    assertEquals(
        "expected \"Topology: ( N Nodes, E Edges )\", got \"Topology: big\"",
        malformed(withLine(1, "Topology: big")).problem());
  }

  @Test
  void missingOrEmptySectionsAreErrors() {
    String noEdges = JAVA.substring(0, JAVA.indexOf("Edges:"));
    assertTrue(malformed(noEdges).problem().contains("before the Edges section"));
    String noNodes = JAVA.substring(0, JAVA.indexOf("Nodes:"));
    assertTrue(malformed(noNodes).problem().contains("before the Nodes section"));
    String emptyNodes = "Topology: ( 0 Nodes, 0 Edges )\n\nNodes: ( 0 )\n\nEdges: ( 0 )\n";
    BriteFormatException e = malformed(emptyNodes);
    assertEquals(3, e.lineNumber());
    assertEquals("the Nodes section is empty", e.problem());
  }

  @Test
  void aFileWithoutHeaderLinesButWithSectionsIsRead() {
    String bare = JAVA.substring(JAVA.indexOf("Nodes:"));
    ReadResult r = parse(bare);
    assertEquals(List.of(), r.warnings());
    assertEquals(List.of(), r.topology().modelLines());
    assertEquals(parse(JAVA).topology().edges(), r.topology().edges());
  }
}
