package io.bdrp.testbed.wan;

import io.bdrp.testbed.CsvFile;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/** Writes a testbed run's results: a CSV per system, a Markdown summary and a PNG plot. */
public final class Report {
  private Report() {}

  /**
   * Writes {@code DIR/SYSTEM/seconds.csv} for every result, {@code summary.md} and {@code
   * plot.png}.
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
    int pw = 760;
    int ph = 300;
    int cols = Math.max(1, rows.stream().mapToInt(List::size).max().orElse(1));
    BufferedImage img =
        new BufferedImage(pw * cols, ph * Math.max(1, rows.size()), BufferedImage.TYPE_INT_RGB);
    Graphics2D g = canvas(img);
    for (int r = 0; r < rows.size(); r++) {
      for (int c = 0; c < rows.get(r).size(); c++) {
        panel(g, rows.get(r).get(c), c * pw, r * ph, pw, ph);
      }
    }
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }

  private static Graphics2D canvas(BufferedImage img) {
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, img.getWidth(), img.getHeight());
    return g;
  }

  private static final Color[] LINE_COLOURS = {
    new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0x9467bd)
  };

  /**
   * One panel per group and system, two columns wide: output per run as a solid line, its ideal
   * output dashed in the same colour.
   */
  private static void lines(Path file, Suite suite, Map<String, List<WanRun.Result>> results)
      throws IOException {
    record Panel(String title, List<String> labels, List<WanRun.Result> runs) {}
    List<Panel> panels = new ArrayList<>();
    for (Suite.Group gr : suite.groups()) {
      Map<String, Panel> bySystem = new java.util.LinkedHashMap<>();
      for (Suite.Entry e : gr.entries()) {
        for (WanRun.Result r : results.getOrDefault(e.scenario().name(), List.of())) {
          Panel p =
              bySystem.computeIfAbsent(
                  r.system(),
                  k -> new Panel(k + " — " + gr.title(), new ArrayList<>(), new ArrayList<>()));
          p.labels().add(e.label());
          p.runs().add(r);
        }
      }
      panels.addAll(bySystem.values());
    }
    int pw = 760;
    int ph = 340;
    int cols = panels.size() > 1 ? 2 : 1;
    int rowsN = Math.max(1, (panels.size() + cols - 1) / cols);
    BufferedImage img = new BufferedImage(pw * cols, ph * rowsN, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = canvas(img);
    for (int k = 0; k < panels.size(); k++) {
      Panel p = panels.get(k);
      int x0 = (k % cols) * pw;
      int y0 = (k / cols) * ph;
      int n = 1;
      long max = 1;
      for (WanRun.Result r : p.runs()) {
        n = Math.max(n, r.seconds().output().length);
        max = Math.max(max, max(r.seconds().output(), r.seconds().ideal()));
      }
      Axes ax = axes(g, p.title(), x0, y0, pw, ph, n, niceCeiling(max), "deliveries/s");
      for (int i = 0; i < p.runs().size(); i++) {
        Color c = LINE_COLOURS[i % LINE_COLOURS.length];
        WanRun.Seconds s = p.runs().get(i).seconds();
        g.setColor(c);
        g.setStroke(new BasicStroke(1.8f));
        ax.line(g, s.output());
        g.setStroke(
            new BasicStroke(
                1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        ax.line(g, s.ideal());
        g.setStroke(new BasicStroke(1f));
        ax.legend(g, i, p.labels().get(i) + " (dashed: ideal)");
      }
    }
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }

  /** A line of a {@link #timeline} panel; a dashed one is drawn thinner, with dashes. */
  public record Series(String name, long[] values, boolean dashed) {}

  /** A vertical line across every {@link #timeline} panel at a second, labelled at the top. */
  public record Marker(double second, String label, Color colour) {}

  /** A {@link #timeline} panel: its title, the unit of its values and its lines. */
  public record Panel(String title, String unit, List<Series> series) {}

  private static final Color[] MANY_COLOURS = {
    new Color(0x1f77b4),
    new Color(0xd62728),
    new Color(0x2ca02c),
    new Color(0x9467bd),
    new Color(0xff7f0e),
    new Color(0x8c564b),
    new Color(0xe377c2),
    new Color(0x7f7f7f),
    new Color(0xbcbd22),
    new Color(0x17becf)
  };

  /**
   * Panels stacked over one time axis (seconds), each with its lines, and the markers drawn across
   * all of them: a campaign's deliveries and its routers' memory, with the moments of its faults.
   */
  public static void timeline(Path file, List<Panel> panels, List<Marker> markers)
      throws IOException {
    int pw = 1200;
    int ph = 340;
    BufferedImage img =
        new BufferedImage(pw, ph * Math.max(1, panels.size()), BufferedImage.TYPE_INT_RGB);
    Graphics2D g = canvas(img);
    for (int k = 0; k < panels.size(); k++) {
      Panel p = panels.get(k);
      int n = 1;
      long max = 1;
      for (Series s : p.series()) {
        n = Math.max(n, s.values().length);
        max = Math.max(max, max(s.values()));
      }
      Axes ax = axes(g, p.title(), 0, k * ph, pw, ph, n, niceCeiling(max), p.unit());
      for (Marker m : markers) {
        int x = ax.left + (int) ((ax.right - ax.left) * m.second() / Math.max(1, n - 1));
        g.setColor(m.colour());
        g.setStroke(
            new BasicStroke(
                1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {3f, 3f}, 0f));
        g.drawLine(x, ax.top, x, ax.bottom);
        if (k == 0) {
          g.drawString(m.label(), x + 2, ax.top - 4);
        }
      }
      for (int i = 0; i < p.series().size(); i++) {
        Series s = p.series().get(i);
        g.setColor(MANY_COLOURS[i % MANY_COLOURS.length]);
        g.setStroke(
            s.dashed()
                ? new BasicStroke(
                    1.2f,
                    BasicStroke.CAP_BUTT,
                    BasicStroke.JOIN_MITER,
                    10f,
                    new float[] {6f, 4f},
                    0f)
                : new BasicStroke(1.6f));
        ax.line(g, s.values());
        g.setStroke(new BasicStroke(1f));
        ax.legend(g, i, s.name());
      }
    }
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }

  /** The largest value in {@code series}, at least 1 (a plot's y-axis needs a height). */
  private static long max(long[]... series) {
    long max = 1;
    for (long[] a : series) {
      for (long v : a) {
        max = Math.max(max, v);
      }
    }
    return max;
  }

  /** A panel's frame: maps seconds and values to pixels. */
  private record Axes(int left, int right, int top, int bottom, int n, long max) {
    int x(int t) {
      return left + (right - left) * t / Math.max(1, n - 1);
    }

    int y(long v) {
      return bottom - (int) ((bottom - top) * v / (double) max);
    }

    void line(Graphics2D g, long[] values) {
      int px = -1;
      int py = -1;
      for (int t = 0; t < values.length; t++) {
        int x = x(t);
        int y = y(values[t]);
        if (px >= 0) {
          g.drawLine(px, py, x, y);
        }
        px = x;
        py = y;
      }
    }

    void legend(Graphics2D g, int k, String label) {
      g.fillRect(right - 230, top + 4 + 16 * k, 12, 4);
      g.drawString(label, right - 212, top + 10 + 16 * k);
    }
  }

  /** Draws a panel's title, grid, tick labels and axes. */
  private static Axes axes(
      Graphics2D g, String title, int x0, int y0, int w, int h, int n, long max, String unit) {
    Axes a = new Axes(x0 + 80, x0 + w - 20, y0 + 40, y0 + h - 45, n, max);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
    g.setColor(Color.BLACK);
    g.drawString(title, a.left, y0 + 22);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    for (int i = 0; i <= 4; i++) {
      int y = a.bottom - (a.bottom - a.top) * i / 4;
      g.setColor(new Color(0xdddddd));
      g.drawLine(a.left, y, a.right, y);
      g.setColor(Color.DARK_GRAY);
      String label = String.format(Locale.ROOT, "%,d", max * i / 4);
      g.drawString(label, a.left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
    }
    int step = Math.max(1, niceStep(n));
    for (int t = 0; t < n; t += step) {
      g.drawString(Integer.toString(t), a.x(t) - 4, a.bottom + 15);
    }
    g.drawString("time (s); " + unit, a.left, a.bottom + 32);
    g.setColor(Color.BLACK);
    g.drawLine(a.left, a.bottom, a.right, a.bottom);
    g.drawLine(a.left, a.top, a.left, a.bottom);
    return a;
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
              r.system(),
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

  private static final Color[] COLOURS = {
    new Color(0x1f77b4), new Color(0x2ca02c), new Color(0x7f7f7f), new Color(0xd62728)
  };
  private static final String[] SERIES = {"input (msg/s)", "output", "ideal output", "undelivered"};

  /** One panel per result: input, output, ideal output and undelivered per second. */
  public static void plot(Path file, List<WanRun.Result> results) throws IOException {
    grid(file, results.stream().map(List::of).toList());
  }

  private static void panel(Graphics2D g, WanRun.Result r, int x0, int y0, int w, int h) {
    WanRun.Seconds s = r.seconds();
    long[][] series = {s.input(), s.output(), s.ideal(), s.undelivered()};
    long max = max(series);
    String title = r.system() + " — " + r.scenario().name() + " (" + r.scenario().topology() + ")";
    Axes ax =
        axes(
            g, title, x0, y0, w, h, s.input().length, niceCeiling(max), "messages/s, deliveries/s");
    g.setStroke(new BasicStroke(1.8f));
    for (int k = 0; k < series.length; k++) {
      g.setColor(COLOURS[k]);
      ax.line(g, series[k]);
      ax.legend(g, k, SERIES[k]);
    }
    g.setStroke(new BasicStroke(1f));
  }

  private static long niceCeiling(long v) {
    long p = 1;
    while (p * 10 <= v) {
      p *= 10;
    }
    for (long m : new long[] {1, 2, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static int niceStep(int n) {
    for (int s : new int[] {1, 2, 5, 10, 20, 30, 60, 120, 300, 600}) {
      if (n / s <= 12) {
        return s;
      }
    }
    return 1200;
  }
}
