package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -cp JAR io.bdrp.router.RouterMain --config FILE}: a router process, as the testbed
 * starts one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RouterMainTest {
  private static Process start(Path dir, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx128m");
    cmd.add("--enable-native-access=ALL-UNNAMED");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(RouterMain.class.getName());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
  }

  private static String all(Process p) throws Exception {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "exited");
    return out;
  }

  @Test
  void aBadArgumentOrFileIsAUsageError(@TempDir Path dir) throws Exception {
    Process usage = start(dir, "--conf", "x.yaml");
    String out = all(usage);
    assertEquals(2, usage.exitValue(), out);
    assertTrue(
        out.contains("usage: java -cp bdrp.jar io.bdrp.router.RouterMain --config FILE"), out);

    Process missing = start(dir, "--config", "nope.yaml");
    out = all(missing);
    assertEquals(2, missing.exitValue(), out);
    assertTrue(out.contains("bdrp: no such file: nope.yaml"), out);

    Files.writeString(dir.resolve("bad.yaml"), "router: -1\n");
    Process bad = start(dir, "--config", "bad.yaml");
    out = all(bad);
    assertEquals(2, bad.exitValue(), out);
    assertTrue(out.contains("router: must be in 0..4095, got -1"), out);
  }

  @Test
  void aRouterRunsUntilTerminatedAndSaysWhereItListens(@TempDir Path dir) throws Exception {
    Files.writeString(
        dir.resolve("r.yaml"),
        "router: 5\nlisten: {clients: 127.0.0.1:0, routers: 127.0.0.1:0, metrics: 127.0.0.1:0}\n");
    Process p = start(dir, "--config", "r.yaml");
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      String listening = null;
      while (listening == null && (line = r.readLine()) != null) {
        if (line.startsWith("router 5 listening: clients 127.0.0.1:")) {
          listening = line;
        }
      }
      assertTrue(listening != null && listening.contains("/metrics"), String.valueOf(listening));
      assertTrue(p.isAlive(), "it runs until stopped");
      p.destroy(); // SIGTERM: the shutdown hook closes the router
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "it stops on SIGTERM");
    } finally {
      p.destroyForcibly();
    }
  }
}
