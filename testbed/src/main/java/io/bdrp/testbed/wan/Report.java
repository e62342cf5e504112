package io.bdrp.testbed.wan;

import io.bdrp.testbed.CsvFile;
import io.bdrp.testbed.Plots;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.XYChart;

/** Writes a testbed run's results: a CSV per system, a Markdown summary and a PNG plot. */
public final class Report {
  private Report() {}

  /**
   * Writes {@code DIR/SYSTEM/seconds.csv} for every result, {@code DIR/SYSTEM/frame-bytes.csv} for
   * those whose servers' bytes are known, {@code summary.md} and {@code plot.png}.
   */
  public static void write(Path dir, List<WanRun.Result> results) throws IOException {
    Files.createDirectories(dir);
    for (WanRun.Result r : results) {
      Path d = dir.resolve(r.system());
      Files.createDirectories(d);
      WanRun.Seconds s = r.seconds();
      try (CsvFile w =
          CsvFile.create(
              d.resolve("seconds.csv"),
              "second",
              "input_msgs",
              "ideal_deliveries",
              "output_deliveries",
              "undelivered",
              "duplicates",
              "spurious",
              "max_link_utilisation",
              "server_cpu_s")) {
        for (int i = 0; i < s.input().length; i++) {
          w.row(
              i,
              s.input()[i],
              s.ideal()[i],
              s.output()[i],
              s.undelivered()[i],
              s.duplicates()[i],
              s.spurious()[i],
              CsvFile.fixed(4, s.maxLinkUtilisation()[i]),
              CsvFile.fixed(3, s.serverCpu()[i]));
        }
      }
      if (r.bytes() != null) {
        writeFrameBytes(d.resolve("frame-bytes.csv"), r.bytes());
      }
    }
    Files.writeString(dir.resolve("summary.md"), summary(results));
    plot(dir.resolve("plot.png"), results);
  }

  /**
   * Writes a suite's combined {@code summary.md} (a table per group) and {@code plot.png} into
   * {@code dir}; each run has written its own folder below it.
   *
   * @param results every run's results by scenario name, one per system
   * @return the summary's text
   */
  public static String writeSuite(Path dir, Suite suite, Map<String, List<WanRun.Result>> results)
      throws IOException {
    Files.createDirectories(dir);
    StringBuilder b = new StringBuilder("# Suite " + suite.name() + "\n");
    for (Suite.Group g : suite.groups()) {
      b.append("\n## ").append(g.title()).append("\n\n");
      List<WanRun.Result> rows = new ArrayList<>();
      for (Suite.Entry e : g.entries()) {
        rows.addAll(results.getOrDefault(e.scenario().name(), List.of()));
      }
      b.append(summary(rows));
    }
    Files.writeString(dir.resolve("summary.md"), b.toString());
    if (suite.layout() == Suite.Layout.GRID) {
      List<List<WanRun.Result>> rows = new ArrayList<>();
      for (Scenario sc : suite.scenarios()) {
        rows.add(results.getOrDefault(sc.name(), List.of()));
      }
      grid(dir.resolve("plot.png"), rows);
    } else {
      lines(dir.resolve("plot.png"), suite, results);
    }
    return b.toString();
  }

  /** Panels in rows (one per scenario) and columns (one per system). */
  private static void grid(Path file, List<List<WanRun.Result>> rows) throws IOException {
    List<List<XYChart>> charts = new ArrayList<>();
    for (List<WanRun.Result> row : rows) {
      charts.add(row.stream().map(Report::panel).toList());
    }
    Plots.write(file, charts);
  }

  /**
   * One panel per group and system, two columns wide: output per run as a solid line, its ideal
   * output dashed in the same colour.
   */
  private static void lines(Path file, Suite suite, Map<String, List<WanRun.Result>> results)
      throws IOException {
    record Runs(String title, List<String> labels, List<WanRun.Result> runs) {}
    List<Runs> panels = new ArrayList<>();
    for (Suite.Group gr : suite.groups()) {
      Map<String, Runs> bySystem = new java.util.LinkedHashMap<>();
      for (Suite.Entry e : gr.entries()) {
        for (WanRun.Result r : results.getOrDefault(e.scenario().name(), List.of())) {
          Runs p =
              bySystem.computeIfAbsent(
                  r.system(),
                  k -> new Runs(k + " — " + gr.title(), new ArrayList<>(), new ArrayList<>()));
          p.labels().add(e.label());
          p.runs().add(r);
        }
      }
      panels.addAll(bySystem.values());
    }
    List<XYChart> charts = new ArrayList<>();
    for (Runs p : panels) {
      XYChart c = Plots.timeChart(p.title(), "deliveries/s", 760, 340);
      for (int i = 0; i < p.runs().size(); i++) {
        Color colour = Plots.colour(i);
        WanRun.Seconds s = p.runs().get(i).seconds();
        Plots.line(c, p.labels().get(i) + ": output", s.output(), colour, false);
        Plots.line(c, p.labels().get(i) + ": ideal", s.ideal(), colour, true);
      }
      charts.add(c);
    }
    int cols = charts.size() > 1 ? 2 : 1;
    List<List<XYChart>> rows = new ArrayList<>();
    for (int k = 0; k < charts.size(); k += cols) {
      rows.add(charts.subList(k, Math.min(charts.size(), k + cols)));
    }
    Plots.write(file, rows);
  }

