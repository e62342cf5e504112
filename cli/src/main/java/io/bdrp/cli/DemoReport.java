package io.bdrp.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.IntStream;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** What {@code bdrp demo} leaves in its run folder besides the CSV: a plot and a summary. */
final class DemoReport {
  private DemoReport() {}

  /**
   * {@code deliveries.png}: per router, the deliveries the oracle expects for its hosts beside
   * those that arrived.
   */
  static Path plot(Path dir, String topology, int messages, long[] expected, long[] delivered) {
    System.setProperty("java.awt.headless", "true");
    CategoryChart chart =
        new CategoryChartBuilder()
            .width(900)
            .height(500)
            .title(
                String.format(
                    Locale.ROOT,
                    "bdrp demo: deliveries per router (%s, %,d messages)",
                    topology,
                    messages))
            .xAxisTitle("router")
            .yAxisTitle("deliveries to the router's hosts (messages)")
            .build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    var routers = IntStream.range(0, expected.length).boxed().toList();
    chart.addSeries(
        "expected (oracle: every host's predicate)",
        routers,
        java.util.Arrays.stream(expected).boxed().toList());
    chart.addSeries("delivered", routers, java.util.Arrays.stream(delivered).boxed().toList());
    Path file = dir.resolve("deliveries.png");
    try {
      BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
    return file;
  }

  /** A run's deliveries against the oracle's. */
  record Accounting(
      long expected, long delivered, long undelivered, long duplicates, long spurious) {
    /** Every expected delivery made once, and nothing else. */
    boolean exact() {
      return undelivered == 0 && duplicates == 0 && spurious == 0;
    }
  }

  /** {@code summary.md}: the run's set-up and accounting as a Markdown table. */
  static Path summary(
      Path dir,
      String topology,
      int routers,
      int hosts,
      int messages,
      double seconds,
      Accounting a) {
    String md =
        String.format(
            Locale.ROOT,
            """
            # bdrp demo

            %s: %d routers, %d hosts, %,d messages published in %.2f s.

            | expected deliveries | delivered | undelivered | duplicates | spurious |
            |---:|---:|---:|---:|---:|
            | %,d | %,d | %,d | %,d | %,d |

            Expected deliveries come from an oracle that evaluates every host's predicate on every
            message. Per router: `routers.csv` and `deliveries.png`; the routers' log:
            `routers.log`.
            """,
            topology,
            routers,
            hosts,
            messages,
            seconds,
            a.expected(),
            a.delivered(),
            a.undelivered(),
            a.duplicates(),
            a.spurious());
    Path file = dir.resolve("summary.md");
    try {
      Files.writeString(file, md);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
    return file;
  }
}
