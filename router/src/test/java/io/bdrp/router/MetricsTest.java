package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.metrics.Metrics;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class MetricsTest {
  /** The promtool binary on PATH, or null. */
  private static Path promtool() {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path p = Path.of(d, "promtool");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  /** What a running router serves passes Prometheus' own linter, {@code promtool check metrics}. */
  @Test
  void aRoutersMetricsPassPromtool() throws Exception {
    Path promtool = promtool();
    if (promtool == null) {
      // CI installs it (.ci/run); elsewhere the check is skipped, saying why.
      assertTrue(System.getenv("CI") == null, "promtool must be on PATH in CI");
      Assumptions.abort("promtool is not on PATH (Debian package prometheus)");
    }
    try (Router r =
            Router.start(
                Federation.loneRouter() // with the MQTT port's series too
                    .withMqttListen(java.net.InetSocketAddress.createUnresolved("127.0.0.1", 0)));
        BdrpClient c = BdrpClient.builder().router(r.clientAddress()).connect()) {
      c.subscribe(Predicate.parse("exists(x)"), m -> {}).get(10, TimeUnit.SECONDS);
      c.sendAcknowledged(Message.builder().put("x", 1).build()).get(10, TimeUnit.SECONDS);
      String text = r.loop().submit(() -> r.metrics().registry().render()).get();
      Process p =
          new ProcessBuilder(promtool.toString(), "check", "metrics")
              .redirectErrorStream(true)
              .start();
      try (OutputStream in = p.getOutputStream()) {
        in.write(text.getBytes(StandardCharsets.UTF_8));
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "promtool finished");
      assertEquals(0, p.exitValue(), () -> out + "\n" + text);
      assertEquals("", out.strip(), () -> "promtool's findings:\n" + out);
    }
  }

  @Test
  void rendersThePrometheusTextFormat() {
    Metrics m = new Metrics();
    Metrics.Counter in = m.counter("bdrp_link_messages_in_total", "Data frames in.", "link", "4");
    Metrics.Counter other =
        m.counter("bdrp_link_messages_in_total", "Data frames in.", "link", "a\"b");
    m.gauge("bdrp_unicast_routes", "Routes held.", () -> 7);
    Metrics.Histogram h = m.histogram("bdrp_match_seconds", "Match latency.", 0.001, 0.01);
    in.add(3);
    other.inc();
    h.observeNanos(500_000); // 0.5 ms
    h.observeNanos(5_000_000); // 5 ms
    h.observeNanos(50_000_000); // 50 ms
    String text = m.render();
    // This router's families, by name, in the library's text format.
    assertEquals(
        """
        # HELP bdrp_link_messages_in_total Data frames in.
        # TYPE bdrp_link_messages_in_total counter
        bdrp_link_messages_in_total{link="4"} 3.0
        bdrp_link_messages_in_total{link="a\\"b"} 1.0
        # HELP bdrp_match_seconds Match latency.
        # TYPE bdrp_match_seconds histogram
        bdrp_match_seconds_bucket{le="0.001"} 1
        bdrp_match_seconds_bucket{le="0.01"} 2
        bdrp_match_seconds_bucket{le="+Inf"} 3
        bdrp_match_seconds_count 3
        bdrp_match_seconds_sum 0.0555
        # HELP bdrp_unicast_routes Routes held.
        # TYPE bdrp_unicast_routes gauge
        bdrp_unicast_routes 7.0
        """,
        text.lines()
            .filter(l -> l.startsWith("bdrp_") || l.matches("# (HELP|TYPE) bdrp_.*"))
            .map(l -> l + "\n")
            .collect(java.util.stream.Collectors.joining()));
    // And the JVM's and the process's, beside them.
    assertTrue(text.contains("# TYPE jvm_memory_used_bytes gauge"), text);
    assertTrue(text.contains("# TYPE process_cpu_seconds_total counter"), text);
    assertTrue(text.contains("# TYPE jvm_threads_current gauge"), text);
  }

  @Test
  void aSeriesAskedForAgainIsTheSameSeries() {
    Metrics m = new Metrics();
    Metrics.Counter a = m.counter("bdrp_x_total", "X.", "neighbour", "1");
    Metrics.Counter b = m.counter("bdrp_x_total", "X.", "neighbour", "1");
    a.inc();
    b.inc();
    m.gauge("bdrp_g", "G.", () -> 1, "port", "clients");
    m.gauge("bdrp_g", "G.", () -> 2, "port", "clients"); // the later supplier replaces the first
    String text = m.render();
    assertEquals(
        List.of("bdrp_x_total{neighbour=\"1\"} 2.0"),
        text.lines().filter(l -> l.startsWith("bdrp_x_total{")).toList());
    assertEquals(
        List.of("bdrp_g{port=\"clients\"} 2.0"),
        text.lines().filter(l -> l.startsWith("bdrp_g{")).toList());
  }

  @Test
  void namesAndTypesAreChecked() {
    Metrics m = new Metrics();
    m.counter("x_total", "x");
    assertThrows(IllegalArgumentException.class, () -> m.gauge("x_total", "x", () -> 1));
    assertThrows(IllegalArgumentException.class, () -> m.counter("bad name", "x"));
    assertThrows(IllegalArgumentException.class, () -> m.counter("y_total", "y", "odd"));
    assertThrows(IllegalArgumentException.class, () -> m.counter("no_suffix", "a counter's name"));
    assertThrows(IllegalArgumentException.class, () -> m.histogram("h", "h", 0.2, 0.1));
  }
}