  /** A line of a {@link #timeline} panel; a dashed one is drawn thinner, with dashes. */
  public record Series(String name, long[] values, boolean dashed) {}

  /** A vertical line across every {@link #timeline} panel at a second, labelled at the top. */
  public record Marker(double second, String label, Color colour) {}

  /** A {@link #timeline} panel: its title, the unit of its values and its lines. */
  public record Panel(String title, String unit, List<Series> series) {}

  /**
   * Panels stacked over one time axis (seconds), each with its lines, and the markers drawn across
   * all of them: a campaign's deliveries and its routers' memory, with the moments of its faults.
   */
  public static void timeline(Path file, List<Panel> panels, List<Marker> markers)
      throws IOException {
    // Lines in other colours than the markers'.
    List<Color> colours = Plots.coloursBut(markers.stream().map(Marker::colour).toList());
    List<List<XYChart>> rows = new ArrayList<>();
    for (int k = 0; k < panels.size(); k++) {
      Panel p = panels.get(k);
      XYChart c = Plots.timeChart(p.title(), p.unit(), 1200, 340);
      long top = 1;
      for (int i = 0; i < p.series().size(); i++) {
        Series s = p.series().get(i);
        Plots.line(c, s.name(), s.values(), colours.get(i % colours.size()), s.dashed());
        for (long v : s.values()) {
          top = Math.max(top, v);
        }
      }
      for (Marker m : markers) {
        Plots.marker(c, m.second(), top, k == 0 ? m.label() : "", m.colour());
      }
      rows.add(List.of(c));
    }
    Plots.write(file, rows);
  }

  /**
   * Writes the bytes each server sent on its links, a row per server and a last row {@code total}:
   * DATA frames (best effort), RELIABLE_DATA frames, acknowledgements, and acknowledgements over
   * DATA and RELIABLE_DATA together.
   */
  static void writeFrameBytes(Path file, WanSystem.FrameBytes b) throws IOException {
    try (CsvFile w =
        CsvFile.create(
            file, "router", "data_bytes", "reliable_data_bytes", "ack_bytes", "ack_ratio")) {
      for (int r = 0; r < b.data().length; r++) {
        long data = b.data()[r] + b.reliableData()[r];
        w.row(
            r,
            b.data()[r],
            b.reliableData()[r],
            b.acks()[r],
            CsvFile.fixed(6, data == 0 ? 0 : (double) b.acks()[r] / data));
      }
      w.row(
          "total",
          b.totalData() - b.totalReliableData(),
          b.totalReliableData(),
          b.totalAcks(),
          CsvFile.fixed(6, b.ackRatio()));
    }
  }

  /**
   * A line per result whose servers' bytes are known: DATA bytes (best-effort and reliable copies),
   * acknowledgement bytes and their ratio; with confirmations, how many messages were confirmed.
   */
  static String frameBytes(List<WanRun.Result> results) {
    StringBuilder b = new StringBuilder();
    for (WanRun.Result r : results) {
      WanSystem.FrameBytes f = r.bytes();
      if (f == null) {
        continue;
      }
      b.append(
          String.format(
              Locale.ROOT,
              "%n%s, %s (%s): DATA bytes sent on links %,d (reliable copies %,d),"
                  + " acknowledgement bytes %,d = %.2f%% of DATA%n",
              r.system(),
              r.scenario().name(),
              r.service(),
              f.totalData(),
              f.totalReliableData(),
              f.totalAcks(),
              100 * f.ackRatio()));
      WanSystem.Confirmations c = r.confirmations();
      if (c != null) {
        b.append(
            String.format(
                Locale.ROOT,
                "%s, %s: %,d of %,d messages confirmed, %,d unreached, %,d failed%n",
                r.system(),
                r.scenario().name(),
                c.confirmed(),
                c.sent(),
                c.unreached(),
                c.failed()));
      }
    }
    return b.toString();
  }

