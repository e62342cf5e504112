package io.bdrp.testbed.chaos;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.net.LinkFaults;
import io.bdrp.testbed.net.NamespaceFederation;
import io.bdrp.testbed.wan.SerialExecutor;
import io.bdrp.testbed.wan.WanRun;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A fault campaign on the namespace testbed: bdrp routers on an emulated network, the paper's
 * workload flowing throughout from clients that reconnect when their router goes away, and the
 * faults of a {@link ChaosSpec} injected one after the other, each after a warm-up and followed,
 * once healed, by a recovery phase. Every message is entered in a {@link Ledger} with the clients
 * whose predicates it satisfies before it is sent; at the end each fault is accounted for by {@link
 * Accounting}, and every router's resident set is sampled throughout ({@link RssSampler}). The
 * network is taken down afterwards, also on failure.
 */
public final class ChaosRun {
  private ChaosRun() {}

  /**
   * Where the faults strike; null fields are chosen from the topology ({@link Targets}). {@code
   * fastPath} is the routers' ({@code jvm} or {@code ebpf}) and {@code broadcastFraction} their
   * routing.broadcastFraction (null: the default); {@code service} is how the clients publish:
   * {@code best-effort} or {@code reliable} ({@code BdrpClient.sendReliable}, each message
   * confirmed).
   */
  public record Choices(
      Targets.Link link,
      Integer router,
      List<Targets.Link> cut,
      String fastPath,
      Double broadcastFraction,
      String service) {
    /** The services a campaign can publish with. */
    public static final List<String> SERVICES = List.of("best-effort", "reliable");

    public static final Choices AUTO = new Choices(null, null, null);

    public Choices {
      if (!SERVICES.contains(service)) {
        throw new IllegalArgumentException(
            "unknown service '" + service + "' (services: " + String.join(", ", SERVICES) + ")");
      }
    }

    public Choices(Targets.Link link, Integer router, List<Targets.Link> cut) {
      this(link, router, cut, "jvm", null, "best-effort");
    }

    /** Whether the clients publish with the reliable service. */
    public boolean reliable() {
      return service.equals("reliable");
    }

    /** What the routers' YAML gets beside the campaign's routing timers. */
    String yaml(ChaosSpec spec) {
      Map<String, Object> routing = new LinkedHashMap<>(spec.routing());
      if (broadcastFraction != null) {
        routing.put("broadcastFraction", broadcastFraction);
      }
      return NamespaceFederation.routerYaml(routing, fastPath);
    }
  }

  /**
   * One fault as it ran.
   *
   * @param target what it struck
   * @param actions what was done, with times
   * @param account the oracle's figures (null if skipped)
   * @param peakRssKiB each router's highest resident set from the warm-up to the end of recovery
   * @param warmupPeakRssKiB each router's highest resident set in the warm-up
   * @param sessionBreaks workload clients' sessions that broke in the fault and recovery, beyond
   *     those of a killed router's hosts
   * @param findings things that went wrong beside the figures: routers that died, sessions the
   *     router kept, errors
   * @param churn what the churn did (client-churn only)
   * @param badClient what the bad client saw (slow-consumer and never-reads only)
   * @param badClientExpected messages sent while the bad client was attached, all of which its
   *     predicate selects
   * @param badClientRouterDrops deliveries to the bad client its router dropped, from its metrics
   *     (-1: not read)
   * @param anomalies every delivery that was not as expected, and every late message, in send order
   *     (at most {@link #ANOMALIES_LISTED})
   * @param skipped why the fault did not run, or null
   */
  public record FaultRun(
      Fault fault,
      String target,
      List<String> actions,
      Accounting.Window window,
      Accounting.Result account,
      long[] peakRssKiB,
      long[] warmupPeakRssKiB,
      int sessionBreaks,
      List<String> findings,
      RawClients.ChurnResult churn,
      RawClients.BadClientResult badClient,
      long badClientExpected,
      long badClientRouterDrops,
      List<Accounting.Anomaly> anomalies,
      String skipped) {
    /** The highest of the routers' peaks, kB. */
    public long maxPeakRssKiB() {
      long m = -1;
      for (long p : peakRssKiB) {
        m = Math.max(m, p);
      }
      return m;
    }
  }

  /** Anomalies listed per fault, at most. */
  public static final int ANOMALIES_LISTED = 100_000;

  /** A campaign's results; {@code routerOf[c]} is client c's router. */
  public record Result(
      ChaosSpec spec,
      Emulator.Network network,
      int[] routerOf,
      String linkTransport,
      String service,
      List<String> jvmOptions,
      List<FaultRun> faults,
      long[][] perSecond,
      long[][] rssPerSecondMiB,
      long late) {}

  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

