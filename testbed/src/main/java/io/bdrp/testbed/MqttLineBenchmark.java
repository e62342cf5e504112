package io.bdrp.testbed;

import io.bdrp.testbed.peers.MqttSystem;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Three MQTT servers in a line, subscribers selecting a tenth of the traffic: one publisher on the
 * first server sends messages round {@link Options#buckets} buckets, and every one of the
 * subscribers on the last server takes bucket 0 only, so that a system that forwards by what
 * subscribers want carries a tenth of the messages over its inter-server links and a system that
 * forwards everything carries all of them. Two phases after a warm-up:
 *
 * <ul>
 *   <li><b>loaded</b>: the publisher sends as fast as the system delivers, held back by a window of
 *       deliveries outstanding, as in {@link FanoutBenchmark}; gives the delivered rate, the
 *       latency under that load, and the bytes the inter-server links carried (both ways, measured
 *       by a {@link LinkMeter} on each link, the same way for every system);
 *   <li><b>paced</b>: the publisher sends at a fixed rate well below either system's capacity;
 *       gives the latency the line adds when nothing queues.
 * </ul>
 *
 * A message's latency is its arrival time minus the send time in its body (both clients are in this
 * JVM). Deliveries that do not arrive are counted as lost.
 */
public final class MqttLineBenchmark {
  /** Run parameters. */
  public record Options(
      int servers,
      int subscribers,
      int buckets,
      int bodyBytes,
      Duration warmup,
      Duration measure,
      int window,
      int pacedRatePerSecond) {
    /** The set-up: 3 servers, 10 subscribers of one bucket in 10, 200-byte bodies. */
    public static final Options DEFAULT =
        new Options(3, 10, 10, 200, Duration.ofSeconds(3), Duration.ofSeconds(10), 5_000, 2_000);

    public Options {
      if (servers < 2
          || subscribers < 1
          || buckets < 1
          || bodyBytes < PubSubSystem.HEADER
          || window < 1
          || pacedRatePerSecond < 1) {
        throw new IllegalArgumentException(
            "need two servers or more, a subscriber, a bucket, a body of at least "
                + PubSubSystem.HEADER
                + " bytes, a window and a paced rate of at least one");
      }
    }
  }

  /**
   * One system's figures at one QoS; latencies in microseconds.
   *
   * @param published messages published in the loaded phase
   * @param expected deliveries those should make (subscribers × the messages of bucket 0)
   * @param delivered of those, how many arrived
   * @param seconds from the first loaded send to the last loaded delivery
   * @param linkBytes bytes the inter-server links carried over that interval, both ways
   * @param pacedSent messages published in the paced phase
   * @param pacedExpected deliveries those should make
   * @param pacedDelivered of those, how many arrived
   */
  public record Result(
      String system,
      int qos,
      long published,
      long expected,
      long delivered,
      double seconds,
      long linkBytes,
      double loadedP50,
      double loadedP99,
      long pacedSent,
      long pacedExpected,
      long pacedDelivered,
      double pacedP50,
      double pacedP99,
      double serverCpuSeconds,
      long disconnects) {
    /** Deliveries per second in the loaded phase. */
    public double deliveredPerSecond() {
      return delivered / seconds;
    }

    /** Deliveries that did not arrive, both phases. */
    public long lost() {
      return expected - delivered + pacedExpected - pacedDelivered;
    }

    /** Link bytes per message published in the loaded phase. */
    public double linkBytesPerMessage() {
      return published == 0 ? 0 : (double) linkBytes / published;
    }
  }

  private MqttLineBenchmark() {}

  /** A subscriber's counters and latencies, written by the one thread its client delivers on. */
  private static final class Sink implements PubSubSystem.Receiver {
    final LongAdder all;
    final LongAdder[] byPhase;
    final Histogram loaded = new Histogram(3);
    final Histogram paced = new Histogram(3);
    volatile long any;
    volatile long lastLoadedAt;

    Sink(LongAdder all, LongAdder[] byPhase) {
      this.all = all;
      this.byPhase = byPhase;
    }

