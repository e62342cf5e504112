package io.bdrp.router;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The router's metrics, rendered in the Prometheus text exposition format (version 0.0.4):
 * counters, gauges read when rendered, and histograms. Families are registered once, on the control
 * path; incrementing a counter or observing a histogram allocates nothing and may happen on any
 * thread.
 */
public final class Metrics {
  /** A monotonically increasing count. */
  public static final class Counter {
    private final LongAdder value = new LongAdder();

    public void inc() {
      value.increment();
    }

    public void add(long n) {
      value.add(n);
    }

    public long get() {
      return value.sum();
    }
  }

  /** Counts of observations below each upper bound, plus their sum. */
  public static final class Histogram {
    private final double[] bounds;
    private final AtomicLongArray counts;
    private final LongAdder sumNanos = new LongAdder();

    Histogram(double[] bounds) {
      this.bounds = bounds.clone();
      this.counts = new AtomicLongArray(bounds.length + 1);
    }

    /** Records a duration in nanoseconds; buckets are in seconds. */
    public void observeNanos(long nanos) {
      double s = nanos / 1e9;
      int i = 0;
      while (i < bounds.length && s > bounds[i]) {
        i++;
      }
      counts.incrementAndGet(i);
      sumNanos.add(nanos);
    }

    public long count() {
      long n = 0;
      for (int i = 0; i < counts.length(); i++) {
        n += counts.get(i);
      }
      return n;
    }
  }

  private record Series(String labels, Object value) {}

  private static final class Family {
    final String name;
    final String help;
    final String type;
    final List<Series> series = new ArrayList<>();

    Family(String name, String help, String type) {
      this.name = name;
      this.help = help;
      this.type = type;
    }
  }

  private final Map<String, Family> families = new LinkedHashMap<>();

  /** A counter {@code name{labels}}; labels are name, value pairs. */
  public synchronized Counter counter(String name, String help, String... labels) {
    Counter c = new Counter();
    family(name, help, "counter").series.add(new Series(labels(labels), c));
    return c;
  }

  /**
   * Removes the series {@code name{labels}} (a session's, when it ends), so that series come and go
   * with what they describe instead of growing with every session there ever was.
   */
  public synchronized void remove(String name, String... labels) {
    Family f = families.get(name);
    if (f != null) {
      String l = labels(labels);
      f.series.removeIf(s -> s.labels.equals(l));
    }
  }

  /**
   * A counter kept elsewhere (in the kernel, say), read from {@code value} each time the metrics
   * are rendered; {@code value} never decreases.
   */
  public synchronized void counter(String name, String help, LongSupplier value, String... labels) {
    family(name, help, "counter").series.add(new Series(labels(labels), value));
  }

  /** A gauge read from {@code value} each time the metrics are rendered. */
  public synchronized void gauge(String name, String help, LongSupplier value, String... labels) {
    family(name, help, "gauge").series.add(new Series(labels(labels), value));
  }

  /** A histogram with the given upper bounds in seconds, ascending. */
  public synchronized Histogram histogram(String name, String help, double... boundsSeconds) {
    for (int i = 1; i < boundsSeconds.length; i++) {
      if (!(boundsSeconds[i] > boundsSeconds[i - 1])) {
        throw new IllegalArgumentException("histogram bounds must ascend");
      }
    }
    Histogram h = new Histogram(boundsSeconds);
    family(name, help, "histogram").series.add(new Series("", h));
    return h;
  }

  private Family family(String name, String help, String type) {
    if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
      throw new IllegalArgumentException("not a metric name: " + name);
    }
    Family f = families.computeIfAbsent(name, n -> new Family(n, help, type));
    if (!f.type.equals(type)) {
      throw new IllegalArgumentException(name + " is a " + f.type + ", not a " + type);
    }
    return f;
  }

  private static String labels(String... kv) {
    if (kv.length % 2 != 0) {
      throw new IllegalArgumentException("labels come in name, value pairs");
    }
    if (kv.length == 0) {
      return "";
    }
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < kv.length; i += 2) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(kv[i]).append("=\"");
      for (char c : kv[i + 1].toCharArray()) {
        switch (c) {
          case '\\' -> sb.append("\\\\");
          case '"' -> sb.append("\\\"");
          case '\n' -> sb.append("\\n");
          default -> sb.append(c);
        }
      }
      sb.append('"');
    }
    return sb.append('}').toString();
  }

  /** The metrics in the Prometheus text format. */
  public synchronized String render() {
    StringBuilder sb = new StringBuilder();
    for (Family f : families.values()) {
      sb.append("# HELP ")
          .append(f.name)
          .append(' ')
          .append(f.help.replace("\n", " "))
          .append('\n');
      sb.append("# TYPE ").append(f.name).append(' ').append(f.type).append('\n');
      for (Series s : f.series) {
        switch (s.value) {
          case Counter c -> line(sb, f.name, s.labels, Long.toString(c.get()));
          case LongSupplier g -> line(sb, f.name, s.labels, Long.toString(g.getAsLong()));
          case Histogram h -> {
            long cumulative = 0;
            for (int i = 0; i <= h.bounds.length; i++) {
              cumulative += h.counts.get(i);
              String le = i < h.bounds.length ? Double.toString(h.bounds[i]) : "+Inf";
              line(sb, f.name + "_bucket", "{le=\"" + le + "\"}", Long.toString(cumulative));
            }
            line(sb, f.name + "_sum", "", Double.toString(h.sumNanos.sum() / 1e9));
            line(sb, f.name + "_count", "", Long.toString(cumulative));
          }
          default -> throw new IllegalStateException(s.value.getClass().toString());
        }
      }
    }
    return sb.toString();
  }

  private static void line(StringBuilder sb, String name, String labels, String value) {
    sb.append(name).append(labels).append(' ').append(value).append('\n');
  }
}
