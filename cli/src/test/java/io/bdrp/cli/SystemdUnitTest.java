package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** deploy/systemd/bdrp-router@.service: a unit systemd accepts, running a command bdrp accepts. */
class SystemdUnitTest {
  private static final Path UNIT =
      Path.of(System.getProperty("user.dir"))
          .getParent()
          .resolve("deploy/systemd/bdrp-router@.service");

  @Test
  void systemdVerifiesTheUnitWithoutAWord(@TempDir Path dir) throws Exception {
    Path analyze = Path.of("/usr/bin/systemd-analyze");
    Assumptions.assumeTrue(Files.isExecutable(analyze), "systemd-analyze is not installed");
    Files.copy(UNIT, dir.resolve("bdrp-router@.service"));
    Process p =
        new ProcessBuilder(
                analyze.toString(), "verify", dir.resolve("bdrp-router@0.service").toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "systemd-analyze finished");
    assertEquals(0, p.exitValue(), out);
    // Unknown keys and bad values are only warnings to systemd: any output is a finding.
    assertEquals("", out.strip(), out);
  }

  @Test
  void itsCommandLineIsOneBdrpAccepts() throws Exception {
    String exec =
        Files.readAllLines(UNIT).stream()
            .filter(l -> l.startsWith("ExecStart="))
            .findFirst()
            .orElseThrow();
    List<String> words = Arrays.asList(exec.substring("ExecStart=".length()).split(" "));
    List<String> bdrpArgs = words.subList(words.indexOf("/opt/bdrp/bdrp.jar") + 1, words.size());
    assertEquals("router", bdrpArgs.get(0), exec);
    // Parses as the router command with its options (the file itself is on the target host).
    var parsed = Main.commandLine().parseArgs(bdrpArgs.toArray(new String[0]));
    assertEquals("router", parsed.subcommand().commandSpec().name());
    assertEquals(
        "/etc/bdrp/router-%i.yaml",
        parsed.subcommand().matchedOption("--config").getValue().toString());
  }
}