    @Override
    public void received(long sentNanos, byte phase) {
      long now = System.nanoTime();
      all.increment();
      any++;
      if (phase == 1) {
        loaded.recordValue(Math.max(0, (now - sentNanos) / 1_000));
        lastLoadedAt = now;
      } else if (phase == 2) {
        paced.recordValue(Math.max(0, (now - sentNanos) / 1_000));
      }
      if (phase >= 0 && phase < byPhase.length) {
        byPhase[phase].increment();
      }
    }
  }

  /** Runs the benchmark on {@code system}, which it starts and closes. */
  public static Result run(MqttSystem system, Options o, Path dir, PrintStream progress)
      throws Exception {
    try (system) {
      system.start(o.servers(), dir);
      int last = o.servers() - 1;
      LongAdder all = new LongAdder();
      LongAdder[] byPhase = {new LongAdder(), new LongAdder(), new LongAdder()};
      List<Sink> sinks = new ArrayList<>();
      for (int j = 0; j < o.subscribers(); j++) {
        Sink s = new Sink(all, byPhase);
        sinks.add(s);
        system.subscribe(last, "sub-" + j, 0, s);
      }
      String label = system.name() + " line qos " + system.qos();
      try (PubSubSystem.Publisher pub = system.publisher(0, "pub")) {
        Driver d = new Driver(pub, all, o, progress, label);
        try {
          d.untilEverySubscriberHears(sinks, Duration.ofSeconds(60));
        } catch (IllegalStateException e) {
          throw new IllegalStateException(e.getMessage() + logTails(system), e);
        }
        d.loaded(o.warmup(), (byte) 0);
        d.drain(all, d.sentDeliveries, Duration.ofSeconds(10));
        double cpu0 = FanoutBenchmark.cpu(system);
        long bytes0 = system.linkBytes();
        long t0 = System.nanoTime();
        long sentBefore = d.sentMessages;
        long deliveriesBefore = d.sentDeliveries;
        d.loaded(o.measure(), (byte) 1);
        long published = d.sentMessages - sentBefore;
        long expected = d.sentDeliveries - deliveriesBefore;
        d.drain(byPhase[1], expected, Duration.ofSeconds(10));
        long end = Math.max(t0, sinks.stream().mapToLong(s -> s.lastLoadedAt).max().orElse(t0));
        double seconds = Math.max(1e-9, (end - t0) / 1e9);
        long linkBytes = system.linkBytes() - bytes0;
        double cpu = FanoutBenchmark.cpu(system) - cpu0;
        long delivered = byPhase[1].sum();

        long pacedBefore = d.sentMessages;
        long pacedDeliveriesBefore = d.sentDeliveries;
        d.paced(o.measure(), o.pacedRatePerSecond(), (byte) 2);
        long pacedSent = d.sentMessages - pacedBefore;
        long pacedExpected = d.sentDeliveries - pacedDeliveriesBefore;
        d.drain(byPhase[2], pacedExpected, Duration.ofSeconds(10));

        Histogram loaded = new Histogram(3);
        Histogram paced = new Histogram(3);
        for (Sink s : sinks) {
          loaded.add(s.loaded);
          paced.add(s.paced);
        }
        return new Result(
            system.name(),
            system.qos(),
            published,
            expected,
            delivered,
            seconds,
            linkBytes,
            percentile(loaded, 50),
            percentile(loaded, 99),
            pacedSent,
            pacedExpected,
            byPhase[2].sum(),
            percentile(paced, 50),
            percentile(paced, 99),
            cpu,
            system.disconnects());
      }
    }
  }

  /** The last lines of each server's log, for an error that says why the line did not form. */
  private static String logTails(MqttSystem system) {
    StringBuilder b = new StringBuilder();
    for (ChildProcess p : system.processes()) {
      b.append(p.describeWithLogTail(40));
    }
    return b.toString();
  }

