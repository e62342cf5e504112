package io.bdrp.testbed.wan;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * One system, one scenario, on a freshly made emulated network: predicates first, a settle pause,
 * then Poisson traffic from every client, and an account of every message against an oracle that
 * evaluates every client's predicate. The network is taken down afterwards, also on failure.
 */
public final class WanRun {
  /** The attribute that carries a message's number; the workload never uses it. */
  public static final String ID = "bdrp_msg";

  private WanRun() {}

  /**
   * What happened in each second of traffic (and of the grace period after it).
   *
   * @param input messages sent in second s
   * @param ideal deliveries those messages should make (input × replication)
   * @param output deliveries that arrived in second s
   * @param undelivered of the deliveries messages sent in second s should make, how many never
   *     arrived
   * @param duplicates deliveries in second s that a client had already had
   * @param spurious deliveries in second s to a client whose predicate does not match
   * @param maxLinkUtilisation the most loaded link direction's rate over its shaped rate
   * @param serverCpu CPU seconds the servers used in second s
   */
  public record Seconds(
      long[] input,
      long[] ideal,
      long[] output,
      long[] undelivered,
      long[] duplicates,
      long[] spurious,
      double[] maxLinkUtilisation,
      double[] serverCpu) {}

  /**
   * A run's figures.
   *
   * @param service how the clients published ({@link WanSystem#service})
   * @param bytes what the servers sent on their links (null: not known)
   * @param confirmations the system's confirmations (null: it confirms nothing)
   */
  public record Result(
      String system,
      Scenario scenario,
      Seconds seconds,
      long messages,
      String service,
      WanSystem.FrameBytes bytes,
      WanSystem.Confirmations confirmations) {
    /** A best-effort run whose servers' bytes are not known. */
    public Result(String system, Scenario scenario, Seconds seconds, long messages) {
      this(system, scenario, seconds, messages, "best-effort", null, null);
    }

    long total(long[] a) {
      long s = 0;
      for (long x : a) {
        s += x;
      }
      return s;
    }

    public long expected() {
      return total(seconds.ideal);
    }

    public long delivered() {
      return total(seconds.output) - duplicates() - spurious();
    }

    public long undelivered() {
      return total(seconds.undelivered);
    }

    public long duplicates() {
      return total(seconds.duplicates);
    }

    public long spurious() {
      return total(seconds.spurious);
    }
  }

  /** The oracle and the ledger of every message sent. */
  private static final class Ledger {
    final int words;
    final long[] expected;
    final AtomicLongArray got;
    final int[] sentSecond;
    final long start;
    final LongAdder[] output;
    final LongAdder[] duplicates;
    final LongAdder[] spurious;
    final int horizon;

    Ledger(int clients, long[] expected, int count, int horizon, long start) {
      this.words = (clients + 63) >>> 6;
      this.expected = expected;
      this.got = new AtomicLongArray(count * words);
      this.sentSecond = new int[count];
      this.start = start;
      this.horizon = horizon;
      this.output = adders(horizon);
      this.duplicates = adders(horizon);
      this.spurious = adders(horizon);
    }

    static LongAdder[] adders(int n) {
      LongAdder[] a = new LongAdder[n];
      for (int i = 0; i < n; i++) {
        a[i] = new LongAdder();
      }
      return a;
    }

    int second() {
      return (int) Math.min(horizon - 1, Math.max(0, (System.nanoTime() - start) / 1_000_000_000L));
    }

    /** Set at the end of the grace period: what arrives later is late, not delivered. */
    volatile boolean closed;

    final LongAdder late = new LongAdder();

    void received(long id, int client) {
      if (closed) {
        late.increment();
        return;
      }
      int s = second();
      output[s].increment();
      if (id < 0 || id >= sentSecond.length) {
        spurious[s].increment();
        return;
      }
      int w = (int) id * words + (client >>> 6);
      long bit = 1L << (client & 63);
      if ((expected[w] & bit) == 0) {
        spurious[s].increment();
        return;
      }
      long old;
      do {
        old = got.get(w);
        if ((old & bit) != 0) {
          duplicates[s].increment();
          return;
        }
      } while (!got.compareAndSet(w, old, old | bit));
    }
  }

  /** Runs {@code system} on {@code sc}; files go under {@code dir}. */
  public static Result run(
      WanSystem system, Scenario sc, Topology t, String netName, Path dir, PrintStream progress)
      throws Exception {
    return run(system, sc, t, netName, dir, progress, 0);
  }

