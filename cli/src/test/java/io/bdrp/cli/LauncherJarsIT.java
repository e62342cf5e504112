package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The two jars that {@code ./bdrp} puts on the class path: bdrp.jar (this module) and the lab's
 * bdrp-lab.jar (the testbed module, built before this one). They share no class or resource, so
 * nothing is loaded from the wrong one and Logback finds its configuration once; together they run
 * the lab's commands.
 */
class LauncherJarsIT {
  private static final Path BDRP = Path.of("target", "bdrp.jar");
  private static final Path LAB = Path.of("..", "testbed", "target", "bdrp-lab.jar");

  private static Set<String> entries(Path jar) throws IOException {
    assertTrue(Files.isRegularFile(jar), jar.toAbsolutePath() + " was built");
    Set<String> names = new TreeSet<>();
    try (ZipFile z = new ZipFile(jar.toFile())) {
      z.stream()
          .filter(e -> !e.isDirectory())
          .map(ZipEntry::getName)
          // Every jar has a manifest and may carry its licences; nothing loads them as classes.
          .filter(
              n -> !n.equals("META-INF/MANIFEST.MF") && !n.matches("META-INF/(LICENSE|NOTICE).*"))
          .forEach(names::add);
    }
    return names;
  }

  @Test
  void theJarsShareNoClassOrResource() throws IOException {
    Set<String> both = entries(BDRP);
    both.retainAll(entries(LAB));
    assertEquals(Set.of(), both, "in both bdrp.jar and bdrp-lab.jar");
  }

  @Test
  void togetherTheyRunTheLabsCommands() throws Exception {
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            BDRP + ":" + LAB,
            Main.class.getName(),
            "bench",
            "ring",
            "--help");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "bdrp bench ring --help exited");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("Usage: bdrp bench ring"), out);
  }
}
