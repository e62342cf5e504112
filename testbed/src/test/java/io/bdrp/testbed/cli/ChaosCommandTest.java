package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.testbed.net.Emulator;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * A short fault campaign on the namespace testbed: 4 routers on a square with a diagonal, the
 * paper's workload flowing, one link set down and up, then a transit router killed with SIGKILL and
 * restarted: with DATA over TCP, and with DATA over UDP forwarded by the kernel fast path (every
 * message by D, so that routes change under transit traffic the kernel splits), and with every
 * message published reliably (the killed router is the ingress of its clients, which move to
 * another router and send again what it did not confirm). Needs root and {@code ip netns} (CI runs
 * as root); the network has a name of its own and is removed afterwards.
 */
class ChaosCommandTest {
  private static boolean ipNetnsWorks() {
    try {
      Process p = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (Exception e) {
      return false;
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"tcp", "udp with the kernel fast path", "tcp, reliable service"})
  @Timeout(240)
  void linkDownAndKillRestartMakeNoDuplicateOrSpuriousDeliveryAndDeliveryIsExactAgain(
      String links, @TempDir Path dir) throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "network namespaces need root; run as root to test the fault campaign");
    assumeTrue(ipNetnsWorks(), "'ip netns list' does not work here (iproute2 missing?)");
    boolean ebpf = links.startsWith("udp");
    boolean reliable = links.endsWith("reliable service");
    if (ebpf) {
      TestbedTests.requireFastPath();
    }
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    String name = "z" + (ProcessHandle.current().pid() % 1000);
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "testbed",
                "chaos",
                "square-4",
                "--faults",
                "link-down,kill-restart",
                "--warmup",
                "3",
                "--fault",
                "6",
                "--recovery",
                "10",
                "--settle",
                "2",
                "--name",
                name,
                "--out",
                dir.toString()));
    if (ebpf) {
      args.addAll(
          List.of("--link-transport", "udp", "--fast-path", "ebpf", "--broadcast-fraction", "1"));
    }
    if (reliable) {
      args.addAll(List.of("--service", "reliable"));
    }
    cl.execute(args.toArray(String[]::new));
    assertEquals(List.of(), Emulator.namespaces(name), "network removed");
    Path csv = dir.resolve("faults.csv");
    assertTrue(Files.exists(csv), () -> "no faults.csv:\n" + out);
    List<String> lines = Files.readAllLines(csv);
    List<String> head = Arrays.asList(lines.get(0).split(","));
    assertEquals(3, lines.size(), "a header and one line per fault");
    for (String line : lines.subList(1, lines.size())) {
      // The target column is quoted and has no comma: split is safe.
      String[] f = line.split(",");
      Map<String, String> row = new HashMap<>();
      for (int i = 0; i < head.size() && i < f.length; i++) {
        row.put(head.get(i), f[i]);
      }
      String fault = row.get("fault");
      assertEquals("", row.getOrDefault("skipped", ""), fault + " ran");
      assertTrue(Long.parseLong(row.get("expected")) > 0, fault + ": traffic had receivers");
      assertEquals("0", row.get("duplicates"), () -> fault + ": duplicates\n" + out);
      assertEquals("0", row.get("spurious"), () -> fault + ": spurious deliveries\n" + out);
      assertEquals(
          "0",
          row.get("loss_outside_window"),
          () -> fault + ": loss outside the reconvergence window\n" + out);
      assertFalse(
          row.get("exact_after_heal_s").isEmpty(),
          () -> fault + ": delivery not exact again by the end of the recovery\n" + out);
      if (reliable) {
        assertEquals("0", row.get("out_of_order"), () -> fault + ": out of order\n" + out);
        // Nothing missing but what the killed router's own hosts could not take.
        assertEquals("0", row.get("loss"), () -> fault + ": reliable messages lost\n" + out);
        assertEquals("0", row.get("unconfirmed"), () -> fault + ": unconfirmed\n" + out);
        assertEquals("0", row.get("unreached"), () -> fault + ": unreached\n" + out);
      }
    }
    assertTrue(Files.size(dir.resolve("plot.png")) > 1000, "a plot was drawn");
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| kill-restart |"));
  }
}
