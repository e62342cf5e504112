package io.bdrp.testbed;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.LongStream;
import javax.imageio.ImageIO;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The testbed's plots, drawn by XChart: per-second time series on panels with titled axes and a
 * legend, several panels laid out in one PNG.
 */
public final class Plots {
  private Plots() {}

  /** Grey, for a reference line such as the oracle's ideal output. */
  public static final Color GREY = new Color(0x7f7f7f);

  private static final Color[] COLOURS = {
    new Color(0x1f77b4),
    new Color(0xd62728),
    new Color(0x2ca02c),
    new Color(0x9467bd),
    new Color(0xff7f0e),
    new Color(0x8c564b),
    new Color(0xe377c2),
    new Color(0xbcbd22),
    new Color(0x17becf)
  };

  /** The {@code i}-th of a set of distinct colours (they repeat after nine). */
  public static Color colour(int i) {
    return COLOURS[i % COLOURS.length];
  }

  /** The same colours without {@code taken} (such as the markers' own), never empty. */
  public static List<Color> coloursBut(Collection<Color> taken) {
    List<Color> left = new ArrayList<>(List.of(COLOURS));
    left.removeAll(taken);
    return left.isEmpty() ? List.of(COLOURS) : left;
  }

  /** An empty panel of {@code width × height} pixels: time in seconds across, {@code unit} up. */
  public static XYChart timeChart(String title, String unit, int width, int height) {
    System.setProperty("java.awt.headless", "true");
    XYChart c =
        new XYChartBuilder()
            .width(width)
            .height(height)
            .title(title)
            .xAxisTitle("time (s)")
            .yAxisTitle(unit)
            .build();
    Styler st = c.getStyler();
    st.setChartBackgroundColor(Color.WHITE);
    st.setLegendPosition(Styler.LegendPosition.InsideNE);
    st.setLegendBackgroundColor(new Color(255, 255, 255, 200));
    c.getStyler().setYAxisMin(0.0);
    c.getStyler().setXAxisDecimalPattern("#,##0");
    c.getStyler().setYAxisDecimalPattern("#,##0");
    return c;
  }

  /** Adds {@code values} (one per second from 0) as a line; dashed lines are thinner. */
  public static void line(XYChart c, String name, long[] values, Color colour, boolean dashed) {
    double[] x = LongStream.range(0, Math.max(1, values.length)).asDoubleStream().toArray();
    double[] y =
        values.length == 0 ? new double[1] : LongStream.of(values).asDoubleStream().toArray();
    XYSeries s = c.addSeries(name, x, y);
    s.setMarker(SeriesMarkers.NONE);
    s.setLineColor(colour);
    s.setLineStyle(dashed ? SeriesLines.DASH_DASH : SeriesLines.SOLID);
    s.setLineWidth(dashed ? 1.2f : 1.8f);
  }

  /**
   * A vertical dotted line at {@code second} from 0 to {@code top}, left out of the legend, with
   * {@code label} beside its top when not empty.
   */
  public static void marker(XYChart c, double second, long top, String label, Color colour) {
    XYSeries s =
        c.addSeries(
            "marker " + c.getSeriesMap().size(),
            new double[] {second, second},
            new double[] {0, top});
    s.setMarker(SeriesMarkers.NONE);
    s.setLineColor(colour);
    s.setLineStyle(SeriesLines.DOT_DOT);
    s.setLineWidth(1f);
    s.setShowInLegend(false);
    if (!label.isEmpty()) {
      c.addAnnotation(new AnnotationText(label, second, top, false));
    }
  }

  /**
   * Writes {@code rows} of panels as one PNG, each row's panels side by side; every panel keeps its
   * own size, and the image is as wide as the widest row.
   */
  public static void write(Path file, List<List<XYChart>> rows) throws IOException {
    int width = 1;
    int height = 0;
    for (List<XYChart> row : rows) {
      width = Math.max(width, row.stream().mapToInt(XYChart::getWidth).sum());
      height += row.stream().mapToInt(XYChart::getHeight).max().orElse(0);
    }
    BufferedImage img = new BufferedImage(width, Math.max(1, height), BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, img.getWidth(), img.getHeight());
    int y = 0;
    for (List<XYChart> row : rows) {
      int x = 0;
      for (XYChart c : row) {
        g.drawImage(BitmapEncoder.getBufferedImage(c), x, y, null);
        x += c.getWidth();
      }
      y += row.stream().mapToInt(XYChart::getHeight).max().orElse(0);
    }
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }
}
