package io.bdrp.topologies;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Rewrites the bundled topology files from {@link BundledRecipes} and prints the README table. Run
 * from the module directory after {@code mvn -pl topologies test-compile}:
 *
 * <pre>
 * java -cp target/classes:target/test-classes io.bdrp.topologies.RegenerateBundled \
 *     src/main/resources/io/bdrp/topologies
 * </pre>
 */
public final class RegenerateBundled {
  private RegenerateBundled() {}

  /** Writes {@code <name>.brite} for every bundled topology into the directory {@code args[0]}. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: RegenerateBundled <output directory>");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    Files.createDirectories(dir);
    for (Map.Entry<String, Topology> e : BundledRecipes.all().entrySet()) {
      Topology t = e.getValue();
      BriteWriter.write(t, dir.resolve(e.getKey() + ".brite"));
      System.out.printf(
          "| `%s.brite` | %d | %d | %d | `%s` |%n",
          e.getKey(), t.nodeCount(), t.edgeCount(), t.diameter(), t.modelLines().get(0));
    }
  }
}
