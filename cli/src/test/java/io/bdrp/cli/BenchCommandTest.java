package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bdrp bench} against the real peers: a bdrp router process, a nats-server process and an
 * ActiveMQ broker JVM, each driven by its own client library. Short runs: the figures are not
 * checked here, only that every system was measured and that the accounting holds.
 */
class BenchCommandTest {
  private final StringWriter out = new StringWriter();

  private int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    return cl.execute(args);
  }

  private static List<String[]> rows(Path csv) throws Exception {
    List<String[]> rows = new ArrayList<>();
    for (String line : Files.readAllLines(csv).subList(1, Files.readAllLines(csv).size())) {
      rows.add(line.split(","));
    }
    return rows;
  }

  @Test
  @Timeout(300)
  void fanoutMeasuresEverySystemAndLosesNothing(@TempDir Path dir) throws Exception {
    int code =
        run(
            "bench",
            "fanout",
            "--seconds",
            "2",
            "--warmup",
            "1",
            "--server-jvm-opts",
            "-Xmx256m",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    // header: system,workload,subscribers,published,expected,delivered,lost,...
    Set<String> measured = new TreeSet<>();
    for (String[] r : rows(dir.resolve("fanout.csv"))) {
      measured.add(r[0] + "/" + r[1]);
      long published = Long.parseLong(r[3]);
      long expected = Long.parseLong(r[4]);
      assertTrue(published > 0, () -> String.join(",", r) + ": nothing published");
      assertEquals(
          r[1].equals("fanout") ? published * 10 : published,
          expected,
          () -> String.join(",", r) + ": expected deliveries");
      assertEquals(expected, Long.parseLong(r[5]), () -> String.join(",", r) + ": delivered");
      assertEquals("0", r[6], () -> String.join(",", r) + ": lost");
    }
    assertEquals(
        Set.of(
            "activemq/fanout",
            "activemq/selective",
            "bdrp/fanout",
            "bdrp/selective",
            "nats/fanout",
            "nats/selective"),
        measured);
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| fanout | nats |"));
  }

  @Test
  @Timeout(300)
  void latencyCrossesALineOfThreeServersForEverySystem(@TempDir Path dir) throws Exception {
    int code =
        run(
            "bench",
            "latency",
            "--rate",
            "200",
            "--seconds",
            "2",
            "--warmup",
            "1",
            "--server-jvm-opts",
            "-Xmx256m",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    List<String[]> rows = rows(dir.resolve("latency.csv"));
    assertEquals(3, rows.size(), out::toString);
    for (String[] r : rows) {
      assertEquals("3", r[1]);
      assertEquals("400", r[2], () -> r[0] + ": sent");
      assertEquals(r[2], r[3], () -> r[0] + ": every message measured arrived");
      double p50 = Double.parseDouble(r[4]);
      double p99 = Double.parseDouble(r[6]);
      assertTrue(p50 > 0 && p50 <= p99, () -> r[0] + ": percentiles in order");
      assertTrue(Files.exists(dir.resolve(r[0]).resolve("latencies.csv")));
    }
  }
}
