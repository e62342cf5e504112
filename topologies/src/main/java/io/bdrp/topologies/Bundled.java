package io.bdrp.topologies;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;

/**
 * The router topologies bundled with bdrp, after the paper's experiments: {@code routers-1}, {@code
 * routers-2}, {@code routers-4} (a square plus one diagonal), {@code routers-8} (diameter 3) and
 * {@code routers-42} (diameter 11). They are BRITE files under {@code /io/bdrp/topologies/}; the
 * README there says how each was made.
 *
 * <p>Stateless: the methods may be called from any thread; each call reads the resource again.
 */
public final class Bundled {
  private static final List<String> NAMES =
      List.of("routers-1", "routers-2", "routers-4", "routers-8", "routers-42");

  private Bundled() {}

  /** The names of the bundled topologies, smallest first. */
  public static List<String> names() {
    return NAMES;
  }

  /**
   * Reads {@code source}: the bundled topology of that name, or else the BRITE file at that path
   * (with the warnings of reading it; a bundled one has none).
   *
   * @throws IllegalArgumentException if {@code source} is neither (the message lists the names)
   * @throws IOException if the file cannot be read
   */
  public static ReadResult loadOrRead(String source) throws IOException {
    if (NAMES.contains(source)) {
      return new ReadResult(load(source), List.of());
    }
    Path p = Path.of(source);
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException(
          "'" + source + "' is neither a file nor a bundled topology " + NAMES);
    }
    return BriteReader.read(p);
  }

  /** The bundled names as an iterable class, for command-line completion of a topology. */
  public static final class Names implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return NAMES.iterator();
    }
  }

  /**
   * Reads the bundled topology {@code name}.
   *
   * @throws IllegalArgumentException if there is no such topology (the message lists the names)
   * @throws IllegalStateException if the resource is missing or reads with warnings (a broken
   *     build)
   */
  public static Topology load(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException(
          "no bundled topology \"" + name + "\"; bundled: " + String.join(", ", NAMES));
    }
    String file = name + ".brite";
    try (InputStream in = Bundled.class.getResourceAsStream(file)) {
      if (in == null) {
        throw new IllegalStateException("resource io/bdrp/topologies/" + file + " is missing");
      }
      ReadResult result = BriteReader.read(in, file);
      if (!result.warnings().isEmpty()) {
        throw new IllegalStateException(
            "bundled " + file + " reads with warnings: " + result.warnings());
      }
      return result.topology();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read resource io/bdrp/topologies/" + file, e);
    }
  }
}
