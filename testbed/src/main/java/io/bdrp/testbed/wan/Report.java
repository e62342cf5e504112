package io.bdrp.testbed.wan;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
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
      try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(d.resolve("seconds.csv")))) {
        w.println(
            "second,input_msgs,ideal_deliveries,output_deliveries,undelivered,duplicates,spurious,"
                + "max_link_utilisation,server_cpu_s");
        for (int i = 0; i < s.input().length; i++) {
          w.printf(
              Locale.ROOT,
              "%d,%d,%d,%d,%d,%d,%d,%.4f,%.3f%n",
              i,
              s.input()[i],
              s.ideal()[i],
              s.output()[i],
              s.undelivered()[i],
              s.duplicates()[i],
              s.spurious()[i],
              s.maxLinkUtilisation()[i],
              s.serverCpu()[i]);
        }
      }
    }
    Files.writeString(dir.resolve("summary.md"), summary(results));
    plot(dir.resolve("plot.png"), results);
  }

  /** The summary table. */
  public static String summary(List<WanRun.Result> results) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| system | scenario | messages | expected | delivered | undelivered | duplicates |"
            + " spurious | delivered % | peak sustained output/s | max link % | peak server CPU"
            + " (cores) |\n");
    b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (WanRun.Result r : results) {
      WanRun.Seconds s = r.seconds();
      long peak = peakSustained(s.output(), r.scenario().seconds());
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
              "| %s | %s | %,d | %,d | %,d | %,d | %,d | %,d | %.3f | %,d | %.0f | %.2f |%n",
              r.system(),
              r.scenario().name(),
              r.messages(),
              r.expected(),
              r.delivered(),
              r.undelivered(),
              r.duplicates(),
              r.spurious(),
              r.expected() == 0 ? 100.0 : 100.0 * (r.expected() - r.undelivered()) / r.expected(),
              peak,
              100 * maxUtil,
              cpu));
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

  /** The window of {@link #peakSustained}. */
  public static final int SUSTAINED_SECONDS = 10;

  private static final Color[] COLOURS = {
    new Color(0x1f77b4), new Color(0x2ca02c), new Color(0x7f7f7f), new Color(0xd62728)
  };
  private static final String[] SERIES = {"input (msg/s)", "output", "ideal output", "undelivered"};

  /** One panel per result: input, output, ideal output and undelivered per second. */
  public static void plot(Path file, List<WanRun.Result> results) throws IOException {
    int pw = 900;
    int ph = 320;
    BufferedImage img =
        new BufferedImage(pw, ph * Math.max(1, results.size()), BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, img.getWidth(), img.getHeight());
    for (int k = 0; k < results.size(); k++) {
      panel(g, results.get(k), 0, k * ph, pw, ph);
    }
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }

  private static void panel(Graphics2D g, WanRun.Result r, int x0, int y0, int w, int h) {
    WanRun.Seconds s = r.seconds();
    long[][] series = {s.input(), s.output(), s.ideal(), s.undelivered()};
    int n = s.input().length;
    long max = 1;
    for (long[] a : series) {
      for (long v : a) {
        max = Math.max(max, v);
      }
    }
    max = niceCeiling(max);
    int left = x0 + 80;
    int right = x0 + w - 20;
    int top = y0 + 40;
    int bottom = y0 + h - 45;
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
    g.setColor(Color.BLACK);
    g.drawString(
        r.system() + " — " + r.scenario().name() + " (" + r.scenario().topology() + ")",
        left,
        y0 + 22);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    for (int i = 0; i <= 4; i++) {
      int y = bottom - (bottom - top) * i / 4;
      g.setColor(new Color(0xdddddd));
      g.drawLine(left, y, right, y);
      g.setColor(Color.DARK_GRAY);
      String label = String.format(Locale.ROOT, "%,d", max * i / 4);
      g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
    }
    int step = Math.max(1, niceStep(n));
    for (int t = 0; t < n; t += step) {
      int x = left + (right - left) * t / Math.max(1, n - 1);
      g.drawString(Integer.toString(t), x - 4, bottom + 15);
    }
    g.drawString("time (s); messages/s and deliveries/s", left, bottom + 32);
    g.setColor(Color.BLACK);
    g.drawLine(left, bottom, right, bottom);
    g.drawLine(left, top, left, bottom);
    g.setStroke(new BasicStroke(1.8f));
    for (int k = 0; k < series.length; k++) {
      g.setColor(COLOURS[k]);
      int px = -1;
      int py = -1;
      for (int t = 0; t < n; t++) {
        int x = left + (right - left) * t / Math.max(1, n - 1);
        int y = bottom - (int) ((bottom - top) * series[k][t] / (double) max);
        if (px >= 0) {
          g.drawLine(px, py, x, y);
        }
        px = x;
        py = y;
      }
      g.fillRect(right - 150, top + 4 + 16 * k, 12, 4);
      g.drawString(SERIES[k], right - 132, top + 10 + 16 * k);
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
