package io.bdrp.topologies;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the real BRITE files of {@code shared/topologies-real}: from the system property {@code
 * bdrp.shared} (the {@code shared} directory), else by walking up from the working directory to a
 * directory that holds {@code shared/topologies-real}. If neither finds them the test fails when
 * the environment variable {@code CI} is set and is skipped otherwise.
 */
public final class SharedFiles {
  private SharedFiles() {}

  /** The directory of real BRITE files. */
  public static Path realTopologies() {
    String property = System.getProperty("bdrp.shared");
    if (property != null) {
      Path dir = Path.of(property).resolve("topologies-real");
      if (!Files.isDirectory(dir)) {
        fail("system property bdrp.shared=" + property + " has no topologies-real directory");
      }
      return dir;
    }
    Path start = Path.of("").toAbsolutePath();
    for (Path d = start; d != null; d = d.getParent()) {
      Path dir = d.resolve("shared").resolve("topologies-real");
      if (Files.isDirectory(dir)) {
        return dir;
      }
    }
    String message =
        "real BRITE files not found: set -Dbdrp.shared=<dir holding topologies-real>, or run from"
            + " below a directory that holds shared/topologies-real (looked up from "
            + start
            + ")";
    if (System.getenv("CI") != null) {
      fail(message);
    }
    assumeTrue(false, message);
    throw new AssertionError("unreachable: the assumption above aborts the test");
  }
}