  /**
   * Runs {@code system} on {@code sc} with links delayed by {@code delayMicros} each way (see
   * {@link Emulator#plan(Topology, String, long, long)}); files go under {@code dir}.
   */
  public static Result run(
      WanSystem system,
      Scenario sc,
      Topology t,
      String netName,
      Path dir,
      PrintStream progress,
      long delayMicros)
      throws Exception {
    Emulator.Network net = Emulator.plan(t, netName, sc.linkRateBits(), delayMicros);
    Emulator.down(netName); // what a crashed earlier run may have left
    Emulator.upForThisProcess(net);
    Thread cleanup =
        new Thread(
            () -> {
              try {
                // The network first: it ends the servers in it, and it is what would outlive
                // this process.
                Emulator.down(netName);
                system.close();
              } catch (Exception e) {
                System.err.println(
                    "testbed: cleaning up network " + netName + ": " + e.getMessage());
              }
            });
    Runtime.getRuntime().addShutdownHook(cleanup);
    try (system) {
      Files.createDirectories(dir);
      progress.printf(
          "%s: network %s up: %d routers, %d links at %s%n",
          system.name(),
          netName,
          net.routers().size(),
          net.links().size(),
          Emulator.rate(sc.linkRateBits()));
      system.start(net, dir, t.diameter());
      WorkloadGenerator g = new WorkloadGenerator(sc.workload(), sc.seed());
      int n = net.routers().size();
      Predicate[] predicates = new Predicate[sc.clients()];
      for (int j = 0; j < sc.clients(); j++) {
        predicates[j] = g.predicate();
      }
      Plan plan = Plan.make(sc, g, predicates);
      progress.printf(
          "%s: %,d messages planned (%,d deliveries expected) for %d clients%n",
          system.name(), plan.count, plan.expectedTotal, sc.clients());
      List<WanSystem.Client> clients = new ArrayList<>();
      int grace = sc.graceSeconds() + system.confirmationSeconds();
      int horizon = sc.seconds() + grace + 2;
      Ledger[] ledgerRef = new Ledger[1];
      for (int j = 0; j < sc.clients(); j++) {
        int client = j;
        clients.add(
            system.client(
                j % n,
                "client-" + j,
                predicates[j],
                m -> {
                  Ledger l = ledgerRef[0];
                  var v = m.get(ID);
                  if (l != null && v != null) {
                    l.received(v.asLong(), client);
                  }
                }));
      }
      progress.printf(
          "%s: %d clients attached with their predicates; settling %d s%n",
          system.name(), sc.clients(), sc.settleSeconds());
      Thread.sleep(sc.settleSeconds() * 1000L);
      settleUntilQuiet(net, system.name(), progress);

      long start = System.nanoTime();
      Ledger ledger = new Ledger(sc.clients(), plan.expected, plan.count, horizon, start);
      ledgerRef[0] = ledger;
      long[] input = new long[horizon];
      long[] ideal = new long[horizon];
      double[] util = new double[horizon];
      double[] cpu = new double[horizon];
      Sampler sampler =
          new Sampler(
              net,
              system.processes(),
              util,
              cpu,
              start,
              sec ->
                  progress.printf(
                      Locale.ROOT,
                      "%s %3d s: in %,6d msg/s, ideal out %,7d/s, out %,7d/s, max link %3.0f%%,"
                          + " server CPU %.2f%n",
                      system.name(),
                      sec,
                      input[sec],
                      ideal[sec],
                      ledger.output[sec].sum(),
                      100 * util[sec],
                      cpu[sec]));
      sampler.start();
      long behind = 0;
      int id = 0;
      for (; id < plan.count; id++) {
        long due = start + plan.atNanos[id];
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
        }
        behind = Math.max(behind, -wait);
        // Counted in the second it is really sent: if this harness falls behind its schedule,
        // the input shown is what was offered, not what was planned.
        int s = ledger.second();
        ledger.sentSecond[id] = s;
        clients.get(plan.from[id]).send(plan.messages[id]);
        plan.messages[id] = null;
        input[s]++;
        ideal[s] += plan.receivers[id];
      }
      if (behind > 1_000_000_000L) {
        progress.printf(
            Locale.ROOT,
            "%s: the clients fell behind their schedule by up to %.1f s (this machine's CPU)%n",
            system.name(),
            behind / 1e9);
      }
      long messages = plan.count;
      // Grace: until everything expected has arrived and the system has confirmed or given up on
      // every message, or the grace period is over.
      long graceEnd = System.nanoTime() + grace * 1_000_000_000L;
      long expectedTotal = plan.expectedTotal;
      while (System.nanoTime() < graceEnd) {
        long got = 0;
        for (LongAdder a : ledger.output) {
          got += a.sum();
        }
        if (got >= expectedTotal && system.unconfirmed() == 0) {
          break;
        }
        Thread.sleep(100);
      }
      ledger.closed = true;
      sampler.stop();
      WanSystem.Confirmations confirmations = system.confirmations();
      if (confirmations != null) {
        progress.printf(
            "%s: %,d of %,d messages confirmed, %,d unreached, %,d failed%n",
            system.name(),
            confirmations.confirmed(),
            confirmations.sent(),
            confirmations.unreached(),
            confirmations.failed());
      }
      WanSystem.FrameBytes bytes = null;
      try {
        bytes = system.frameBytes();
      } catch (java.io.IOException e) {
        progress.printf("%s: the servers' bytes not read: %s%n", system.name(), e.getMessage());
      }
      if (ledger.late.sum() > 0) {
        progress.printf(
            "%s: deliveries still arriving after the grace period are not counted%n",
            system.name());
      }
      long[] undelivered = new long[horizon];
      for (int i = 0; i < messages; i++) {
        for (int w = 0; w < ledger.words; w++) {
          long missing =
              ledger.expected[i * ledger.words + w] & ~ledger.got.get(i * ledger.words + w);
          undelivered[ledger.sentSecond[i]] += Long.bitCount(missing);
        }
      }
      Seconds secs =
          new Seconds(
              input,
              ideal,
              sum(ledger.output),
              undelivered,
              sum(ledger.duplicates),
              sum(ledger.spurious),
              util,
              cpu);
      return new Result(system.name(), sc, secs, messages, system.service(), bytes, confirmations);
    } finally {
      Emulator.down(netName);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running
      }
    }
  }

  private static long[] sum(LongAdder[] a) {
    long[] out = new long[a.length];
    for (int i = 0; i < a.length; i++) {
      out[i] = a[i].sum();
    }
    return out;
  }

  /**
   * Every message of a run, made before the traffic starts so that making them and consulting the
   * oracle take no time from the run: when, from which client, and which clients' predicates it
   * satisfies (each predicate evaluated directly).
   */
  private static final class Plan {
    int count;
    long[] atNanos;
    int[] from;
    Message[] messages;
    int[] receivers;
    long[] expected;
    long expectedTotal;

    static Plan make(Scenario sc, WorkloadGenerator g, Predicate[] predicates) {
      SplittableRandom rnd = new SplittableRandom(sc.seed() ^ 0x5DEECE66DL);
      double maxTotal = sc.clients() * Math.max(sc.startRate(), sc.endRate());
      int words = (sc.clients() + 63) >>> 6;
      byte[] body = new byte[sc.bodyBytes()];
      Plan p = new Plan();
      int cap = 1024;
      p.atNanos = new long[cap];
      p.from = new int[cap];
      p.messages = new Message[cap];
      p.receivers = new int[cap];
      p.expected = new long[cap * words];
      double at = 0;
      while (maxTotal > 0) {
        at += -Math.log(1 - rnd.nextDouble()) / maxTotal;
        if (at >= sc.seconds()) {
          break;
        }
        if (rnd.nextDouble() * maxTotal > sc.clients() * sc.rateAt(at)) {
          continue; // thinning: the ramp's rate at this instant
        }
        if (p.count == cap) {
          if (cap >= 50_000_000) {
            throw new IllegalArgumentException("more than 50 million messages in one run");
          }
          cap *= 2;
          p.atNanos = java.util.Arrays.copyOf(p.atNanos, cap);
          p.from = java.util.Arrays.copyOf(p.from, cap);
          p.messages = java.util.Arrays.copyOf(p.messages, cap);
          p.receivers = java.util.Arrays.copyOf(p.receivers, cap);
          p.expected = java.util.Arrays.copyOf(p.expected, cap * words);
        }
        int i = p.count++;
        p.atNanos[i] = (long) (at * 1e9);
        p.from[i] = rnd.nextInt(sc.clients());
        Message m = g.messageWith(body, ID, i);
        p.messages[i] = m;
        for (int c = 0; c < predicates.length; c++) {
          if (predicates[c].matches(m)) {
            p.expected[i * words + (c >>> 6)] |= 1L << (c & 63);
            p.receivers[i]++;
          }
        }
        p.expectedTotal += p.receivers[i];
      }
      return p;
    }
  }

  /** Below this utilisation on every link, the network counts as quiet. */
  static final double QUIET = 0.05;

  /** The longest wait for quiet links after the settle pause. */
  static final int QUIET_WAIT_SECONDS = 300;

  /**
   * After the settle pause, waits until every link carries less than {@link #QUIET} of its rate
   * over two seconds: the predicates' advertisements (tens of kB per router, each crossing every
   * link) can keep slow links busy well past a fixed pause, and traffic started then would be
   * matched against predicates not yet known everywhere. Gives up after {@link
   * #QUIET_WAIT_SECONDS}, saying so.
   */
  public static void settleUntilQuiet(Emulator.Network net, String system, PrintStream progress)
      throws java.io.IOException, InterruptedException {
    if (net.links().isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + QUIET_WAIT_SECONDS * 1_000_000_000L;
    LinkMeter meter = new LinkMeter(net);
    meter.read();
    while (true) {
      Thread.sleep(2_000);
      double max = meter.read();
      if (max < QUIET) {
        return;
      }
      if (System.nanoTime() > deadline) {
        progress.printf(
            "%s: links still busy (%.0f%%) after %d s more; starting the traffic anyway%n",
            system, 100 * max, QUIET_WAIT_SECONDS);
        return;
      }
      progress.printf(
          "%s: waiting for the predicates' advertisements: busiest link at %.0f%%%n",
          system, 100 * max);
    }
  }

  /**
   * The most loaded link direction's utilisation since the previous reading. Namespaces are read
   * one after the other and under load the reads of one sample can be far apart, so each link end's
   * bytes are divided by the time between two reads of that end.
   */
  private static final class LinkMeter {
    private final Emulator.Network net;
    private final Map<String, long[]> last = new java.util.HashMap<>(); // bytes, read at

    LinkMeter(Emulator.Network net) {
      this.net = net;
    }

    /** The highest utilisation since the last call (0 on the first). */
    double read() throws java.io.IOException {
      double max = 0;
      for (Emulator.RouterNet r : net.routers()) {
        Map<String, Emulator.Counters> c = Emulator.qdiscCounters(r.namespace());
        long readAt = System.nanoTime();
        for (Emulator.LinkNet l : net.links()) {
          String dev = l.a() == r.router() ? l.devA() : l.b() == r.router() ? l.devB() : null;
          Emulator.Counters k = dev == null ? null : c.get(dev);
          if (k == null) {
            continue;
          }
          long[] before = last.put(r.router() + "/" + dev, new long[] {k.bytes(), readAt});
          if (before != null) {
            double elapsed = Math.max(1e-3, (readAt - before[1]) / 1e9);
            max = Math.max(max, (k.bytes() - before[0]) * 8.0 / l.rateBits() / elapsed);
          }
        }
      }
      return max;
    }
  }

  /** Once a second: the most loaded link direction and the servers' CPU. */
  private static final class Sampler {
    private final Emulator.Network net;
    private final List<ChildProcess> servers;
    private final double[] util;
    private final double[] cpu;
    private final long start;
    private final Thread thread;
    private volatile boolean stop;

    private final java.util.function.IntConsumer done;

    Sampler(
        Emulator.Network net,
        List<ChildProcess> servers,
        double[] util,
        double[] cpu,
        long start,
        java.util.function.IntConsumer done) {
      this.done = done;
      this.net = net;
      this.servers = servers;
      this.util = util;
      this.cpu = cpu;
      this.start = start;
      this.thread = new Thread(this::loop, "testbed-sampler");
      thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    void stop() throws InterruptedException {
      stop = true;
      thread.join(5_000);
    }

    private void loop() {
      LinkMeter meter = new LinkMeter(net);
      double lastCpu = serverCpu();
      long lastCpuAt = System.nanoTime();
      int second = 0; // the next second to fill
      while (!stop && second < util.length) {
        long due = start + (second + 1) * 1_000_000_000L;
        long wait;
        while ((wait = due - System.nanoTime()) > 0 && !stop) {
          LockSupport.parkNanos(wait);
        }
        // Under load a sample can take longer than a second: the seconds it spanned all get it.
        double max;
        try {
          max = meter.read();
        } catch (java.io.IOException e) {
          max = Double.NaN;
        }
        double cpuNow = serverCpu();
        long at = System.nanoTime();
        int upTo = (int) Math.min(util.length, Math.max(second + 1, (at - start) / 1_000_000_000L));
        double cores = (cpuNow - lastCpu) / Math.max(1e-3, (at - lastCpuAt) / 1e9);
        lastCpu = cpuNow;
        lastCpuAt = at;
        for (; second < upTo; second++) {
          util[second] = max;
          cpu[second] = cores;
          done.accept(second);
        }
      }
    }

    private double serverCpu() {
      double s = 0;
      for (ChildProcess p : servers) {
        s += p.cpu().toNanos() / 1e9;
      }
      return s;
    }
  }
}
