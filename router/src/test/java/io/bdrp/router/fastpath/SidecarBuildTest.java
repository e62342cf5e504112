package io.bdrp.router.fastpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sidecar's native build on a machine without its toolchain: the build passes, builds no
 * library, and leaves the reason in {@code UNAVAILABLE}, which the router reports when asked for
 * the fast path. (Run with a PATH that holds a shell's basic tools and no clang.)
 */
class SidecarBuildTest {
  @Test
  void withoutClangTheBuildPassesAndSaysWhy(@TempDir Path dir) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    for (String tool : new String[] {"uname", "mkdir", "rm", "printf", "cat"}) {
      for (String d : new String[] {"/usr/bin", "/bin"}) {
        Path t = Path.of(d, tool);
        if (Files.isExecutable(t) && !Files.exists(bin.resolve(tool))) {
          Files.createSymbolicLink(bin.resolve(tool), t);
        }
      }
    }
    Path out = dir.resolve("native");
    ProcessBuilder pb =
        new ProcessBuilder(
                "/bin/bash",
                "../sidecar/src/main/sh/build-native.sh",
                "../sidecar/src/main/c",
                out.toString(),
                dir.resolve("work").toString(),
                System.getProperty("java.home"))
            .redirectErrorStream(true);
    pb.environment().put("PATH", bin.toString());
    Process p = pb.start();
    String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), log);
    assertFalse(Files.exists(out.resolve("libbdrp_fastpath.so")), "no library built");
    String why = Files.readString(out.resolve("UNAVAILABLE"));
    assertTrue(why.contains("clang not found"), why);
    assertTrue(log.contains("kernel fast path not built: clang not found"), log);
  }
}
