package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The kernel fast path against the JVM path on the emulated network: the same scenario with UDP
 * links and every message forwarded by D, once with {@code --fast-path jvm} and once with {@code
 * --fast-path ebpf}. Both deliver exactly what the oracle expects (nothing missing, duplicated or
 * spurious) for the same traffic, and in the eBPF run the routers' counters show the transit
 * traffic was split in the kernel. With broadcasts (the workload's default fraction), the same, and
 * the kernel copied broadcasts down the trees. ci-4 is the CI scenario; fig45-8 runs on a random
 * (Waxman) 8-router topology, shortened.
 *
 * <p>Needs root and the sidecar library (CI has both: there it fails without them).
 */
class FastPathTestbedTest {
  @BeforeAll
  static void needsTheFastPath() {
    TestbedTests.requireFastPath();
  }

  private static TestbedTests.Totals run(
      Path dir, String scenario, String fastPath, String... extra) throws IOException {
    return run(dir, scenario, fastPath, "1", extra);
  }

  private static TestbedTests.Totals run(
      Path dir, String scenario, String fastPath, String broadcastFraction, String... extra)
      throws IOException {
    StringWriter out = new StringWriter();
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    List<String> args =
        new ArrayList<>(
            List.of(
                "testbed",
                "run",
                scenario,
                "--name",
                "f" + (ProcessHandle.current().pid() % 1000),
                "--link-transport",
                "udp",
                "--broadcast-fraction",
                broadcastFraction,
                "--fast-path",
                fastPath,
                "--out",
                dir.toString()));
    args.addAll(List.of(extra));
    int code = cl.execute(args.toArray(String[]::new));
    assertEquals(0, code, out::toString);
    TestbedTests.Totals t =
        TestbedTests.exactSeconds(
            dir.resolve("bdrp").resolve("seconds.csv"), fastPath, out::toString);
    assertEquals(
        t.ideal(), t.output(), fastPath + ": every expected delivery arrived, nothing else did");
    assertTrue(t.ideal() > 0, "the workload has receivers");
    return t;
  }

  /** The sum over routers of {@code series} in the metrics they had at the end of the run. */
  private static long metric(Path dir, String series) throws IOException {
    Pattern p = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)(?:\\.0)?$");
    long sum = 0;
    try (var files = Files.list(dir.resolve("bdrp"))) {
      for (Path f : files.filter(f -> f.toString().endsWith(".metrics")).toList()) {
        Matcher m = p.matcher(Files.readString(f));
        while (m.find()) {
          sum += Long.parseLong(m.group(1));
        }
      }
    }
    return sum;
  }

  @ParameterizedTest
  @ValueSource(strings = {"ci-4", "fig45-8"})
  @Timeout(600)
  void theKernelPathDeliversExactlyWhatTheJvmPathDoes(String scenario, @TempDir Path dir)
      throws Exception {
    String[] shorter =
        scenario.equals("ci-4")
            ? new String[] {"--seconds", "15"}
            : new String[] {"--seconds", "15", "--start-rate", "2", "--end-rate", "2"};
    TestbedTests.Totals jvm = run(dir.resolve("jvm"), scenario, "jvm", shorter);
    TestbedTests.Totals ebpf = run(dir.resolve("ebpf"), scenario, "ebpf", shorter);
    // The workload is seeded: both runs offer the same messages to the same predicates.
    assertEquals(jvm.input(), ebpf.input(), "the same traffic");
    assertEquals(jvm.ideal(), ebpf.ideal(), "the same oracle");
    assertEquals(
        0,
        metric(dir.resolve("jvm"), "bdrp_fastpath_packets_total{result=\"split\"}"),
        "no fast path in the JVM run");
    long split =
        metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"split\"}")
            + metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"split_local\"}");
    assertTrue(split > 0, "transit DATA was split in the kernel: " + split);
    assertEquals(
        0,
        metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"redirect_failed\"}"),
        "every copy the kernel made was sent");
  }

  /**
   * At the default broadcast fraction most messages are broadcasts: with the kernel copying them
   * down each source's tree (and passing one copy up to routers with hosts, for local delivery
   * only) every host still gets exactly what the oracle expects, once, as in the JVM run, and the
   * routers' JVMs queue fewer copies than in the JVM run. Guards against a broadcast the kernel
   * forwards being forwarded again by the JVM (duplicates downstream), against a local copy being
   * lost or delivered twice, and against the kernel leaving broadcasts to the JVM.
   */
  @org.junit.jupiter.api.Test
  @Timeout(600)
  void broadcastsAreCopiedDownTheTreeInTheKernelWithTheJvmsDeliveries(@TempDir Path dir)
      throws Exception {
    String[] shorter = {"--seconds", "15"};
    TestbedTests.Totals jvm = run(dir.resolve("jvm"), "ci-4", "jvm", "0.5", shorter);
    TestbedTests.Totals ebpf = run(dir.resolve("ebpf"), "ci-4", "ebpf", "0.5", shorter);
    assertEquals(jvm.input(), ebpf.input(), "the same traffic");
    assertEquals(jvm.ideal(), ebpf.ideal(), "the same oracle");
    long kernel =
        metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"bcast\"}")
            + metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"bcast_local\"}");
    assertTrue(kernel > 0, "transit broadcasts were copied in the kernel: " + kernel);
    long jvmCopies = metric(dir.resolve("jvm"), "bdrp_data_copies_total");
    long ebpfCopies = metric(dir.resolve("ebpf"), "bdrp_data_copies_total");
    assertTrue(
        ebpfCopies < jvmCopies,
        "the JVMs queued fewer copies with the kernel's help: " + ebpfCopies + " of " + jvmCopies);
    assertEquals(
        0,
        metric(dir.resolve("ebpf"), "bdrp_fastpath_packets_total{result=\"redirect_failed\"}"),
        "every copy the kernel made was sent");
  }
}