  /** The summary table. */
  public static String summary(List<WanRun.Result> results) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| system | scenario | messages | expected | delivered | undelivered | duplicates |"
            + " spurious | delivered % | busiest link ≥ 90% from s | delivered % before |"
            + " peak sustained output/s | max link % | peak server CPU (cores) |\n");
    b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (WanRun.Result r : results) {
      WanRun.Seconds s = r.seconds();
      long peak = peakSustained(s.output(), r.scenario().seconds());
      int s90 = saturation(s, r.scenario().seconds(), SATURATED);
      double maxUtil = 0;
      double cpu = 0;
      for (int i = 0; i < Math.min(s.output().length, r.scenario().seconds()); i++) {
        if (!Double.isNaN(s.maxLinkUtilisation()[i])) {
          maxUtil = Math.max(maxUtil, s.maxLinkUtilisation()[i]);
        }
        cpu = Math.max(cpu, s.serverCpu()[i]);
      }
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %,d | %,d | %,d | %,d | %,d | %,d | %.3f | %s | %.3f | %,d | %.0f | %.2f"
                  + " |%n",
              r.service().equals("best-effort")
                  ? r.system()
                  : r.system() + " (" + r.service() + ")",
              r.scenario().name(),
              r.messages(),
              r.expected(),
              r.delivered(),
              r.undelivered(),
              r.duplicates(),
              r.spurious(),
              r.expected() == 0 ? 100.0 : 100.0 * (r.expected() - r.undelivered()) / r.expected(),
              s90 < r.scenario().seconds() ? Integer.toString(s90) : "never",
              deliveredBefore(s, s90),
              peak,
              100 * maxUtil,
              cpu));
    }
    b.append(ratios(results));
    b.append(frameBytes(results));
    return b.toString();
  }

  /**
   * For every scenario that bdrp and another system both ran, a line with the ratio of their peak
   * sustained outputs (empty if there is none).
   */
  static String ratios(List<WanRun.Result> results) {
    StringBuilder b = new StringBuilder();
    for (WanRun.Result r : results) {
      if (!r.system().equals("bdrp")) {
        continue;
      }
      long ours = peakSustained(r.seconds().output(), r.scenario().seconds());
      for (WanRun.Result o : results) {
        if (o.system().equals("bdrp") || !o.scenario().name().equals(r.scenario().name())) {
          continue;
        }
        long theirs = peakSustained(o.seconds().output(), o.scenario().seconds());
        b.append(
            String.format(
                Locale.ROOT,
                "%nPeak sustained output, %s: bdrp / %s = %s%n",
                r.scenario().name(),
                o.system(),
                theirs == 0 ? "∞" : String.format(Locale.ROOT, "%.2f×", (double) ours / theirs)));
      }
    }
    return b.toString();
  }

  /**
   * The highest mean output over {@value #SUSTAINED_SECONDS} consecutive seconds of traffic (the
   * grace period after it, when backlogs drain, does not count).
   */
  public static long peakSustained(long[] output, int trafficSeconds) {
    int n = Math.min(output.length, trafficSeconds);
    int w = Math.min(SUSTAINED_SECONDS, n);
    long best = 0;
    long sum = 0;
    for (int i = 0; i < n; i++) {
      sum += output[i];
      if (i >= w) {
        sum -= output[i - w];
      }
      if (i >= w - 1) {
        best = Math.max(best, sum / Math.max(1, w));
      }
    }
    return best;
  }

  /** The utilisation at which a link counts as saturated. */
  public static final double SATURATED = 0.9;

  /**
   * The first second of traffic in which the most loaded link's utilisation was at least {@code
   * level}, or {@code trafficSeconds} if it never was.
   */
  public static int saturation(WanRun.Seconds s, int trafficSeconds, double level) {
    int n = Math.min(trafficSeconds, s.maxLinkUtilisation().length);
    for (int i = 0; i < n; i++) {
      if (s.maxLinkUtilisation()[i] >= level) {
        return i;
      }
    }
    return trafficSeconds;
  }

  /**
   * Of the deliveries that messages sent before second {@code end} should make, the percentage that
   * arrived (100 if there were none).
   */
  public static double deliveredBefore(WanRun.Seconds s, int end) {
    long ideal = 0;
    long missing = 0;
    for (int i = 0; i < Math.min(end, s.ideal().length); i++) {
      ideal += s.ideal()[i];
      missing += s.undelivered()[i];
    }
    return ideal == 0 ? 100.0 : 100.0 * (ideal - missing) / ideal;
  }

  /** The window of {@link #peakSustained}. */
  public static final int SUSTAINED_SECONDS = 10;

  /** One panel per result: input, output, ideal output and undelivered per second. */
  public static void plot(Path file, List<WanRun.Result> results) throws IOException {
    grid(file, results.stream().map(List::of).toList());
  }

  private static XYChart panel(WanRun.Result r) {
    WanRun.Seconds s = r.seconds();
    XYChart c =
        Plots.timeChart(
            r.system() + " — " + r.scenario().name() + " (" + r.scenario().topology() + ")",
            "messages/s, deliveries/s",
            760,
            300);
    Plots.line(c, "input (messages/s)", s.input(), Plots.colour(0), false);
    Plots.line(c, "output (deliveries/s)", s.output(), Plots.colour(2), false);
    Plots.line(c, "ideal output", s.ideal(), Plots.GREY, true);
    Plots.line(c, "undelivered", s.undelivered(), Plots.colour(1), false);
    return c;
  }
}
