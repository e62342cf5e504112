package io.bdrp.testbed;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Single-server fan-out: one publisher and N subscribers on one router or broker, every
 * subscription taking every message ({@link Workload#FANOUT}) or one bucket of N, about 1/N of the
 * messages ({@link Workload#SELECTIVE}). The publisher sends as fast as the system takes messages,
 * held back only by a window of deliveries still outstanding, the same for every system, so that
 * what is measured is the rate the system sustains without losing anything rather than the depth of
 * its buffers. A delivery that never arrives stalls the window; after {@link #STALL} it is written
 * off and counted as lost.
 */
public final class FanoutBenchmark {
  /** How long the window may make no progress before its outstanding deliveries count as lost. */
  public static final Duration STALL = Duration.ofSeconds(2);

  /** Which messages each subscription takes. */
  public enum Workload {
    /** Every subscription takes every message. */
    FANOUT,
    /** Subscription j takes bucket j; messages go round the buckets. */
    SELECTIVE
  }

  /** Run parameters. */
  public record Options(
      int subscribers, int bodyBytes, Duration warmup, Duration measure, int window) {
    /** The set-up: 10 subscribers, 200-byte bodies, 3 s warm-up, 10 s measured. */
    public static final Options DEFAULT =
        new Options(10, 200, Duration.ofSeconds(3), Duration.ofSeconds(10), 20_000);

    public Options {
      if (subscribers < 1 || bodyBytes < PubSubSystem.HEADER || window < 1) {
        throw new IllegalArgumentException(
            "need at least one subscriber, a body of at least "
                + PubSubSystem.HEADER
                + " bytes and a window of at least one delivery");
      }
    }
  }

  /**
   * One system's figures.
   *
   * @param published messages published in the measured interval
   * @param expected deliveries those messages should make
   * @param delivered deliveries that arrived
   * @param seconds from the first measured send to the last measured delivery
   * @param serverCpuSeconds CPU time of the server processes over that interval
   * @param clientCpuSeconds CPU time of the harness (all clients) over that interval
   * @param refused requests the server refused and reported to the clients over the whole run
   *     (warm-up included): a message or subscription outside a client's permissions
   * @param duplicates deliveries that reached a subscriber a second time over the whole run
   *     (warm-up included), not counted in {@code delivered}
   */
  public record Result(
      String system,
      Workload workload,
      int subscribers,
      long published,
      long expected,
      long delivered,
      double seconds,
      double serverCpuSeconds,
      double clientCpuSeconds,
      long refused,
      long duplicates) {
    /** Deliveries per second. */
    public double deliveredPerSecond() {
      return delivered / seconds;
    }

    /** Deliveries that did not arrive. */
    public long lost() {
      return expected - delivered;
    }
  }

  private FanoutBenchmark() {}

  /** A subscriber's counters, written by the one thread its client delivers on. */
  private static final class Sink implements PubSubSystem.Receiver {
    final LongAdder all;
    final LongAdder measured;
    volatile long any;
    volatile long lastMeasuredAt;

    Sink(LongAdder all, LongAdder measured) {
      this.all = all;
      this.measured = measured;
    }

    @Override
    public void received(long sentNanos, byte phase) {
      all.increment();
      any++;
      if (phase == 1) {
        measured.increment();
        lastMeasuredAt = System.nanoTime();
      }
    }
  }

  /** Runs the benchmark on {@code system}, which it starts (one server) and closes. */
  public static Result run(
      PubSubSystem system, Workload workload, Options o, Path dir, PrintStream progress)
      throws Exception {
    try (system) {
      system.start(1, dir);
      LongAdder all = new LongAdder();
      LongAdder measured = new LongAdder();
      List<Sink> sinks = new ArrayList<>();
      for (int j = 0; j < o.subscribers(); j++) {
        Sink s = new Sink(all, measured);
        sinks.add(s);
        system.subscribe(0, "sub-" + j, workload == Workload.FANOUT ? PubSubSystem.ALL : j, s);
      }
      int perMessage = workload == Workload.FANOUT ? o.subscribers() : 1;
      try (PubSubSystem.Publisher pub = system.publisher(0, "pub")) {
        Driver d =
            new Driver(pub, all, perMessage, o, progress, system.name() + " " + name(workload));
        d.untilEverySubscriberHears(sinks, Duration.ofSeconds(60));
        d.publishFor(o.warmup(), (byte) 0);
        d.drain(all, d.sentDeliveries, Duration.ofSeconds(10));
        double cpu0 = cpu(system);
        double client0 = clientCpu();
        long t0 = System.nanoTime();
        long sentBefore = d.sentMessages;
        d.publishFor(o.measure(), (byte) 1);
        long published = d.sentMessages - sentBefore;
        long expected = published * perMessage;
        d.drain(measured, expected, Duration.ofSeconds(10));
        long last = sinks.stream().mapToLong(s -> s.lastMeasuredAt).max().orElse(t0);
        double seconds = Math.max(1e-9, (Math.max(last, t0) - t0) / 1e9);
        return new Result(
            system.name(),
            workload,
            o.subscribers(),
            published,
            expected,
            measured.sum(),
            seconds,
            cpu(system) - cpu0,
            clientCpu() - client0,
            system.refused(),
            system.duplicates());
      }
    }
  }

  static String name(Workload w) {
    return w.name().toLowerCase(java.util.Locale.ROOT);
  }

  static double cpu(PubSubSystem s) {
    return s.processes().stream().mapToDouble(p -> p.cpu().toNanos() / 1e9).sum();
  }

  static double clientCpu() {
    return ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO).toNanos() / 1e9;
  }

  /** The publishing loop with its window. */
  private static final class Driver {
    final PubSubSystem.Publisher pub;
    final LongAdder delivered;
    final int perMessage;
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
        int perMessage,
        Options o,
        PrintStream progress,
        String label) {
      this.pub = pub;
      this.delivered = delivered;
      this.perMessage = perMessage;
      this.o = o;
      this.progress = progress;
      this.label = label;
      this.body = new byte[o.bodyBytes()];
      new Random(7).nextBytes(body);
    }

    void send(byte phase) throws Exception {
      PubSubSystem.stamp(body, phase);
      pub.publish((int) (sentMessages % o.subscribers()), body);
      sentMessages++;
      sentDeliveries += perMessage;
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
        } else if (System.nanoTime() - since > STALL.toNanos()) {
          long out = sentDeliveries - writtenOff - got;
          writtenOff += out;
          progress.printf(
              "%s: no delivery for %d s with %,d outstanding; counted as lost%n",
              label, STALL.toSeconds(), out);
          return;
        }
      }
    }

    void publishFor(Duration d, byte phase) throws Exception {
      long start = System.nanoTime();
      long end = start + d.toNanos();
      long nextReport = start + 1_000_000_000L;
      long reportedAt = start;
      long reportedDelivered = delivered.sum();
      while (true) {
        for (int i = 0; i < 64; i++) {
          send(phase);
        }
        awaitWindow();
        long now = System.nanoTime();
        if (now >= nextReport) {
          long got = delivered.sum();
          progress.printf(
              "%s %s %4.1f s: %,12.0f deliveries/s%n",
              label,
              phase == 0 ? "warm-up " : "measured",
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

    /** Publishes warm-up messages until every subscriber has had one (routes, subscriptions). */
    void untilEverySubscriberHears(List<Sink> sinks, Duration limit) throws Exception {
      long end = System.nanoTime() + limit.toNanos();
      while (sinks.stream().anyMatch(s -> s.any == 0)) {
        if (System.nanoTime() > end) {
          throw new IllegalStateException(
              label + ": some subscribers heard nothing within " + limit.toSeconds() + " s");
        }
        for (int i = 0; i < o.subscribers(); i++) {
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
