package io.bdrp.testbed;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * End-to-end latency across a line of servers at low load: a publisher attached to the first server
 * sends at a fixed rate, a subscriber attached to the last takes every message, and each message's
 * latency is its receive time minus the send time written in its body (both clients are in this
 * JVM, so both read the same clock).
 */
public final class LatencyBenchmark {
  /** Run parameters. */
  public record Options(
      int servers, int ratePerSecond, int bodyBytes, Duration warmup, Duration measure) {
    /** The set-up: 3 servers, 1,000 messages/s, 200-byte bodies, 3 s + 10 s. */
    public static final Options DEFAULT =
        new Options(3, 1_000, 200, Duration.ofSeconds(3), Duration.ofSeconds(10));

    public Options {
      if (servers < 1 || ratePerSecond < 1 || bodyBytes < PubSubSystem.HEADER) {
        throw new IllegalArgumentException(
            "need at least one server, a positive rate and a body of at least "
                + PubSubSystem.HEADER
                + " bytes");
      }
    }
  }

  /**
   * One system's figures, latencies in microseconds.
   *
   * @param sent messages sent in the measured interval
   * @param received of those, how many arrived
   */
  public record Result(
      String system,
      int servers,
      long sent,
      long received,
      double p50,
      double p90,
      double p99,
      double p999,
      double max) {}

  private LatencyBenchmark() {}

  /** The subscriber: records the latency of every measured message. */
  private static final class Recorder implements PubSubSystem.Receiver {
    final long[] samples;
    volatile int count;
    volatile long any;

    Recorder(int capacity) {
      samples = new long[capacity];
    }

    @Override
    public void received(long sent, byte phase) {
      long now = System.nanoTime();
      any++;
      if (phase != 1) {
        return;
      }
      int n = count;
      if (n < samples.length) {
        samples[n] = now - sent;
        count = n + 1;
      }
    }
  }

  /** Runs the benchmark on {@code system}, which it starts and closes. */
  public static Result run(PubSubSystem system, Options o, Path dir, PrintStream progress)
      throws Exception {
    try (system) {
      system.start(o.servers(), dir);
      long expected = (long) o.ratePerSecond() * o.measure().toSeconds();
      Recorder r = new Recorder((int) Math.min(Integer.MAX_VALUE - 8, expected + 1_000));
      system.subscribe(o.servers() - 1, "sub", PubSubSystem.ALL, r);
      byte[] body = new byte[o.bodyBytes()];
      try (PubSubSystem.Publisher pub = system.publisher(0, "pub")) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (r.any == 0) {
          if (System.nanoTime() > end) {
            throw new IllegalStateException(
                system.name() + ": the subscriber heard nothing within 60 s");
          }
          send(pub, body, (byte) 0);
          Thread.sleep(20);
        }
        // Warm-up at ten times the rate, so that JIT compilers have seen the paths before the
        // measured interval starts; then a pause for the queues to empty.
        paced(
            pub,
            body,
            o.ratePerSecond() * 10,
            o.warmup(),
            (byte) 0,
            progress,
            system.name() + " warm-up");
        Thread.sleep(500);
        long sent =
            paced(pub, body, o.ratePerSecond(), o.measure(), (byte) 1, progress, system.name());
        long quiet = System.nanoTime();
        int seen = r.count;
        while (seen < sent && System.nanoTime() - quiet < 2_000_000_000L) {
          Thread.sleep(5);
          if (r.count != seen) {
            seen = r.count;
            quiet = System.nanoTime();
          }
        }
        long[] s = Arrays.copyOf(r.samples, r.count);
        writeSamples(dir.resolve("latencies.csv"), s);
        Arrays.sort(s);
        return new Result(
            system.name(),
            o.servers(),
            sent,
            s.length,
            micros(s, 0.50),
            micros(s, 0.90),
            micros(s, 0.99),
            micros(s, 0.999),
            s.length == 0 ? Double.NaN : s[s.length - 1] / 1e3);
      }
    }
  }

  /** Every measured latency in arrival order, for plots and for looking at outliers. */
  private static void writeSamples(Path file, long[] nanos) throws java.io.IOException {
    try (CsvFile csv = CsvFile.create(file, "message", "latency_us")) {
      for (int i = 0; i < nanos.length; i++) {
        csv.row(i, CsvFile.fixed(1, nanos[i] / 1e3));
      }
    }
  }

  static double micros(long[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e3;
  }

  private static void send(PubSubSystem.Publisher pub, byte[] body, byte phase) throws Exception {
    PubSubSystem.stamp(body, phase);
    pub.publish(0, body); // every client here sends at once; nothing waits for a batch
  }

  /** Sends at the configured rate for {@code d}; returns how many it sent. */
  private static long paced(
      PubSubSystem.Publisher pub,
      byte[] body,
      int rate,
      Duration d,
      byte phase,
      PrintStream progress,
      String label)
      throws Exception {
    long period = 1_000_000_000L / rate;
    long start = System.nanoTime();
    long n = d.toNanos() / period;
    long nextReport = start + 1_000_000_000L;
    for (long i = 0; i < n; i++) {
      long due = start + i * period;
      long wait;
      while ((wait = due - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      send(pub, body, phase);
      if (System.nanoTime() >= nextReport) {
        progress.printf("%s: %,d of %,d sent%n", label, i + 1, n);
        nextReport += 1_000_000_000L;
      }
    }
    return n;
  }
}
