package io.bdrp.testbed.cli;

import io.bdrp.router.ring.SharedRing;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.Ports;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * The link transport alone, between two processes on this host: a writer (this JVM) streams
 * fixed-size frames to a reader (a child JVM) through a shared-memory ring, as a router writes DATA
 * into its neighbour's ring ({@link SharedRing}, the router's own code), or through a TCP loopback
 * connection. Four phases per transport: low and high load (fixed rates, every frame with its send
 * time), full load (as fast as the writer can send, in 64 KiB batches, one frame in 64 with its
 * send time, after as long unmeasured), and idle (the reader's CPU while nothing is sent). The
 * reader records the one-way latency (both processes read the same monotonic clock) and the rate.
 */
final class RingBench {
  private RingBench() {}

  /** Phases, as the byte after each frame's send time. */
  static final byte LOW = 1;

  static final byte HIGH = 2;
  static final byte MOST = 3;
  static final byte WARM = 4;
  static final byte END = 5;

  /**
   * The CPUs this JVM may use, read before any run pins it (a pinned JVM sees one CPU, and would
   * take the next transport's run for an unpinnable machine).
   */
  private static final int CPUS = Runtime.getRuntime().availableProcessors();

  /** Run parameters. */
  record Options(
      int frameBytes,
      int lowRate,
      int highRate,
      Duration phase,
      Duration idle,
      int ringBytes,
      boolean pin) {
    Options {
      if (frameBytes < 17 || frameBytes > 65_536 || lowRate < 1 || highRate < 1) {
        throw new IllegalArgumentException(
            "--frame-bytes: 17 to 65536; --low-rate, --high-rate: at least 1 (got "
                + frameBytes
                + ", "
                + lowRate
                + ", "
                + highRate
                + ")");
      }
    }
  }

  /** One phase's figures, as the reader saw them. */
  record Phase(
      String transport,
      String load,
      long sent,
      long frames,
      double seconds,
      double p50us,
      double p90us,
      double p99us,
      double p999us,
      double maxUs) {
    double perSecond() {
      return seconds > 0 ? frames / seconds : 0;
    }
  }

  /**
   * One transport's run: its phases, the reader's CPU while idle (cores), and the round trip of a
   * cache line between two CPUs just before and just after the full-load phase (ns; NaN unpinned).
   */
  record Run(
      String transport,
      double idleReaderCores,
      List<Phase> phases,
      double roundTripBeforeNs,
      double roundTripAfterNs) {}

  /** Runs {@code transport} ("shm" or "tcp") with a reader process, results under {@code dir}. */
  static Run run(String transport, Options o, Path dir, PrintStream progress) throws Exception {
    Files.createDirectories(dir);
    Path results = dir.resolve(transport + "-reader.txt");
    String where;
    if (transport.equals("shm")) {
      where = "/dev/shm/bdrp-ring-bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    } else if (transport.equals("tcp")) {
      where = Integer.toString(Ports.free());
    } else {
      throw new IllegalArgumentException("--transports: shm or tcp, got '" + transport + "'");
    }
    List<String> jvm = List.of("-Xms256m", "-Xmx256m");
    List<String> cmd =
        new ArrayList<>(
            ChildProcess.java(
                jvm,
                RingBench.class.getName(),
                transport,
                where,
                Integer.toString(o.ringBytes()),
                Integer.toString(o.frameBytes()),
                results.toString()));
    boolean pin = o.pin() && pinnable();
    if (pin) {
      // The reader on CPU 1, this JVM (the writer) on CPU 0: two processes that poll must not
      // share a CPU, or each one's polling takes the other's time.
      cmd.addAll(0, List.of("taskset", "-c", "1"));
      taskset("0", ProcessHandle.current().pid());
    }
    try (ChildProcess reader =
        ChildProcess.start("ring bench reader", cmd, dir.resolve(transport + "-reader.log"))) {
      Writer w =
          transport.equals("shm")
              ? ringWriter(reader, Path.of(where), o.frameBytes())
              : tcpWriter(reader, where, o.frameBytes());
      double idle;
      double rtBefore;
      double rtAfter;
      long[] sent = new long[END];
      try (w) {
        long seq = paced(w, o.lowRate(), o.phase(), LOW, 0);
        sent[LOW] = seq;
        progress.printf(Locale.ROOT, "%s: low load sent %,d frames%n", transport, seq);
        long before = seq;
        seq = paced(w, o.highRate(), o.phase(), HIGH, seq);
        sent[HIGH] = seq - before;
        progress.printf(Locale.ROOT, "%s: high load sent %,d frames%n", transport, seq - before);
        // Most: as fast as the transport takes them, after as long unmeasured (the loop compiled).
        // How fast a cache line crosses between the two CPUs, just before and just after, says
        // where the host put them (they may share a cache or not, and that may change between
        // runs): the full-load figures of two runs compare only when this agrees.
        Thread.sleep(100); // the high-load frames drain
        rtBefore = pin ? crossCpuRoundTripNanos() : Double.NaN;
        seq += flood(w, o.phase(), WARM, seq);
        long most = flood(w, o.phase(), MOST, seq);
        seq += most;
        sent[MOST] = most;
        progress.printf(Locale.ROOT, "%s: as fast as it goes sent %,d frames%n", transport, most);
        // Idle, after the load: the reader waits for frames that do not come.
        Thread.sleep(500); // the last frames drain
        rtAfter = pin ? crossCpuRoundTripNanos() : Double.NaN;
        if (pin) {
          progress.printf(
              Locale.ROOT,
              "%s: a cache line between CPU 0 and CPU 1 and back: %.0f ns before, %.0f ns after%n",
              transport,
              rtBefore,
              rtAfter);
        }
        long cpu = cpuNanos(reader.pid());
        Thread.sleep(o.idle().toMillis());
        idle = (cpuNanos(reader.pid()) - cpu) / (double) o.idle().toNanos();
        progress.printf(Locale.ROOT, "%s: idle reader %.4f cores%n", transport, idle);
        w.send(seq++, System.nanoTime(), END, false);
        w.flush();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (reader.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      if (!Files.exists(results)) {
        throw new IOException("the reader wrote no results; see " + reader.log());
      }
      List<Phase> phases = new ArrayList<>();
      for (String line : Files.readAllLines(results)) {
        String[] c = line.split(",");
        phases.add(
            new Phase(
                transport,
                c[0],
                sent[phases.size() + 1],
                Long.parseLong(c[1]),
                Double.parseDouble(c[2]),
                Double.parseDouble(c[3]),
                Double.parseDouble(c[4]),
                Double.parseDouble(c[5]),
                Double.parseDouble(c[6]),
                Double.parseDouble(c[7])));
      }
      return new Run(transport, idle, phases, rtBefore, rtAfter);
    } finally {
      if (transport.equals("shm")) {
        Files.deleteIfExists(Path.of(where)); // the reader removes it unless it was killed
      }
      if (pin) {
        taskset("0-" + (CPUS - 1), ProcessHandle.current().pid());
      }
    }
  }

  /**
   * Sends frames of {@code phase} as fast as the transport takes them for {@code length}, in 64 KiB
   * batches, one frame in 64 with its send time (a latency sample; the others 0). Returns how many.
   */
  private static long flood(Writer w, Duration length, byte phase, long seq) throws IOException {
    long end = System.nanoTime() + length.toNanos();
    long sent = 0;
    while (System.nanoTime() < end) {
      w.send(seq + sent, System.nanoTime(), phase, true);
      for (int i = 1; i < 64; i++) {
        w.send(seq + sent + i, 0, phase, true);
      }
      sent += 64;
    }
    w.flush();
    return sent;
  }

  /**
   * Sends frames of {@code phase} at {@code rate} per second for {@code length}, each with its send
   * time: the frames due are sent together (one write) and the next are waited for by spinning.
   * Returns the next sequence number.
   */
  private static long paced(Writer w, int rate, Duration length, byte phase, long seq)
      throws IOException {
    long start = System.nanoTime();
    long end = start + length.toNanos();
    long sent = 0;
    long now;
    while ((now = System.nanoTime()) < end) {
      long due = (now - start) * rate / 1_000_000_000L + 1;
      if (due <= sent) {
        Thread.onSpinWait();
        continue;
      }
      for (; sent < due; sent++) {
        w.send(seq++, now, phase, sent + 1 < due);
      }
    }
    w.flush();
    return seq;
  }

  /**
   * The mean time for a cache line to go from one CPU to the other and back (ns), measured by two
   * threads of this JVM handing a counter to each other while the JVM may use CPUs 0 and 1 (both
   * threads spin, so the scheduler runs them on different CPUs). On a virtual machine this is about
   * 50–60 ns when the host runs the two virtual CPUs on cores that share a cache and several times
   * that when it does not. The JVM is pinned to CPU 0 again after.
   */
  static double crossCpuRoundTripNanos() throws IOException, InterruptedException {
    long pid = ProcessHandle.current().pid();
    taskset("0,1", pid);
    try {
      AtomicLong turn = new AtomicLong();
      int rounds = 200_000;
      Thread other =
          new Thread(
              () -> {
                for (long i = 0; i < rounds; i++) {
                  while (turn.get() != 2 * i + 1) {
                    Thread.onSpinWait();
                  }
                  turn.set(2 * i + 2);
                }
              },
              "round-trip");
      other.setDaemon(true);
      other.start();
      // Warm up (the loops compiled, both threads running), then measure.
      long measureFrom = rounds / 4;
      long start = 0;
      for (long i = 0; i < rounds; i++) {
        if (i == measureFrom) {
          start = System.nanoTime();
        }
        turn.set(2 * i + 1);
        while (turn.get() != 2 * i + 2) {
          Thread.onSpinWait();
        }
      }
      long elapsed = System.nanoTime() - start;
      other.join();
      return (double) elapsed / (rounds - measureFrom);
    } finally {
      taskset("0", pid);
    }
  }

  /** Whether this machine has two CPUs or more and the taskset command. */
  static boolean pinnable() {
    return CPUS >= 2 && Files.isExecutable(Path.of("/usr/bin/taskset"));
  }

  /** Sets the CPUs of every thread of process {@code pid}. */
  private static void taskset(String cpus, long pid) throws IOException, InterruptedException {
    // taskset -a lists the process's threads, then sets each one's CPUs: a thread that ends in
    // between (the JVM starts and ends threads of its own) fails the whole command with "No such
    // process". The threads still there have their CPUs set by then; doing it again sets those
    // that started meanwhile. Any other failure is reported at once.
    String out = "";
    for (int attempt = 0; attempt < 3; attempt++) {
      Process p =
          new ProcessBuilder("taskset", "-a", "-cp", cpus, Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("taskset -a -cp " + cpus + " " + pid + " did not finish");
      }
      if (p.exitValue() == 0) {
        return;
      }
      if (!out.contains("No such process")) {
        break;
      }
    }
    throw new IOException("taskset -a -cp " + cpus + " " + pid + " failed: " + out.strip());
  }

  /** CPU time of process {@code pid} (all its threads), from /proc: user and system. */
  static long cpuNanos(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
    return ticks * (1_000_000_000L / 100); // USER_HZ is 100 on Linux
  }

  /**
   * Sends frames to the reader, each laid out in place in the writer's buffer: sequence number,
   * send time (0: none), phase, and the rest of the frame's bytes as they are.
   */
  private interface Writer extends AutoCloseable {
    /** Sends one frame; {@code more}: others follow at once (written together). */
    void send(long seq, long sentNanos, byte phase, boolean more) throws IOException;

    void flush() throws IOException;

    @Override
    void close() throws IOException;
  }

  /** Lays out a frame of {@code bytes} at {@code b}'s position and moves past it. */
  private static void frame(ByteBuffer b, int bytes, long seq, long sent, byte phase) {
    int at = b.position();
    b.putLong(at, seq).putLong(at + 8, sent).put(at + 16, phase).position(at + bytes);
  }

  private static Writer ringWriter(ChildProcess reader, Path file, int frameBytes)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    SharedRing ring = null;
    while (ring == null) {
      try {
        ring = SharedRing.open(file);
      } catch (IOException notYet) {
        if (!reader.isAlive() || System.nanoTime() > deadline) {
          throw new IOException("the reader made no ring at " + file + "; see " + reader.log());
        }
        Thread.sleep(20);
      }
    }
    SharedRing r = ring;
    // Frames that follow one another go as one batch, published once (as a router's link output
    // batches its writes until the end of the event loop's turn).
    ByteBuffer batch = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
    return new Writer() {
      @Override
      public void send(long seq, long sent, byte phase, boolean more) throws IOException {
        if (batch.remaining() < 4 + frameBytes) {
          flush();
        }
        frame(batch.putInt(frameBytes), frameBytes, seq, sent, phase);
        if (!more) {
          flush();
        }
      }

      @Override
      public void flush() throws IOException {
        int n = batch.position();
        int at = 0;
        while (at < n) {
          int w = r.writeBatch(batch, at, n - at);
          if (w == 0) {
            // Full: wait for room for the next frame, then go on with the batch.
            int len = batch.getInt(at);
            r.writeWait(batch, at + 4, len, -1);
            w = 4 + len;
          }
          at += w;
        }
        batch.clear();
      }

      @Override
      public void close() {
        r.close();
      }
    };
  }

  private static Writer tcpWriter(ChildProcess reader, String port, int frameBytes)
      throws Exception {
    int p = Integer.parseInt(port);
    // The reader takes the first connection as the writer's: no probe connection first.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    SocketChannel ch = null;
    while (ch == null) {
      try {
        ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", p));
      } catch (IOException notYet) {
        if (!reader.isAlive() || System.nanoTime() > deadline) {
          throw new IOException("the reader does not listen on " + p + "; see " + reader.log());
        }
        Thread.sleep(20);
      }
    }
    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ByteBuffer out = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
    SocketChannel c = ch;
    return new Writer() {
      @Override
      public void send(long seq, long sent, byte phase, boolean more) throws IOException {
        if (out.remaining() < frameBytes) {
          flush();
        }
        frame(out, frameBytes, seq, sent, phase);
        if (!more) {
          flush();
        }
      }

      @Override
      public void flush() throws IOException {
        out.flip();
        while (out.hasRemaining()) {
          c.write(out);
        }
        out.clear();
      }

      @Override
      public void close() throws IOException {
        c.close();
      }
    };
  }

  /** The reader process: {@code TRANSPORT WHERE RING_BYTES FRAME_BYTES RESULTS}. */
  public static void main(String[] args) throws Exception {
    // The bdrp command that starts this process has checked the BDRP_LOG_* settings.
    io.bdrp.router.Logging.configure(System.getenv());
    String transport = args[0];
    int ringBytes = Integer.parseInt(args[2]);
    int frameBytes = Integer.parseInt(args[3]);
    Path results = Path.of(args[4]);
    Histogram[] h = new Histogram[END];
    for (int i = 1; i < END; i++) {
      h[i] = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    }
    long[] first = new long[END];
    long[] last = new long[END];
    long[] count = new long[END];
    ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    boolean done = false;
    if (transport.equals("shm")) {
      try (SharedRing ring = SharedRing.create(Path.of(args[1]), ringBytes, ringBytes / 4)) {
        while (!done) {
          int n = ring.read(in);
          if (n == 0) {
            // Polls for 100 µs before it sleeps; the END frame (or the writer ending this process)
            // stops it.
            ring.await(TimeUnit.MICROSECONDS.toNanos(100), -1);
            continue;
          }
          long now = System.nanoTime();
          for (int at = 0; at < n && !done; ) {
            int len = in.getInt(at);
            done = record(in, at + 4, now, h, first, last, count);
            at += 4 + len;
          }
        }
      }
    } else {
      try (ServerSocketChannel server = ServerSocketChannel.open()) {
        server.bind(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])));
        try (SocketChannel ch = server.accept()) {
          int have = 0;
          while (!done) {
            in.position(have);
            int r = ch.read(in);
            if (r < 0) {
              break;
            }
            long now = System.nanoTime();
            have += r;
            int at = 0;
            for (; at + frameBytes <= have && !done; at += frameBytes) {
              done = record(in, at, now, h, first, last, count);
            }
            // Keep a partial frame for the next read.
            ByteBuffer rest = in.duplicate().position(at).limit(have);
            in.clear();
            in.put(rest);
            have -= at;
          }
        }
      }
    }
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(results))) {
      line(out, "low", h[LOW], count[LOW], first[LOW], last[LOW]);
      line(out, "high", h[HIGH], count[HIGH], first[HIGH], last[HIGH]);
      line(out, "most", h[MOST], count[MOST], first[MOST], last[MOST]);
    }
  }

  private static boolean record(
      ByteBuffer in, int at, long now, Histogram[] h, long[] first, long[] last, long[] count) {
    byte phase = in.get(at + 16);
    if (phase == END) {
      return true;
    }
    // The same work for every frame of every phase (the warm-up's too), so that the loop the JIT
    // compiles during one phase suits the next.
    long sent = in.getLong(at + 8);
    count[phase]++;
    last[phase] = now;
    if (sent != 0) { // a latency sample
      h[phase].recordValue(Math.max(0, Math.min(now - sent, h[phase].getHighestTrackableValue())));
      if (first[phase] == 0) {
        first[phase] = sent;
      }
    }
    return false;
  }

  private static void line(
      PrintWriter out, String load, Histogram h, long frames, long first, long last) {
    out.printf(
        Locale.ROOT,
        "%s,%d,%.6f,%.2f,%.2f,%.2f,%.2f,%.2f%n",
        load,
        frames,
        (last - first) / 1e9,
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(90) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getValueAtPercentile(99.9) / 1e3,
        h.getMaxValue() / 1e3);
  }
}
