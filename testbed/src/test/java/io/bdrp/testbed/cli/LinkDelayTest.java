package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.testbed.net.Delayer;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.topologies.Bundled;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * Delayed links of the emulated network, with real namespaces, NFQUEUE rules and delayer processes,
 * measured with ping between two routers' namespaces. Needs root, a C compiler, libnetfilter_queue,
 * iptables-legacy and ping (CI installs them); the network has a name of its own and is removed
 * afterwards whatever happens.
 */
class LinkDelayTest {
  private static final Pattern RTT = Pattern.compile("= ([0-9.]+)/([0-9.]+)/([0-9.]+)/");

  private final String name = "d" + (ProcessHandle.current().pid() % 1000);

  @BeforeEach
  void rootAndTools() {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "network namespaces need root; run as root to test link delay");
    var why = Delayer.unavailable();
    assumeTrue(why.isEmpty(), () -> why.orElse(""));
    assumeTrue(
        Files.isExecutable(Path.of("/usr/bin/ping")) || Files.isExecutable(Path.of("/bin/ping")),
        "the RTT is measured with ping (Debian: apt-get install iputils-ping)");
  }

  @AfterEach
  void cleanUp() throws IOException {
    if ("root".equals(System.getProperty("user.name"))) {
      Emulator.down(name);
      for (int r = 0; r < 2; r++) {
        Files.deleteIfExists(Delayer.log(Emulator.namespace(name, r)));
      }
    }
  }

  /**
   * The least of five round trips from router {@code from}'s namespace to {@code address}, in ms,
   * as the sending program sees it (-U: the delay is applied after the kernel's receive time stamp,
   * which plain ping reports).
   */
  private double minRttMs(int from, String address) throws Exception {
    Process p =
        new ProcessBuilder(
                "ip",
                "netns",
                "exec",
                Emulator.namespace(name, from),
                "ping",
                "-U",
                "-n",
                "-q",
                "-c",
                "5",
                "-i",
                "0.2",
                "-W",
                "2",
                address)
            .redirectErrorStream(true)
            .start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(20, TimeUnit.SECONDS), "ping ended");
      assertEquals(0, p.exitValue(), out);
      Matcher m = RTT.matcher(out);
      assertTrue(m.find(), out);
      return Double.parseDouble(m.group(1));
    } finally {
      p.destroyForcibly();
    }
  }

  private String cli(String... args) {
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    int code = cl.execute(args);
    assertEquals(0, code, out::toString);
    return out.toString();
  }

  @Test
  @Timeout(60)
  void aDelayedLinkAddsItsDelayEachWayAndDownEndsItsDelayers() throws Exception {
    cli("testbed", "up", "routers-2", "--rate", "8mbit", "--link-delay", "20ms", "--name", name);
    Emulator.Network n = Emulator.load(name);
    assertEquals(20_000, n.links().get(0).delayMicros());
    List<Delayer.Running> delayers = Emulator.delayers(name);
    assertEquals(2, delayers.size(), "one delayer per namespace with a delayed link");
    for (Delayer.Running d : delayers) {
      assertTrue(ProcessHandle.of(d.pid()).map(ProcessHandle::isAlive).orElse(false), d::toString);
    }
    String status = cli("testbed", "status", "--name", name);
    assertTrue(status.contains(" 20ms "), status);
    assertFalse(status.contains("not running"), status);

    double rtt = minRttMs(0, n.links().get(0).addressB());
    assertTrue(rtt >= 40 && rtt < 80, "20 ms each way: round trip " + rtt + " ms");

    assertEquals(2, Emulator.down(name));
    assertEquals(List.of(), Emulator.namespaces(name));
    for (Delayer.Running d : delayers) {
      assertFalse(
          ProcessHandle.of(d.pid()).map(ProcessHandle::isAlive).orElse(false), () -> d + " ended");
      String log = Files.readString(Delayer.log(d.namespace()));
      assertTrue(log.contains("packets delayed"), "it ended politely and counted: " + log);
    }
  }

  @Test
  @Timeout(60)
  void anUndelayedLinkHasNoDelayerAndAShortRoundTrip() throws Exception {
    Emulator.Network n =
        Emulator.plan(Bundled.load("routers-2"), name, Emulator.parseRate("8mbit"), 0);
    Emulator.upForThisProcess(n);
    assertEquals(List.of(), Emulator.delayers(name));
    double rtt = minRttMs(0, n.links().get(0).addressB());
    assertTrue(rtt < 5, "no delay: round trip " + rtt + " ms");
    assertEquals(2, Emulator.down(name));
  }
}
