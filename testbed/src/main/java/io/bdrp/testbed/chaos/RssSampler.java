package io.bdrp.testbed.chaos;

import io.bdrp.testbed.CsvFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntToLongFunction;

/**
 * Samples the resident set size of every router process ({@code VmRSS} in {@code /proc/PID/status})
 * at a fixed period, following a router across restarts (its PID is asked for at every sample).
 */
public final class RssSampler implements AutoCloseable {
  /** One sample: nanoseconds from the origin, router, PID, resident kB (-1: not running). */
  public record Sample(long at, int router, long pid, long rssKiB) {}

  private final int routers;
  private final IntToLongFunction pid;
  private final long origin;
  private final long periodNanos;
  private final List<Sample> samples = new ArrayList<>();
  private final Thread thread;
  private volatile boolean stop;

  /**
   * Samples {@code routers} routers, whose PIDs {@code pid} gives (-1: none now), every {@code
   * periodMillis}; times are from {@code origin} ({@link System#nanoTime()}).
   */
  public RssSampler(int routers, IntToLongFunction pid, long origin, long periodMillis) {
    this.routers = routers;
    this.pid = pid;
    this.origin = origin;
    this.periodNanos = periodMillis * 1_000_000L;
    this.thread = new Thread(this::loop, "chaos-rss");
    thread.setDaemon(true);
  }

  /** Starts sampling. */
  public void start() {
    thread.start();
  }

  /** The resident set size of process {@code pid} in kB, or -1 if it is not running. */
  public static long rssKiB(long pid) {
    if (pid <= 0) {
      return -1;
    }
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.substring(6).strip().split("\\s+")[0]);
        }
      }
      return -1; // a zombie has no VmRSS line
    } catch (IOException | RuntimeException gone) {
      return -1;
    }
  }

  private void loop() {
    long next = System.nanoTime();
    while (!stop) {
      for (int r = 0; r < routers; r++) {
        long p = pid.applyAsLong(r);
        long kb = rssKiB(p);
        synchronized (samples) {
          samples.add(new Sample(System.nanoTime() - origin, r, p, kb));
        }
      }
      next += periodNanos;
      long wait;
      while ((wait = next - System.nanoTime()) > 0 && !stop) {
        LockSupport.parkNanos(wait);
      }
    }
  }

  /** Every sample so far. */
  public List<Sample> samples() {
    synchronized (samples) {
      return List.copyOf(samples);
    }
  }

  /** Each router's highest sample in [{@code from}, {@code to}) in kB (-1: none). */
  public long[] peaks(long from, long to) {
    long[] peak = new long[routers];
    java.util.Arrays.fill(peak, -1);
    for (Sample s : samples()) {
      if (s.at >= from && s.at < to) {
        peak[s.router] = Math.max(peak[s.router], s.rssKiB);
      }
    }
    return peak;
  }

  /** Each router's highest sample in each second from the origin, in MiB (0: none). */
  public long[][] perSecondMiB(int seconds) {
    long[][] out = new long[routers][seconds];
    for (Sample s : samples()) {
      int sec = (int) (s.at / 1_000_000_000L);
      if (sec >= 0 && sec < seconds && s.rssKiB > 0) {
        out[s.router][sec] = Math.max(out[s.router][sec], s.rssKiB / 1024);
      }
    }
    return out;
  }

  /** Writes every sample as CSV: seconds from the origin, router, PID, kB. */
  public void write(Path file) throws IOException {
    try (CsvFile w = CsvFile.create(file, "seconds", "router", "pid", "rss_kib")) {
      for (Sample s : samples()) {
        w.row(CsvFile.fixed(3, s.at / 1e9), s.router, s.pid, s.rssKiB);
      }
    }
  }

  @Override
  public void close() {
    stop = true;
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