  /** The state of a campaign while it runs. */
  private static final class Campaign {
    final ChaosSpec spec;
    final Emulator.Network net;
    final Path dir;
    final PrintStream out;
    final long origin = System.nanoTime();
    NamespaceFederation federation;
    Ledger ledger;
    Sessions sessions;
    int[] routerOf;

    /**
     * The router each client has its session with now (-1: none); differs from {@link #routerOf}
     * once a reliable campaign's client has moved to its failover router.
     */
    java.util.concurrent.atomic.AtomicIntegerArray attachedTo;

    Predicate[] predicates;
    final List<BdrpClient> clients = new ArrayList<>();
    EventLoopGroup io;
    ExecutorService callbacks;
    RssSampler rss;
    volatile boolean stopTraffic;
    volatile String trafficError;
    Thread traffic;
    final AtomicLong expectedSoFar = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    final AtomicLong failedSends = new AtomicLong();
    final AtomicLong confirmed = new AtomicLong();
    final AtomicLong unreached = new AtomicLong();
    final boolean reliable;

    Campaign(ChaosSpec spec, Emulator.Network net, Path dir, PrintStream out, boolean reliable) {
      this.reliable = reliable;
      this.spec = spec;
      this.net = net;
      this.dir = dir;
      this.out = out;
    }

    long now() {
      return System.nanoTime() - origin;
    }

    void log(String format, Object... args) {
      out.printf(
          Locale.ROOT,
          "[%s t=%6.1fs] %s%n",
          LocalTime.now().format(CLOCK),
          now() / 1e9,
          String.format(Locale.ROOT, format, args));
    }

    void sleepUntil(long t) throws InterruptedException {
      long wait;
      while ((wait = t - now()) > 0) {
        Thread.sleep(Math.max(1, Math.min(wait / 1_000_000L, 500)));
      }
    }
  }

