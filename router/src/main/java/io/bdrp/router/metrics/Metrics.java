package io.bdrp.router.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A router's metrics, through the Prometheus Java client library: each family is a collector in
 * this router's own {@link PrometheusRegistry} (several routers may share a JVM), rendered by the
 * library's text format writer together with the JVM's and the process's metrics (one registry for
 * the whole JVM, registered once). Families are registered on the control path; incrementing a
 * counter or observing a histogram allocates nothing and may happen on any thread.
 */
public final class Metrics {
  /** The JVM's and the process's metrics (memory, GC, threads, CPU, open files...), once. */
  private static final PrometheusRegistry JVM = new PrometheusRegistry();

  static {
    JvmMetrics.builder().register(JVM);
  }

  private static final PrometheusTextFormatWriter TEXT = PrometheusTextFormatWriter.create();

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

  /** Counts of observations below each upper bound, plus their sum (the library's histogram). */
  public static final class Histogram {
    private final io.prometheus.metrics.core.metrics.Histogram h;

    Histogram(io.prometheus.metrics.core.metrics.Histogram h) {
      this.h = h;
    }

    /** Records a duration in nanoseconds; buckets are in seconds. */
    public void observeNanos(long nanos) {
      h.observe(nanos / 1e9);
    }
  }

  private enum Type {
    COUNTER,
    GAUGE,
    HISTOGRAM
  }

  /** A series' value now: a {@link Counter}'s, or a {@link LongSupplier} read when rendered. */
  private static long read(Object value) {
    return value instanceof Counter c ? c.get() : ((LongSupplier) value).getAsLong();
  }

  /** A counter or gauge family: the series registered under one name, one per set of labels. */
  private static final class Family implements Collector {
    final String name;
    final String help;
    final Type type;
    final Map<Labels, Object> series = new LinkedHashMap<>();

    Family(String name, String help, Type type) {
      this.name = name;
      this.help = help;
      this.type = type;
    }

    @Override
    public String getPrometheusName() {
      return name;
    }

    @Override
    public MetricSnapshot collect() {
      // Called from render(), under the Metrics lock, as are all changes to the series.
      if (type == Type.COUNTER) {
        CounterSnapshot.Builder b =
            CounterSnapshot.builder().name(name.substring(0, name.length() - 6)).help(help);
        series.forEach(
            (labels, value) ->
                b.dataPoint(
                    CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels)
                        .value(read(value))
                        .build()));
        return b.build();
      }
      GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
      series.forEach(
          (labels, value) ->
              b.dataPoint(
                  GaugeSnapshot.GaugeDataPointSnapshot.builder()
                      .labels(labels)
                      .value(read(value))
                      .build()));
      return b.build();
    }
  }

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final Map<String, Type> types = new HashMap<>();
  private final Map<String, Family> families = new HashMap<>();

  /**
   * A counter {@code name{labels}}; labels are name, value pairs; the name ends in _total. Asked
   * for again with the same labels, it is the same counter.
   */
  public synchronized Counter counter(String name, String help, String... labels) {
    Map<Labels, Object> series = family(name, help, Type.COUNTER).series;
    Labels l = labels(labels);
    if (series.get(l) instanceof Counter c) {
      return c;
    }
    Counter c = new Counter();
    series.put(l, c);
    return c;
  }

  /**
   * Removes the series {@code name{labels}} (a session's, when it ends), so that series come and go
   * with what they describe instead of growing with every session there ever was.
   */
  public synchronized void remove(String name, String... labels) {
    Family f = families.get(name);
    if (f != null) {
      f.series.remove(labels(labels));
    }
  }

  /**
   * A counter kept elsewhere (in the kernel, say), read from {@code value} each time the metrics
   * are rendered; {@code value} never decreases.
   */
  public synchronized void counter(String name, String help, LongSupplier value, String... labels) {
    family(name, help, Type.COUNTER).series.put(labels(labels), value);
  }

  /** A gauge read from {@code value} each time the metrics are rendered. */
  public synchronized void gauge(String name, String help, LongSupplier value, String... labels) {
    family(name, help, Type.GAUGE).series.put(labels(labels), value);
  }

  /** A histogram with the given upper bounds in seconds, ascending. */
  public synchronized Histogram histogram(String name, String help, double... boundsSeconds) {
    for (int i = 1; i < boundsSeconds.length; i++) {
      if (!(boundsSeconds[i] > boundsSeconds[i - 1])) {
        throw new IllegalArgumentException("histogram bounds must ascend");
      }
    }
    type(name, Type.HISTOGRAM);
    return new Histogram(
        io.prometheus.metrics.core.metrics.Histogram.builder()
            .name(name)
            .help(help)
            .classicOnly()
            .classicUpperBounds(boundsSeconds)
            .withoutExemplars()
            .register(registry));
  }

  private Family family(String name, String help, Type type) {
    if (type == Type.COUNTER && !name.endsWith("_total")) {
      throw new IllegalArgumentException("a counter's name ends in _total: " + name);
    }
    type(name, type);
    Family f = families.get(name);
    if (f == null) {
      f = new Family(name, help, type);
      families.put(name, f);
      registry.register(f);
    }
    return f;
  }

  private void type(String name, Type type) {
    if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
      throw new IllegalArgumentException("not a metric name: " + name);
    }
    Type was = types.putIfAbsent(name, type);
    if (was != null && was != type) {
      throw new IllegalArgumentException(
          name + " is a " + was.name().toLowerCase() + ", not a " + type.name().toLowerCase());
    }
  }

  private static Labels labels(String... kv) {
    if (kv.length % 2 != 0) {
      throw new IllegalArgumentException("labels come in name, value pairs");
    }
    return kv.length == 0 ? Labels.EMPTY : Labels.of(kv);
  }

  /** This router's metrics and the JVM's, in the Prometheus text format (version 0.0.4). */
  public String render() {
    return format(scrape());
  }

  /**
   * This router's series as they are now: cheap (gauges read, nothing formatted), on the thread
   * that owns what the gauges read.
   */
  public synchronized List<MetricSnapshot> scrape() {
    List<MetricSnapshot> all = new ArrayList<>();
    registry.scrape().forEach(all::add);
    return all;
  }

  /**
   * {@code ours} (from {@link #scrape}) and the JVM's series in the Prometheus text format (version
   * 0.0.4): the costly part, on any thread.
   */
  public static String format(List<MetricSnapshot> ours) {
    List<MetricSnapshot> all = new ArrayList<>(ours);
    JVM.scrape().forEach(all::add);
    ByteArrayOutputStream out = new ByteArrayOutputStream(16 << 10);
    try {
      TEXT.write(out, new MetricSnapshots(all));
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
