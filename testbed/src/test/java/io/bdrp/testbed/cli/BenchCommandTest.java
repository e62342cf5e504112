package io.bdrp.testbed.cli;

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
    CommandLine cl = LabCommandLine.create();
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
    assertEquals(
        Set.of(
            "activemq/fanout",
            "activemq/selective",
            "bdrp/fanout",
            "bdrp/selective",
            "nats/fanout",
            "nats/selective"),
        measuredWithoutLoss(dir));
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| fanout | nats |"));
  }

  @Test
  @Timeout(300)
  void fanoutWithTlsMeasuresBdrpAndNatsPlainAndOverTls(@TempDir Path dir) throws Exception {
    int code =
        run(
            "bench",
            "fanout",
            "--systems",
            "bdrp,nats",
            "--tls",
            "both",
            "--workloads",
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
    assertEquals(
        Set.of("bdrp/fanout", "bdrp+tls/fanout", "nats/fanout", "nats+tls/fanout"),
        measuredWithoutLoss(dir));
    String summary = Files.readString(dir.resolve("summary.md"));
    assertTrue(summary.contains("TLS ÷ plain"), summary);
    // Each TLS system had a certificate from the run's CA, and spoke TLS with it.
    assertTrue(Files.exists(dir.resolve("bdrp+tls-fanout/tls/ca.crt")));
    assertTrue(
        Files.readString(dir.resolve("bdrp+tls-fanout/bdrp-router-0.log")).contains("TLS engine"));
    assertTrue(Files.exists(dir.resolve("nats+tls-fanout/tls/r0.crt")));

    out.getBuffer().setLength(0);
    assertEquals(
        2, run("bench", "fanout", "--tls", "on", "--out", dir.resolve("refused").toString()));
    assertTrue(out.toString().contains("--tls: runs bdrp and nats only"), out::toString);
  }

  @Test
  @Timeout(300)
  void fanoutWithAuthMeasuresBdrpAndNatsOpenAndWithAuthWithoutRefusals(@TempDir Path dir)
      throws Exception {
    int code =
        run(
            "bench",
            "fanout",
            "--systems",
            "bdrp,nats",
            "--auth",
            "both",
            "--workloads",
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
    assertEquals(
        Set.of("bdrp/fanout", "bdrp+auth/fanout", "nats/fanout", "nats+auth/fanout"),
        measuredWithoutLoss(dir));
    // header: ...,refused,tls_over_plain,auth_over_open
    for (String[] r : rows(dir.resolve("fanout.csv"))) {
      assertEquals("0", r[12], () -> String.join(",", r) + ": refused");
      boolean withAuth = r[0].endsWith("+auth");
      assertEquals(
          withAuth,
          r.length > 14 && Double.parseDouble(r[14]) > 0,
          () -> String.join(",", r) + ": auth ÷ open on the rows with auth only");
    }
    String summary = Files.readString(dir.resolve("summary.md"));
    assertTrue(summary.contains("auth ÷ open"), summary);
    assertTrue(summary.contains("| fanout | bdrp+auth |"), summary);
    // Each system with auth ran with the run's users, and clients signed in as them.
    assertTrue(
        Files.readString(dir.resolve("bdrp+auth-fanout/bdrp-router-0.yaml"))
            .contains("anonymous: false"));
    assertTrue(
        Files.readString(dir.resolve("nats+auth-fanout/nats-server-0.conf"))
            .contains("user: \"publisher\""));

    out.getBuffer().setLength(0);
    assertEquals(
        2, run("bench", "fanout", "--auth", "on", "--out", dir.resolve("refused").toString()));
    assertTrue(out.toString().contains("--auth: runs bdrp and nats only"), out::toString);
  }

  @Test
  @Timeout(300)
  void fanoutWithJetStreamDeliversEveryMessageOnceReportsARateAndRefusesAuth(@TempDir Path dir)
      throws Exception {
    int code =
        run(
            "bench",
            "fanout",
            "--systems",
            "nats+js",
            "--subscribers",
            "3",
            "--seconds",
            "1",
            "--warmup",
            "1",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    assertEquals(Set.of("nats+js/fanout", "nats+js/selective"), measuredWithoutLoss(dir, 3));
    // header: system,workload,subscribers,published,expected,delivered,lost,duplicates,seconds,
    // delivered_per_s,...
    for (String[] r : rows(dir.resolve("fanout.csv"))) {
      assertEquals("0", r[7], () -> String.join(",", r) + ": duplicates");
      assertTrue(Double.parseDouble(r[9]) > 0, () -> String.join(",", r) + ": a rate");
    }
    assertTrue(Files.readString(dir.resolve("summary.md")).contains("| fanout | nats+js |"));
    // The server ran JetStream with its store in the run folder.
    assertTrue(Files.isDirectory(dir.resolve("nats+js-fanout/jetstream/jetstream")));

    out.getBuffer().setLength(0);
    assertEquals(
        2,
        run(
            "bench",
            "fanout",
            "--systems",
            "nats+js",
            "--auth",
            "on",
            "--out",
            dir.resolve("refused").toString()));
    assertTrue(out.toString().contains("--auth: nats+js runs without"), out::toString);
  }

  @Test
  @Timeout(300)
  void ringMeasuresSharedMemoryAndTcpThroughEveryPhase(@TempDir Path dir) throws Exception {
    int code =
        run(
            "bench",
            "ring",
            "--seconds",
            "1",
            "--idle-seconds",
            "1",
            "--low-rate",
            "2000",
            "--high-rate",
            "100000",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    // header: transport,load,sent,frames,seconds,frames_per_s,p50_us,...
    Set<String> measured = new TreeSet<>();
    for (String[] r : rows(dir.resolve("ring.csv"))) {
      measured.add(r[0] + "/" + r[1]);
      long sent = Long.parseLong(r[2]);
      assertTrue(sent > 0, () -> String.join(",", r) + ": something sent");
      assertEquals(sent, Long.parseLong(r[3]), () -> String.join(",", r) + ": all arrived");
      assertTrue(Double.parseDouble(r[6]) > 0, () -> String.join(",", r) + ": a p50 latency");
    }
    assertEquals(
        Set.of("shm/high", "shm/low", "shm/most", "tcp/high", "tcp/low", "tcp/most"), measured);
    String summary = Files.readString(dir.resolve("summary.md"));
    assertTrue(summary.contains("shm ÷ tcp: throughput"), summary);
    try (var left = Files.newDirectoryStream(Path.of("/dev/shm"), "bdrp-ring-bench-*")) {
      assertTrue(!left.iterator().hasNext(), "the benchmark's ring file was removed");
    }
  }

  /** The system/workload pairs of a run's fanout.csv, after checking every row lost nothing. */
  private static Set<String> measuredWithoutLoss(Path dir) throws Exception {
    return measuredWithoutLoss(dir, 10);
  }

  /** As {@link #measuredWithoutLoss(Path)}, for a run with {@code subscribers} subscribers. */
  private static Set<String> measuredWithoutLoss(Path dir, int subscribers) throws Exception {
    // header: system,workload,subscribers,published,expected,delivered,lost,...
    Set<String> measured = new TreeSet<>();
    for (String[] r : rows(dir.resolve("fanout.csv"))) {
      measured.add(r[0] + "/" + r[1]);
      long published = Long.parseLong(r[3]);
      long expected = Long.parseLong(r[4]);
      assertTrue(published > 0, () -> String.join(",", r) + ": nothing published");
      assertEquals(
          r[1].equals("fanout") ? published * subscribers : published,
          expected,
          () -> String.join(",", r) + ": expected deliveries");
      assertEquals(expected, Long.parseLong(r[5]), () -> String.join(",", r) + ": delivered");
      assertEquals("0", r[6], () -> String.join(",", r) + ": lost");
    }
    return measured;
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