  /**
   * Runs {@code spec} on topology {@code t} as network {@code netName}, links delayed by {@code
   * delayMicros} each way (see {@link Emulator#plan(Topology, String, long, long)}); routers run
   * with {@code jvmOptions} and carry DATA over {@code linkTransport}; files go under {@code dir},
   * progress to {@code out}.
   */
  public static Result run(
      ChaosSpec spec,
      Topology t,
      String netName,
      Path dir,
      PrintStream out,
      List<String> jvmOptions,
      String linkTransport,
      long delayMicros,
      Choices choices)
      throws Exception {
    Emulator.Network net = Emulator.plan(t, netName, spec.linkRateBits(), delayMicros);
    Targets targets = targets(net);
    Targets.Link link =
        choices.link() != null ? targets.check(choices.link()) : targets.linkOnCycle();
    if (choices.link() != null && !targets.onCycle(link)) {
      throw new IllegalArgumentException(
          "link " + link + " is on no cycle: its loss would split the network");
    }
    int router = choices.router() != null ? choices.router() : targets.transitRouter();
    if (router < 0 || router >= net.routers().size()) {
      throw new IllegalArgumentException("no router " + router + " in the topology");
    }
    Targets.Cut cut =
        choices.cut() != null ? targets.partition(choices.cut()) : targets.partition();
    String noIptables = LinkFaults.silenceUnavailable().orElse(null);
    Files.createDirectories(dir);
    for (int r = 0; r < net.routers().size(); r++) {
      // A router's log is appended to across its restarts; a reused folder starts afresh.
      Files.deleteIfExists(dir.resolve("router-" + r + ".log"));
    }
    Emulator.down(netName); // what a crashed earlier run may have left
    Emulator.upForThisProcess(net);
    Thread cleanup =
        new Thread(
            () -> {
              try {
                Emulator.down(netName); // ends the routers in it
              } catch (IOException e) {
                System.err.println("chaos: cleaning up network " + netName + ": " + e.getMessage());
              }
            });
    Runtime.getRuntime().addShutdownHook(cleanup);
    Campaign c = new Campaign(spec, net, dir, out, choices.reliable());
    try {
      c.log(
          "network %s up: %d routers, %d links at %s; hello %d ms, dead %d ms",
          netName,
          net.routers().size(),
          net.links().size(),
          Emulator.rate(spec.linkRateBits()),
          spec.helloMillis(),
          spec.deadMillis());
      c.log(
          "targets: link %s (on a cycle), router %d (transit), partition %s",
          link, router, cut.describe());
      c.federation =
          NamespaceFederation.start(net, dir, jvmOptions, choices.yaml(spec), linkTransport);
      List<String> pids = new ArrayList<>();
      for (ChildProcess p : c.federation.processes()) {
        pids.add(Long.toString(p.pid()));
      }
      c.log("routers serving clients; PIDs %s", String.join(" ", pids));
      attach(c);
      c.log(
          "%d clients attached (%d per router); settling %d s",
          c.clients.size(), spec.clientsPerRouter(), spec.settleSeconds());
      Thread.sleep(spec.settleSeconds() * 1000L);
      WanRun.settleUntilQuiet(net, "chaos", out);
      c.rss =
          new RssSampler(
              net.routers().size(),
              r -> {
                ChildProcess p = c.federation.process(r);
                return p.isAlive() ? p.pid() : -1;
              },
              c.origin,
              250);
      c.rss.start();
      Thread traffic = new Thread(() -> traffic(c), "chaos-traffic");
      traffic.setDaemon(true);
      c.traffic = traffic;
      traffic.start();
      Thread ticker = new Thread(() -> ticker(c), "chaos-ticker");
      ticker.setDaemon(true);
      ticker.start();
      c.log(
          "traffic: %d clients at %.1f msg/s each (Poisson), %d-byte bodies",
          c.clients.size(), spec.rate(), spec.bodyBytes());
      List<Pending> pending = new ArrayList<>();
      int k = 0;
      for (Fault f : spec.faults()) {
        k++;
        String skip = f.needsIptables() ? noIptables : null;
        if (skip != null) {
          c.log("fault %d/%d %s: skipped: %s", k, spec.faults().size(), f.id(), skip);
          pending.add(Pending.skipped(f, skip));
          continue;
        }
        pending.add(runFault(c, f, k, link, router, cut));
      }
      c.stopTraffic = true;
      traffic.join(10_000);
      grace(c);
      c.ledger.close();
      ticker.interrupt();
      closeClients(c);
      c.rss.close();
      saveMetrics(c, dir.resolve("end"));
      c.federation.close();
      long end = c.now();
      List<FaultRun> runs = new ArrayList<>();
      for (Pending p : pending) {
        runs.add(p.finish(c));
      }
      int seconds = (int) (end / 1_000_000_000L) + 1;
      Accounting.Window whole =
          new Accounting.Window(Fault.LINK_DOWN, 0, 0, 0, end, -1, null, c.reliable);
      long[][] perSecond =
          Accounting.account(
                  c.ledger,
                  c.routerOf,
                  c.sessions,
                  whole,
                  spec.deadMillis() * 1_000_000L,
                  spec.helloMillis() * 1_000_000L)
              .perSecond();
      c.rss.write(dir.resolve("rss.csv"));
      return new Result(
          spec,
          net,
          c.routerOf.clone(),
          linkTransport,
          choices.service(),
          List.copyOf(jvmOptions),
          List.copyOf(runs),
          perSecond,
          c.rss.perSecondMiB(seconds),
          c.ledger.late());
    } finally {
      c.stopTraffic = true;
      if (c.traffic != null) {
        c.traffic.join(10_000);
      }
      if (c.rss != null) {
        c.rss.close();
      }
      closeClients(c);
      if (c.federation != null) {
        c.federation.close();
      }
      Emulator.down(netName);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running
      }
    }
  }

  /** The topology of {@code net} for choosing targets. */
  public static Targets targets(Emulator.Network net) {
    List<int[]> links = new ArrayList<>();
    for (Emulator.LinkNet l : net.links()) {
      links.add(new int[] {l.a(), l.b()});
    }
    return new Targets(net.routers().size(), links);
  }

  // ---- clients and traffic ----

  private static void attach(Campaign c) throws Exception {
    ChaosSpec spec = c.spec;
    int n = c.net.routers().size();
    int clients = n * spec.clientsPerRouter();
    WorkloadGenerator g = new WorkloadGenerator(spec.workload(), spec.seed());
    c.predicates = new Predicate[clients];
    c.routerOf = new int[clients];
    for (int j = 0; j < clients; j++) {
      c.predicates[j] = g.predicate();
      c.routerOf[j] = j % n;
    }
    c.sessions = new Sessions(clients);
    c.attachedTo = new java.util.concurrent.atomic.AtomicIntegerArray(c.routerOf);
    c.ledger = new Ledger(clients, c.origin);
    c.io = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    c.callbacks = Executors.newFixedThreadPool(2);
    for (int j = 0; j < clients; j++) {
      int client = j;
      boolean[] first = {true};
      BdrpClient.Builder builder = BdrpClient.builder();
      if (c.reliable) {
        // A publisher whose router dies moves to the next router and sends again what that one
        // did not confirm; the destinations drop what they delivered already.
        builder.failover(c.federation.clientAddress((c.routerOf[j] + 1) % n));
      }
      BdrpClient bc =
          builder
              .router(c.federation.clientAddress(c.routerOf[j]))
              .name("client-" + j)
              .eventLoopGroup(c.io)
              .callbackExecutor(new SerialExecutor(c.callbacks))
              .reconnect(true)
              .listener(
                  new BdrpClient.ConnectionListener() {
                    @Override
                    public void connected(int routerNumber) {
                      c.attachedTo.set(client, routerNumber);
                      if (first[0]) {
                        first[0] = false; // sessions start connected
                      } else {
                        c.sessions.up(client, c.now());
                      }
                    }

                    @Override
                    public void disconnected(Throwable cause, boolean willReconnect) {
                      c.attachedTo.set(client, -1);
                      c.sessions.down(client, c.now());
                    }
                  })
              .onMessage(m -> receive(c, client, m))
              .connect();
      c.clients.add(bc);
      bc.setPredicate(c.predicates[j]).get(30, TimeUnit.SECONDS);
    }
  }

  private static void receive(Campaign c, int client, Message m) {
    var id = m.get(WanRun.ID);
    if (id != null) {
      c.ledger.received(id.asLong(), client);
    } else if (!c.predicates[client].matches(m)) {
      c.ledger.stray(); // a flood message, or anything else not in the ledger
    }
  }

  /** Poisson traffic from every client until the campaign stops it. */
  private static void traffic(Campaign c) {
    try {
      publish(c);
    } catch (RuntimeException e) {
      c.trafficError = e.toString();
      c.log("the traffic stopped: %s", e);
    }
  }

  private static void publish(Campaign c) {
    ChaosSpec spec = c.spec;
    WorkloadGenerator g = new WorkloadGenerator(spec.workload(), spec.seed() ^ 0x5DEECE66DL);
    SplittableRandom rnd = new SplittableRandom(spec.seed() * 31 + 7);
    int clients = c.clients.size();
    double total = clients * spec.rate();
    byte[] body = new byte[spec.bodyBytes()];
    long[] receivers = new long[c.ledger.words()];
    long next = c.now();
    while (!c.stopTraffic) {
      next += (long) (-Math.log(1 - rnd.nextDouble()) / total * 1e9);
      long wait;
      while ((wait = next - c.now()) > 0 && !c.stopTraffic) {
        LockSupport.parkNanos(Math.min(wait, 100_000_000L));
      }
      if (c.stopTraffic) {
        return;
      }
      int from = rnd.nextInt(clients);
      int id = c.ledger.count();
      Message m = g.messageWith(body, WanRun.ID, id);
      java.util.Arrays.fill(receivers, 0);
      long e = 0;
      for (int j = 0; j < clients; j++) {
        if (c.predicates[j].matches(m)) {
          receivers[j >>> 6] |= 1L << (j & 63);
          e++;
        }
      }
      c.ledger.add(from, receivers, c.now());
      c.expectedSoFar.addAndGet(e);
      c.sent.incrementAndGet();
      if (c.reliable) {
        c.clients
            .get(from)
            .sendReliable(m)
            .whenComplete(
                (ok, error) -> {
                  if (error == null) {
                    c.ledger.confirmed(id, c.now());
                    c.confirmed.incrementAndGet();
                  } else {
                    c.ledger.unreached(id);
                    c.unreached.incrementAndGet();
                  }
                });
        continue;
      }
      c.clients
          .get(from)
          .send(m)
          .whenComplete(
              (ok, error) -> {
                if (error != null) {
                  c.ledger.failed(id);
                  c.failedSends.incrementAndGet();
                }
              });
    }
  }

  /** A line every 5 s: what was sent and delivered so far. */
  private static void ticker(Campaign c) {
    try {
      while (true) {
        Thread.sleep(5_000);
        long exp = c.expectedSoFar.get();
        long got = c.ledger.receivedSoFar();
        long[] peaks = c.rss.peaks(c.now() - 5_000_000_000L, Long.MAX_VALUE);
        long max = 0;
        for (long p : peaks) {
          max = Math.max(max, p);
        }
        String confirms =
            c.reliable
                ? String.format(
                    Locale.ROOT,
                    ", %,d confirmed, %,d unreached",
                    c.confirmed.get(),
                    c.unreached.get())
                : "";
        c.log(
            "sent %,d messages (%,d failed%s), %,d deliveries of %,d expected so far; largest"
                + " router RSS %,d MiB",
            c.sent.get(), c.failedSends.get(), confirms, got, exp, max / 1024);
      }
    } catch (InterruptedException done) {
      // the campaign is over
    }
  }

  /**
   * After the traffic: until no delivery has arrived for 2 s, at most 15 s; with the reliable
   * service, first until every message is confirmed or reported unreached, at most the routers'
   * retention (one minute) and 10 s.
   */
  private static void grace(Campaign c) throws InterruptedException {
    if (c.reliable) {
      long limit = c.now() + 70_000_000_000L;
      while (c.confirmed.get() + c.unreached.get() < c.sent.get() && c.now() < limit) {
        Thread.sleep(100);
      }
      c.log(
          "%,d of %,d reliable messages confirmed, %,d unreached",
          c.confirmed.get(), c.sent.get(), c.unreached.get());
    }
    long until = c.now() + 15_000_000_000L;
    long last = -1;
    long quietSince = c.now();
    while (c.now() < until) {
      long got = c.ledger.receivedSoFar();
      if (got != last) {
        last = got;
        quietSince = c.now();
      } else if (c.now() - quietSince > 2_000_000_000L) {
        break;
      }
      Thread.sleep(100);
    }
    c.log("traffic stopped; deliveries settled");
  }

  private static void closeClients(Campaign c) {
    for (BdrpClient bc : c.clients) {
      bc.close();
    }
    c.clients.clear();
    if (c.io != null) {
      c.io.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      c.io = null;
    }
    if (c.callbacks != null) {
      c.callbacks.shutdown();
      try {
        c.callbacks.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      c.callbacks = null;
    }
  }

  // ---- faults ----

  /** A fault that has run, to be accounted for when every delivery is in. */
  private static final class Pending {
    Fault fault;
    String target = "";
    final List<String> actions = new ArrayList<>();
    final List<String> findings = new ArrayList<>();
    long start;
    long inject;
    long heal;
    long end;
    int killed = -1;
    boolean[] side;
    RawClients.ChurnResult churn;
    RawClients.BadClientResult badClient;
    long badClientExpected;
    long badClientRouterDrops = -1;
    long hostDropsAtInject = -1;
    String skipped;

    static Pending skipped(Fault f, String why) {
      Pending p = new Pending();
      p.fault = f;
      p.skipped = why;
      return p;
    }

    FaultRun finish(Campaign c) {
      if (skipped != null) {
        return new FaultRun(
            fault,
            target,
            actions,
            null,
            null,
            new long[0],
            new long[0],
            0,
            findings,
            null,
            null,
            0,
            -1,
            List.of(),
            skipped);
      }
      Accounting.Window w =
          new Accounting.Window(fault, start, inject, heal, end, killed, side, c.reliable);
      Accounting.Result a =
          Accounting.account(
              c.ledger,
              c.routerOf,
              c.sessions,
              w,
              c.spec.deadMillis() * 1_000_000L,
              c.spec.helloMillis() * 1_000_000L);
      int breaks = 0;
      for (int j = 0; j < c.routerOf.length; j++) {
        if (c.routerOf[j] != killed) {
          breaks += c.sessions.breaks(j, inject, end);
        }
      }
      return new FaultRun(
          fault,
          target,
          List.copyOf(actions),
          w,
          a,
          c.rss.peaks(start, end),
          c.rss.peaks(start, inject),
          breaks,
          List.copyOf(findings),
          churn,
          badClient,
          badClientExpected,
          badClientRouterDrops,
          Accounting.anomalies(
              c.ledger,
              c.routerOf,
              c.sessions,
              w,
              c.spec.deadMillis() * 1_000_000L,
              c.spec.helloMillis() * 1_000_000L,
              ANOMALIES_LISTED),
          null);
    }
  }

  /** What a fault started that its heal must stop. */
  private static final class Live {
    Thread churn;
    final RawClients.ChurnResult[] churned = new RawClients.ChurnResult[1];
    Flood flood;
    RawClients.BadClient bad;
  }

  private static Pending runFault(
      Campaign c, Fault f, int k, Targets.Link link, int router, Targets.Cut cut) throws Exception {
    ChaosSpec spec = c.spec;
    Pending p = new Pending();
    p.fault = f;
    p.start = c.now();
    p.target =
        switch (f) {
          case LINK_DOWN, SILENT_LINK -> "link " + link;
          case PARTITION -> cut.describe();
          default -> "router " + router;
        };
    c.log(
        "== fault %d/%d %s: %s; warm-up %d s",
        k, spec.faults().size(), f.id(), f.description(), spec.warmupSeconds());
    c.sleepUntil(p.start + spec.warmupSeconds() * 1_000_000_000L);
    Live live = new Live();
    p.inject = c.now();
    try {
      inject(c, p, live, k, link, router, cut);
    } catch (IOException | RuntimeException e) {
      p.findings.add("the fault could not be injected: " + e.getMessage());
      c.log("injecting %s failed: %s", f.id(), e);
    }
    c.sleepUntil(p.inject + spec.faultSeconds() * 1_000_000_000L);
    try {
      heal(c, p, live, link, router, cut);
    } catch (IOException | RuntimeException e) {
      p.findings.add("the fault could not be healed: " + e.getMessage());
      c.log("healing %s failed: %s", f.id(), e);
    }
    p.heal = c.now();
    c.log("%s: recovery %d s", f.id(), spec.recoverySeconds());
    c.sleepUntil(p.heal + spec.recoverySeconds() * 1_000_000_000L);
    p.end = c.now();
    check(c, p);
    if (c.trafficError != null) {
      p.findings.add("the harness's traffic stopped: " + c.trafficError);
    }
    saveMetrics(c, c.dir.resolve(String.format(Locale.ROOT, "%d-%s", k, f.id())));
    Accounting.Result so =
        Accounting.account(
            c.ledger,
            c.routerOf,
            c.sessions,
            new Accounting.Window(
                f, p.start, p.inject, p.heal, p.end, p.killed, p.side, c.reliable),
            spec.deadMillis() * 1_000_000L,
            spec.helloMillis() * 1_000_000L);
    c.log(
        "%s done; so far (deliveries in flight may still arrive): %,d missing (%,d expected"
            + " loss), %,d duplicates, %,d spurious%s",
        f.id(),
        so.missing(),
        so.expectedLoss(),
        so.duplicates(),
        so.spurious(),
        p.findings.isEmpty() ? "" : "; " + String.join("; ", p.findings));
    return p;
  }

  private static void inject(
      Campaign c, Pending p, Live live, int k, Targets.Link link, int router, Targets.Cut cut)
      throws IOException, InterruptedException {
    ChaosSpec spec = c.spec;
    InetSocketAddress at = c.federation.clientAddress(router);
    switch (p.fault) {
      case LINK_DOWN ->
          action(
              c, p, "inject", LinkFaults.down(c.net, LinkFaults.link(c.net, link.a(), link.b())));
      case SILENT_LINK ->
          action(
              c,
              p,
              "inject",
              LinkFaults.silence(c.net, LinkFaults.link(c.net, link.a(), link.b())));
      case PARTITION -> {
        p.side = cut.side();
        for (Targets.Link l : cut.links()) {
          action(c, p, "inject", LinkFaults.silence(c.net, LinkFaults.link(c.net, l.a(), l.b())));
        }
      }
      case KILL_RESTART -> {
        p.killed = router;
        long pid = c.federation.process(router).pid();
        c.federation.kill(router);
        action(c, p, "inject", "kill -9 " + pid + " (router " + router + ")");
      }
      case CLIENT_CHURN -> {
        List<Predicate> ps = new ArrayList<>();
        WorkloadGenerator g = new WorkloadGenerator(spec.workload(), spec.seed() + 1_000 + k);
        for (int i = 0; i < 64; i++) {
          ps.add(g.predicate());
        }
        long until = System.nanoTime() + spec.faultSeconds() * 900_000_000L;
        live.churn =
            new Thread(
                () -> {
                  try {
                    live.churned[0] =
                        RawClients.churn(at, ps, spec.churnCycles(), until, 4, () -> false);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "chaos-churn");
        live.churn.start();
        action(
            c,
            p,
            "inject",
            spec.churnCycles()
                + " sessions at "
                + at.getAddress().getHostAddress()
                + ": HELLO, SET_PREDICATE, reset (every other one after the OK)");
      }
      case SLOW_CONSUMER, NEVER_READS -> {
        boolean slow = p.fault == Fault.SLOW_CONSUMER;
        String name = slow ? "chaos-slow" : "chaos-never-reads";
        p.hostDropsAtInject = hostDropsTotal(c, router);
        live.bad =
            slow
                ? RawClients.BadClient.slow(
                    at, name, WanRun.ID, spec.slowReadBytesPerSecond(), c.origin)
                : RawClients.BadClient.neverReads(
                    at, name, WanRun.ID, spec.pingsPerSecond(), c.origin);
        live.flood = new Flood(at, spec.floodBytesPerSecond());
        action(
            c,
            p,
            "inject",
            name
                + (slow
                    ? " reads " + spec.slowReadBytesPerSecond() / 1000 + " kB/s"
                    : " never reads and writes up to " + spec.pingsPerSecond() + " PINGs/s")
                + "; predicate "
                + RawClients.everything(WanRun.ID)
                + "; flood of "
                + spec.floodBytesPerSecond() / 1000
                + " kB/s for it from chaos-flood");
      }
    }
  }

  private static void heal(
      Campaign c, Pending p, Live live, Targets.Link link, int router, Targets.Cut cut)
      throws IOException, InterruptedException {
    switch (p.fault) {
      case LINK_DOWN ->
          action(c, p, "heal", LinkFaults.up(c.net, LinkFaults.link(c.net, link.a(), link.b())));
      case SILENT_LINK ->
          action(
              c, p, "heal", LinkFaults.restore(c.net, LinkFaults.link(c.net, link.a(), link.b())));
      case PARTITION -> {
        for (Targets.Link l : cut.links()) {
          action(c, p, "heal", LinkFaults.restore(c.net, LinkFaults.link(c.net, l.a(), l.b())));
        }
      }
      case KILL_RESTART -> {
        if (p.killed >= 0) {
          ChildProcess np = restart(c, router, "killed at t=" + fmt(p.inject));
          action(c, p, "heal", "router " + router + " restarted (pid " + np.pid() + "), serving");
        }
      }
      case CLIENT_CHURN -> {
        if (live.churn != null) {
          live.churn.join();
          p.churn = live.churned[0];
          action(
              c,
              p,
              "heal",
              String.format(
                  Locale.ROOT,
                  "churn done: %d cycles, %d acknowledged, %d failed %s",
                  p.churn.cycles(),
                  p.churn.acknowledged(),
                  p.churn.failed(),
                  p.churn.failures()));
        }
      }
      case SLOW_CONSUMER, NEVER_READS -> {
        if (live.flood != null) {
          live.flood.close();
        }
        if (live.bad != null) {
          p.badClientRouterDrops = hostDrops(c, router, live.bad.name());
          if (p.badClientRouterDrops < 0 && p.hostDropsAtInject >= 0) {
            // The router ended the session (a slow consumer) and removed its series: its drops
            // are the router's drops to hosts since the injection (other hosts keep up).
            long now = hostDropsTotal(c, router);
            p.badClientRouterDrops = now < 0 ? -1 : now - p.hostDropsAtInject;
          }
          live.bad.close();
          p.badClient = live.bad.result();
          long flood = live.flood == null ? 0 : live.flood.sent();
          p.badClientExpected =
              flood + sentOkBetween(c, p.badClient.connectedAt(), p.badClient.closedAt());
          action(
              c,
              p,
              "heal",
              String.format(
                  Locale.ROOT,
                  "%s reset (%s); it read %,d bytes: %,d deliveries (%,d workload, %,d flood) of"
                      + " %,d sent while attached; router dropped %s for it; flood sent %,d",
                  p.badClient.name(),
                  p.badClient.endedBy(),
                  p.badClient.bytesRead(),
                  p.badClient.deliveries(),
                  p.badClient.workloadMessages(),
                  p.badClient.floodMessages(),
                  p.badClientExpected,
                  p.badClientRouterDrops < 0
                      ? "?"
                      : String.format(Locale.ROOT, "%,d", p.badClientRouterDrops),
                  flood));
        }
      }
    }
  }

  private static String fmt(long t) {
    return String.format(Locale.ROOT, "%.3fs", t / 1e9);
  }

  /**
   * Starts router {@code r} again (after a kill, or after it died or stopped answering), with a
   * marker in its log, and waits until it serves clients.
   */
  private static ChildProcess restart(Campaign c, int r, String why)
      throws IOException, InterruptedException {
    Files.writeString(
        c.dir.resolve("router-" + r + ".log"),
        String.format(
            Locale.ROOT, "%n==== chaos: %s; restarted at t=%s ====%n%n", why, fmt(c.now())),
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
    return c.federation.restart(r, Duration.ofSeconds(60));
  }

  /**
   * After a fault's recovery: every router must run and answer for its metrics (one that does not
   * is a finding, and is killed and started again so that the next fault meets a whole network),
   * and hold exactly the campaign's clients attached to it (every other session is closed by now; a
   * router that holds more kept sessions of clients that are gone); a router that keeps many more
   * per-session metric series than it has sessions is a finding too.
   */
  private static void check(Campaign c, Pending p) throws IOException, InterruptedException {
    int n = c.net.routers().size();
    List<Integer> restarted = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      ChildProcess proc = c.federation.process(r);
      String m = proc.isAlive() ? metrics(c, r) : null;
      if (m == null) {
        String why =
            proc.isAlive()
                ? "router "
                    + r
                    + " (pid "
                    + proc.pid()
                    + ") did not answer for its metrics within"
                    + " 5 s after "
                    + p.fault.id()
                : "router " + r + " (pid " + proc.pid() + ") died during " + p.fault.id();
        p.findings.add(why + "; it was restarted for the next fault");
        c.log("%s; restarting it", why);
        if (proc.isAlive()) {
          c.federation.kill(r);
        }
        restart(c, r, why);
        restarted.add(r);
        continue;
      }
      long sessions = value(m, "bdrp_clients ");
      long expected = 0;
      for (int j = 0; j < c.attachedTo.length(); j++) {
        expected += c.attachedTo.get(j) == r ? 1 : 0;
      }
      if (sessions != expected) {
        p.findings.add(
            "router "
                + r
                + ": "
                + sessions
                + " client sessions after the recovery, "
                + expected
                + " clients attached");
      }
      int series = lines(m, "bdrp_host_delivered_total{");
      if (series > 4 * expected + 10) {
        p.findings.add(
            "router "
                + r
                + ": "
                + series
                + " bdrp_host_delivered_total series (one per session ever opened, "
                + sessions
                + " open)");
      }
    }
    if (!restarted.isEmpty()) {
      // Outside every fault's window: the restarted routers' hosts reconnect and the routing
      // settles before the next warm-up.
      long until = c.now() + 20_000_000_000L;
      while (c.now() < until && !reconnected(c, restarted)) {
        Thread.sleep(100);
      }
      Thread.sleep(c.spec.deadMillis());
      c.log("routers %s restarted by the harness; their clients reconnected", restarted);
    }
  }

  private static boolean reconnected(Campaign c, List<Integer> routers) {
    for (int j = 0; j < c.clients.size(); j++) {
      if (routers.contains(c.routerOf[j]) && !c.clients.get(j).isConnected()) {
        return false;
      }
    }
    return true;
  }

  private static void action(Campaign c, Pending p, String what, String command) {
    String line = String.format(Locale.ROOT, "t=%.3fs %s: %s", c.now() / 1e9, what, command);
    p.actions.add(line);
    c.log("%s: %s", what, command);
  }

  /** Workload messages sent without failure in [{@code from}, {@code to}). */
  private static long sentOkBetween(Campaign c, long from, long to) {
    long n = 0;
    int end = Accounting.firstAt(c.ledger, to);
    for (int i = Accounting.firstAt(c.ledger, from); i < end; i++) {
      n += c.ledger.isFailed(i) ? 0 : 1;
    }
    return n;
  }

  /** Flood messages for a bad client, published by a client of the same router. */
  private static final class Flood {
    static final int BODY = 4000;
    private final BdrpClient client;
    private final Thread thread;
    private final AtomicLong sent = new AtomicLong();
    private volatile boolean stop;

    Flood(InetSocketAddress router, long bytesPerSecond) throws IOException, InterruptedException {
      client = BdrpClient.builder().router(router).name("chaos-flood").reconnect(false).connect();
      double perSecond = Math.max(1, bytesPerSecond / (double) BODY);
      byte[] body = new byte[BODY];
      thread =
          new Thread(
              () -> {
                long start = System.nanoTime();
                long n = 0;
                while (!stop) {
                  long due = start + (long) (n / perSecond * 1e9);
                  long wait = due - System.nanoTime();
                  if (wait > 0) {
                    LockSupport.parkNanos(wait);
                    continue;
                  }
                  Message m = Message.builder().put(RawClients.FLOOD, n).body(body).build();
                  client
                      .send(m)
                      .whenComplete(
                          (ok, e) -> {
                            if (e == null) {
                              sent.incrementAndGet();
                            }
                          });
                  n++;
                }
              },
              "chaos-flood");
      thread.setDaemon(true);
      thread.start();
    }

    long sent() {
      return sent.get();
    }

    void close() throws InterruptedException {
      stop = true;
      thread.join(5_000);
      client.close();
    }
  }

  // ---- metrics ----

  private static String metrics(Campaign c, int r) {
    try {
      return c.federation.metrics(r);
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The value of the first sample line of {@code text} that starts with {@code prefix}, or -1. */
  static long value(String text, String prefix) {
    if (text == null) {
      return -1;
    }
    for (String line : text.split("\n")) {
      if (line.startsWith(prefix)) {
        String v = line.substring(line.lastIndexOf(' ') + 1).strip();
        try {
          return (long) Double.parseDouble(v);
        } catch (NumberFormatException e) {
          return -1;
        }
      }
    }
    return -1;
  }

  /** Lines of {@code text} that start with {@code prefix}. */
  static int lines(String text, String prefix) {
    int n = 0;
    if (text != null) {
      for (String line : text.split("\n")) {
        n += line.startsWith(prefix) ? 1 : 0;
      }
    }
    return n;
  }

  private static long hostDrops(Campaign c, int router, String name) {
    String m = metrics(c, router);
    if (m == null) {
      return -1;
    }
    long sum = 0;
    boolean found = false;
    for (String line : m.split("\n")) {
      if (line.startsWith("bdrp_host_dropped_total{") && line.contains("name=\"" + name + "\"")) {
        sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).strip());
        found = true;
      }
    }
    return found ? sum : -1;
  }

  /** {@code bdrp_drops_total{reason="host"}} of {@code router}, or -1 if it does not answer. */
  private static long hostDropsTotal(Campaign c, int router) {
    String m = metrics(c, router);
    if (m == null) {
      return -1;
    }
    for (String line : m.split("\n")) {
      if (line.startsWith("bdrp_drops_total{reason=\"host\"}")) {
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).strip());
      }
    }
    return -1;
  }

  private static void saveMetrics(Campaign c, Path dir) throws IOException {
    Files.createDirectories(dir);
    for (int r = 0; r < c.net.routers().size(); r++) {
      if (!c.federation.process(r).isAlive()) {
        continue;
      }
      String m = metrics(c, r);
      if (m != null) {
        Files.writeString(dir.resolve("router-" + r + ".metrics"), m);
      }
    }
  }
}
