package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class MetricsTest {
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
    assertEquals(
        """
        # HELP bdrp_link_messages_in_total Data frames in.
        # TYPE bdrp_link_messages_in_total counter
        bdrp_link_messages_in_total{link="4"} 3
        bdrp_link_messages_in_total{link="a\\"b"} 1
        # HELP bdrp_unicast_routes Routes held.
        # TYPE bdrp_unicast_routes gauge
        bdrp_unicast_routes 7
        # HELP bdrp_match_seconds Match latency.
        # TYPE bdrp_match_seconds histogram
        bdrp_match_seconds_bucket{le="0.001"} 1
        bdrp_match_seconds_bucket{le="0.01"} 2
        bdrp_match_seconds_bucket{le="+Inf"} 3
        bdrp_match_seconds_sum 0.0555
        bdrp_match_seconds_count 3
        """,
        m.render());
  }

  @Test
  void namesAndTypesAreChecked() {
    Metrics m = new Metrics();
    m.counter("x_total", "x");
    assertThrows(IllegalArgumentException.class, () -> m.gauge("x_total", "x", () -> 1));
    assertThrows(IllegalArgumentException.class, () -> m.counter("bad name", "x"));
    assertThrows(IllegalArgumentException.class, () -> m.counter("y", "y", "odd"));
    assertThrows(IllegalArgumentException.class, () -> m.histogram("h", "h", 0.2, 0.1));
  }
}
