package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BriteWriterTest {

  private static void assertRoundTrip(Topology t) {
    ReadResult back = BriteReader.parse(BriteWriter.toText(t), "written");
    assertEquals(List.of(), back.warnings());
    assertEquals(t, back.topology());
  }

  @Property
  void arbitraryTopologiesReadBackEqual(@ForAll long seed) {
    assertRoundTrip(RandomTopologies.random(seed));
  }

  @Property(tries = 200)
  void generatedTopologiesReadBackEqual(
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 60) int n,
      @ForAll @IntRange(min = 1, max = 4) int m,
      @ForAll boolean waxman) {
    BriteGenerator.Params p =
        (waxman
                ? BriteGenerator.Params.waxman(n, m, seed)
                : BriteGenerator.Params.barabasiAlbert(n, m, seed))
            .withBandwidth(BriteGenerator.Bandwidth.UNIFORM, 0.5, 1000);
    assertRoundTrip(BriteGenerator.generate(p));
  }

  @Test
  void writesTheJavaBriteLayout() {
    Topology t =
        Topology.of(
            List.of("Model (0 - Test): two"),
            List.of(new Node(1, 3, 4, 1, 1, -1, "RT_NODE"), new Node(0, 0, 0, 1, 1, -1, "RT_NODE")),
            List.of(
                new Edge(
                    0, 1, 0, 5, 5 / 299.792458, 8, -1, -1, "E_RT", Edge.Direction.UNDIRECTED)));
    assertEquals(
        """
        Topology: ( 2 Nodes, 1 Edges )
        Model (0 - Test): two

        Nodes: ( 2 )
        0\t0.0\t0.0\t1\t1\t-1\tRT_NODE
        1\t3.0\t4.0\t1\t1\t-1\tRT_NODE


        Edges: ( 1 )
        0\t1\t0\t5.0\t0.0166782047599076\t8.0\t-1\t-1\tE_RT\tU
        """,
        BriteWriter.toText(t));
  }

  @Test
  void writesAFileThatReadsBack(@TempDir Path dir) throws IOException {
    Topology t = RandomTopologies.random(42);
    Path file = dir.resolve("t.brite");
    BriteWriter.write(t, file);
    assertEquals(t, BriteReader.read(file).topology());
    assertEquals(BriteWriter.toText(t), Files.readString(file));
  }
}
