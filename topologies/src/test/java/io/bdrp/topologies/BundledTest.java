package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BundledTest {
  /** Surefire runs in the module directory. */
  private static final Path RESOURCES = Path.of("src/main/resources/io/bdrp/topologies");

  private static String resourceText(String name) throws IOException {
    try (InputStream in = Bundled.class.getResourceAsStream(name + ".brite")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void namesListEveryBundledFile() throws IOException {
    try (Stream<Path> files = Files.list(RESOURCES)) {
      List<String> onDisk =
          files
              .map(p -> p.getFileName().toString())
              .filter(f -> f.endsWith(".brite"))
              .map(f -> f.substring(0, f.length() - ".brite".length()))
              .sorted()
              .toList();
      assertEquals(Bundled.names().stream().sorted().toList(), onDisk);
    }
  }

  @ParameterizedTest
  @CsvSource({
    "routers-1, 1, 0, 0",
    "routers-2, 2, 1, 1",
    "routers-4, 4, 5, 2",
    "routers-8, 8, 13, 3",
    "routers-42, 42, 41, 11"
  })
  void bundledTopologiesHaveTheStatedShape(String name, int nodes, int edges, int diameter) {
    Topology t = Bundled.load(name);
    assertEquals(nodes, t.nodeCount());
    assertEquals(edges, t.edgeCount());
    assertTrue(t.isConnected());
    assertEquals(diameter, t.diameter());
    for (Edge e : t.edges()) {
      assertEquals(BundledRecipes.BANDWIDTH_MBPS, e.bandwidth(), "1 MByte/s written as 8.0 Mbps");
    }
  }

  @Test
  void routers4IsASquarePlusOneDiagonal() {
    Topology t = Bundled.load("routers-4");
    int[] degrees = new int[4];
    for (int r = 0; r < 4; r++) {
      degrees[r] = t.degree(r);
    }
    int[] sorted = degrees.clone();
    Arrays.sort(sorted);
    assertArrayEquals(new int[] {2, 2, 3, 3}, sorted);
    // The diagonal joins the two degree-3 corners; the other two corners are not adjacent.
    for (int a = 0; a < 4; a++) {
      for (int b = a + 1; b < 4; b++) {
        int other = b;
        boolean adjacent = Arrays.stream(t.neighbours(a)).anyMatch(x -> x == other);
        if (degrees[a] == 2 && degrees[b] == 2) {
          assertFalse(adjacent, a + "-" + b);
        } else {
          assertTrue(adjacent, a + "-" + b);
        }
      }
    }
  }

  @Test
  void generatedFilesRegenerateFromTheParametersInTheirModelLine() throws IOException {
    for (String name : BundledRecipes.GENERATED.keySet()) {
      Topology bundled = Bundled.load(name);
      BriteGenerator.Params recorded =
          BriteGenerator.Params.fromModelLine(bundled.modelLines().get(0));
      Topology again = BriteGenerator.generate(recorded);
      assertEquals(bundled, again, name);
      assertEquals(resourceText(name), BriteWriter.toText(again), name);
    }
  }

  @Test
  void everyFileIsWhatTheRegenerationUtilityWrites() throws IOException {
    Map<String, Topology> recipes = BundledRecipes.all();
    assertEquals(Bundled.names(), List.copyOf(recipes.keySet()));
    for (String name : Bundled.names()) {
      assertEquals(recipes.get(name), Bundled.load(name), name);
      assertEquals(resourceText(name), BriteWriter.toText(recipes.get(name)), name);
    }
  }

  @Test
  void readmeListsEveryFileWithItsShapeAndModelLine() throws IOException {
    String readme = Files.readString(RESOURCES.resolve("README.md"));
    for (String name : Bundled.names()) {
      Topology t = Bundled.load(name);
      String row =
          String.format(
              "| `%s.brite` | %d | %d | %d | `%s` |",
              name, t.nodeCount(), t.edgeCount(), t.diameter(), t.modelLines().get(0));
      assertTrue(readme.contains(row), "README.md lacks the row " + row);
    }
  }

  @Test
  void unknownNamesAreRejectedWithTheListOfNames() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Bundled.load("routers-3"));
    assertEquals(
        "no bundled topology \"routers-3\"; bundled: routers-1, routers-2, routers-4, routers-8,"
            + " routers-42",
        e.getMessage());
  }
}
