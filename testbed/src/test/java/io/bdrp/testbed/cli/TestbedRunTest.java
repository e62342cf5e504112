package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The CI scenario of the testbed: 4 routers in namespaces joined by 1 MByte/s shaped links, 20
 * clients with paper-workload predicates, Poisson traffic, every message accounted for; then the
 * same for an ActiveMQ network of brokers on the same network and load.
 */
class TestbedRunTest {
  @Test
  @Timeout(300)
  void theCiScenarioDeliversExactlyWhatTheOracleExpects(@TempDir Path dir) throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "network namespaces need root; run as root to test the testbed");
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    String name = "y" + (ProcessHandle.current().pid() % 1000);
    int code =
        cl.execute(
            "testbed",
            "run",
            "ci-4",
            "--systems",
            "bdrp,activemq",
            "--name",
            name,
            "--seconds",
            "15",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    TestbedTests.Totals t =
        TestbedTests.exactSeconds(
            dir.resolve("bdrp").resolve("seconds.csv"), "bdrp", out::toString);
    long input = t.input();
    long ideal = t.ideal();
    long output = t.output();
    assertTrue(input > 15 * 20 * 5 / 2, "the clients sent their Poisson traffic: " + input);
    assertTrue(ideal > 0, "the workload has receivers");
    assertEquals(ideal, output, "every expected delivery arrived, nothing else did");
    assertTrue(Files.size(dir.resolve("plot.png")) > 1000, "a plot was drawn");
    // The peer ran on the same network and load: same messages, same expected deliveries.
    TestbedTests.Totals peer = TestbedTests.totals(dir.resolve("activemq").resolve("seconds.csv"));
    assertEquals(input, peer.input(), "the peer got the same traffic");
    assertEquals(ideal, peer.ideal(), "the same oracle");
    assertTrue(peer.output() > 0, "the peer delivered: " + peer.output());
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| activemq | ci-4 |"));
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| bdrp | ci-4 |"));
    assertEquals(List.of(), io.bdrp.testbed.net.Emulator.namespaces(name), "network removed");
  }

  /**
   * The same scenario with bdrp's clients publishing reliably: still exact against the oracle,
   * every message confirmed, and the routers' DATA and acknowledgement bytes in the summary and in
   * {@code bdrp/frame-bytes.csv}.
   */
  @Test
  @Timeout(300)
  void theCiScenarioWithTheReliableServiceIsExactAndCountsAcknowledgementBytes(@TempDir Path dir)
      throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "network namespaces need root; run as root to test the testbed");
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    String name = "v" + (ProcessHandle.current().pid() % 1000);
    int code =
        cl.execute(
            "testbed",
            "run",
            "ci-4",
            "--service",
            "reliable",
            "--name",
            name,
            "--seconds",
            "10",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    TestbedTests.Totals t =
        TestbedTests.exactSeconds(
            dir.resolve("bdrp").resolve("seconds.csv"), "bdrp", out::toString);
    assertTrue(t.ideal() > 0, "the workload has receivers");
    assertEquals(t.ideal(), t.output(), "every expected delivery arrived, nothing else did");
    String summary = Files.readString(dir.resolve("summary.md"));
    assertTrue(summary.contains("| bdrp (reliable) | ci-4 |"), summary);
    assertTrue(
        summary.contains(
            String.format(
                java.util.Locale.ROOT,
                "bdrp, ci-4: %,d of %,d messages confirmed, 0 unreached, 0 failed",
                t.input(),
                t.input())),
        summary);
    List<String> bytes = Files.readAllLines(dir.resolve("bdrp").resolve("frame-bytes.csv"));
    assertEquals("router,data_bytes,reliable_data_bytes,ack_bytes,ack_ratio", bytes.get(0));
    assertEquals(1 + 4 + 1, bytes.size(), "a row per router and the total");
    String[] total = bytes.get(5).split(",");
    assertEquals("total", total[0]);
    assertEquals("0", total[1], "no best-effort DATA: every message went reliably");
    assertTrue(Long.parseLong(total[2]) > 0, "reliable copies crossed the links");
    long acks = Long.parseLong(total[3]);
    assertTrue(acks > 0 && acks % 26 == 0, "whole acknowledgement frames: " + acks);
    assertEquals(List.of(), io.bdrp.testbed.net.Emulator.namespaces(name), "network removed");
  }

  @Test
  void anUnknownServiceIsAUsageErrorNamingTheOption() {
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    // Refused before any network is made: no root needed.
    int code = cl.execute("testbed", "run", "ci-4", "--service", "exactly-once", "--name", "u1");
    assertEquals(2, code, out::toString);
    assertTrue(
        out.toString().contains("--service: expected best-effort or reliable, got 'exactly-once'"),
        out::toString);
  }
}