  private static double percentile(Histogram h, double p) {
    return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p);
  }

  /** The publishing loops: windowed for the loaded phase, at a fixed rate for the paced one. */
  private static final class Driver {
    final PubSubSystem.Publisher pub;
    final LongAdder delivered;
    final Options o;
    final PrintStream progress;
    final String label;
    final byte[] body;
    long sentMessages;
    long sentDeliveries;
    long writtenOff;

    Driver(
        PubSubSystem.Publisher pub,
        LongAdder delivered,
        Options o,
        PrintStream progress,
        String label) {
      this.pub = pub;
      this.delivered = delivered;
      this.o = o;
      this.progress = progress;
      this.label = label;
      this.body = new byte[o.bodyBytes()];
      new Random(7).nextBytes(body);
    }

    void send(byte phase) throws Exception {
      PubSubSystem.stamp(body, phase);
      int bucket = (int) (sentMessages % o.buckets());
      pub.publish(bucket, body);
      sentMessages++;
      if (bucket == 0) {
        sentDeliveries += o.subscribers();
      }
    }

    /** Waits until fewer than a window of deliveries are outstanding. */
    void awaitWindow() throws Exception {
      long got = delivered.sum();
      if (sentDeliveries - writtenOff - got <= o.window()) {
        return;
      }
      pub.flush();
      long since = System.nanoTime();
      long seen = got;
      while (sentDeliveries - writtenOff - got > o.window() / 2) {
        LockSupport.parkNanos(20_000);
        got = delivered.sum();
        if (got != seen) {
          seen = got;
          since = System.nanoTime();
        } else if (System.nanoTime() - since > FanoutBenchmark.STALL.toNanos()) {
          long out = sentDeliveries - writtenOff - got;
          writtenOff += out;
          progress.printf(
              "%s: no delivery for %d s with %,d outstanding; counted as lost%n",
              label, FanoutBenchmark.STALL.toSeconds(), out);
          return;
        }
      }
    }

    void loaded(Duration d, byte phase) throws Exception {
      long start = System.nanoTime();
      long end = start + d.toNanos();
      long nextReport = start + 1_000_000_000L;
      long reportedAt = start;
      long reportedDelivered = delivered.sum();
      while (true) {
        for (int i = 0; i < o.buckets(); i++) {
          send(phase);
        }
        awaitWindow();
        long now = System.nanoTime();
        if (now >= nextReport) {
          long got = delivered.sum();
          progress.printf(
              "%s %s %4.1f s: %,12.0f deliveries/s%n",
              label,
              phase == 0 ? "warm-up" : "loaded ",
              (now - start) / 1e9,
              (got - reportedDelivered) * 1e9 / (now - reportedAt));
          reportedAt = now;
          reportedDelivered = got;
          nextReport += 1_000_000_000L;
        }
        if (now >= end) {
          pub.flush();
          return;
        }
      }
    }

    /** Sends {@code rate} messages a second for {@code d}, each at its scheduled time. */
    void paced(Duration d, int rate, byte phase) throws Exception {
      long start = System.nanoTime();
      long count = d.toNanos() * rate / 1_000_000_000L;
      for (long n = 0; n < count; n++) {
        long at = start + n * 1_000_000_000L / rate;
        long wait;
        while ((wait = at - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
        }
        send(phase);
      }
      pub.flush();
      progress.printf("%s paced: %,d messages at %,d/s%n", label, count, rate);
    }

    /** Publishes warm-up messages until every subscriber has had one (routes, bridges). */
    void untilEverySubscriberHears(List<Sink> sinks, Duration limit) throws Exception {
      long end = System.nanoTime() + limit.toNanos();
      while (sinks.stream().anyMatch(s -> s.any == 0)) {
        if (System.nanoTime() > end) {
          throw new IllegalStateException(
              label + ": some subscribers heard nothing within " + limit.toSeconds() + " s");
        }
        for (int i = 0; i < o.buckets(); i++) {
          send((byte) 0);
        }
        pub.flush();
        Thread.sleep(20);
      }
    }

    /** Waits until {@code counter} reaches {@code target}, or makes no progress for a while. */
    void drain(LongAdder counter, long target, Duration idle) throws InterruptedException {
      long seen = counter.sum();
      long since = System.nanoTime();
      while (seen < target) {
        Thread.sleep(5);
        long now = counter.sum();
        if (now != seen) {
          seen = now;
          since = System.nanoTime();
        } else if (System.nanoTime() - since > idle.toNanos()) {
          return;
        }
      }
    }
  }
}
