package io.bdrp.cli;

import com.fasterxml.jackson.databind.SequenceWriter;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.Router;
import io.bdrp.router.RouterView;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp demo}: a federation of router daemons in this process, one per router of a bundled
 * topology, on loopback ports chosen by the system and joined by real TCP links; hosts attach as
 * clients with the paper's workload predicates, publishers send the paper's messages, and every
 * delivery is checked against an oracle that evaluates every host's predicate directly.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Run a local federation on the paper's workload and print a delivery summary.",
      "Starts one router per node of a bundled topology on 127.0.0.1, attaches hosts as clients"
          + " with the paper's predicates, publishes the paper's messages from every router, and"
          + " checks every delivery against an independent oracle. Exits 1 if any delivery is"
          + " wrong."
    })
public final class DemoCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--topology",
      defaultValue = "routers-8",
      description = "Bundled topology: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).",
      completionCandidates = Bundled.Names.class)
  String topology;

  @Option(
      names = "--hosts",
      defaultValue = "80",
      description = "Hosts, spread evenly over the routers (default: ${DEFAULT-VALUE}).")
  int hosts;

  @Option(
      names = "--messages",
      defaultValue = "20000",
      description = "Messages to publish (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--constraints",
      defaultValue = "1",
      description =
          "Most constraints per conjunction; the paper's comparisons use 1 (default: ${DEFAULT-VALUE}).")
  int maxConstraints;

  @Option(
      names = "--names",
      defaultValue = "100",
      description = "Attribute names of each type in the workload (default: ${DEFAULT-VALUE}).")
  int names;

  @Mixin BloomOption bloom;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Workload seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--out",
      defaultValue = "runs",
      description = "Folder for the run's CSV (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(
      names = "--console",
      description =
          "After the summary, keep the federation running with light traffic and serve the web"
              + " console (docs/console.md) on --console-listen, until Ctrl-C.")
  boolean console;

  @Option(
      names = "--console-listen",
      defaultValue = "127.0.0.1:8080",
      paramLabel = "HOST:PORT",
      description = "Where --console serves its page (default: ${DEFAULT-VALUE}).")
  String consoleListen;

  /** Messages per second each publisher sends while --console keeps the federation running. */
  private static final int CONSOLE_RATE = 50;

  /** Messages a publisher may have unacknowledged; bounds what sits in the routers' queues. */
  private static final int WINDOW = 256;

  @Override
  public Integer call() throws Exception {
    PrintWriter o = spec.commandLine().getOut();
    if (hosts < 1 || messages < 1) {
      throw new IllegalArgumentException("--hosts and --messages must be at least 1");
    }
    if (!Bundled.names().contains(topology)) {
      throw new IllegalArgumentException(
          "--topology must be one of " + Bundled.names() + ", got '" + topology + "'");
    }
    Topology t = Bundled.load(topology);
    int n = t.nodeCount();
    WorkloadSpec workload =
        WorkloadSpec.PAPER.withNames(names, names).withConstraints(1, maxConstraints);
    WorkloadGenerator g = new WorkloadGenerator(workload, seed);
    RoutingConfig routing =
        RoutingConfig.builder()
            .helloIntervalMs(250)
            .deadIntervalMs(3_000)
            .updateIntervalMs(1_000)
            .routeExpiryMs(4_000)
            .maxRouters(Math.max(64, n))
            .build();
    o.printf(
        "bdrp demo: %s (%d routers, %d links), %d hosts, %,d messages, Bloom M=%d k=%d %s categories, seed %d%n",
        topology,
        n,
        t.edgeCount(),
        hosts,
        messages,
        bloom.parameters().bits(),
        bloom.parameters().hashes(),
        bloom.parameters().categories().configName(),
        seed);
    o.flush();

    Path dir = runFolder();
    Path logFile = dir.resolve("routers.log");
    List<Router> routers = new ArrayList<>();
    List<BdrpClient> clients = new ArrayList<>();
    EventLoopGroup io = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    ExecutorService callbacks = Executors.newFixedThreadPool(2);
    LogToFile log = LogToFile.open("io.bdrp", logFile); // the routers' lines, not the terminal's
    try {
      // Routers on loopback; each dials its higher-numbered neighbours.
      InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
      for (int r = 0; r < n; r++) {
        List<RouterConfig.Neighbour> ns = new ArrayList<>();
        for (int x : t.neighbours(r)) {
          ns.add(new RouterConfig.Neighbour(x, null, 1));
        }
        RouterConfig config =
            new RouterConfig(
                r,
                System.currentTimeMillis(),
                any,
                any,
                null,
                ns,
                routing,
                bloom.parameters(),
                RouterLimits.DEFAULT,
                null);
        routers.add(Router.start(console ? config.withMetrics(any, null) : config));
      }
      for (int a = 0; a < n; a++) {
        for (int b : t.neighbours(a)) {
          if (a < b) {
            routers.get(a).connect(b, routers.get(b).routerAddress());
          }
        }
      }
      await(
          o,
          "routes between all routers",
          () -> routers.stream().allMatch(r -> r.view().reachable().length == n - 1));

      // Hosts: a client each, with a workload predicate, plus the end-of-run markers.
      Predicate[] predicateOf = new Predicate[hosts];
      int[] routerOf = new int[hosts];
      AtomicIntegerArray[] got = new AtomicIntegerArray[hosts];
      AtomicIntegerArray markers = new AtomicIntegerArray(hosts);
      AtomicLong deliveries = new AtomicLong();
      for (int h = 0; h < hosts; h++) {
        int hh = h;
        routerOf[h] = h % n;
        predicateOf[h] = g.predicate();
        got[h] = new AtomicIntegerArray(messages);
        BdrpClient c = client(routers.get(routerOf[h]), "host-" + h, io, callbacks);
        clients.add(c);
        c.subscribe(
                predicateOf[h],
                m -> {
                  long id = m.get("id").asLong();
                  if (id >= 0) { // -1: the console's traffic, after the summary
                    got[hh].incrementAndGet((int) id);
                    deliveries.incrementAndGet();
                  }
                })
            .get(10, TimeUnit.SECONDS);
        c.subscribe(Predicate.parse("exists(marker)"), m -> markers.incrementAndGet(hh))
            .get(10, TimeUnit.SECONDS);
      }
      await(
          o, "every router's predicate at every router", () -> RouterView.predicatesAgree(routers));

      // Publishers: one per router, taking turns.
      List<BdrpClient> publishers = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        publishers.add(client(routers.get(r), "publisher-" + r, io, callbacks));
      }
      clients.addAll(publishers);
      Message[] sent = new Message[messages];
      long start = System.nanoTime();
      ProgressLine progress = new ProgressLine(o);
      for (int i = 0; i < messages; i++) {
        Message.Builder b = Message.builder();
        g.message().attributes().forEach(b::put);
        sent[i] = b.put("id", (long) i).build();
        BdrpClient p = publishers.get(i % n);
        if ((i / n) % WINDOW == WINDOW - 1) {
          p.sendAcknowledged(sent[i]).get(30, TimeUnit.SECONDS);
        } else {
          p.send(sent[i]);
        }
        progress.update(
            String.format(
                "published %,d of %,d messages, %,d deliveries so far",
                i + 1, messages, deliveries.get()));
      }
      // A marker from each publisher follows its messages along the same paths: when every host
      // has every marker, everything published before has arrived.
      for (BdrpClient p : publishers) {
        p.sendAcknowledged(Message.builder().put("marker", 1L).build()).get(30, TimeUnit.SECONDS);
      }
      progress.done(
          String.format(
              "published %,d of %,d messages, %,d deliveries so far",
              messages, messages, deliveries.get()));
      await(
          o,
          "every message to arrive",
          () -> {
            for (int h = 0; h < hosts; h++) {
              if (markers.get(h) < n) {
                return false;
              }
            }
            return true;
          });
      double seconds = (System.nanoTime() - start) / 1e9;

      long expected = 0;
      long delivered = 0;
      long undelivered = 0;
      long duplicates = 0;
      long spurious = 0;
      long[] deliveredAt = new long[n];
      long[] expectedAt = new long[n];
      for (int i = 0; i < messages; i++) {
        for (int h = 0; h < hosts; h++) {
          boolean want = predicateOf[h].matches(sent[i]);
          int c = got[h].get(i);
          if (want) {
            expected++;
            expectedAt[routerOf[h]]++;
          }
          if (c > 0) {
            delivered++;
            deliveredAt[routerOf[h]]++;
            duplicates += c - 1;
            if (!want) {
              spurious++;
            }
          } else if (want) {
            undelivered++;
          }
        }
      }
      DemoReport.Accounting a =
          new DemoReport.Accounting(expected, delivered, undelivered, duplicates, spurious);
      Path csv = writeCsv(dir, deliveredAt, routerOf, n);
      o.printf("  published                 %,12d messages in %.2f s%n", messages, seconds);
      o.printf(
          "  throughput                %,12.0f messages/s, %,.0f deliveries/s%n",
          messages / seconds, delivered / seconds);
      o.printf("  expected deliveries       %,12d (oracle: every predicate evaluated)%n", expected);
      o.printf("  delivered                 %,12d%n", delivered);
      o.printf("  undelivered               %,12d%n", undelivered);
      o.printf("  duplicates                %,12d%n", duplicates);
      o.printf("  spurious                  %,12d%n", spurious);
      o.printf("  per-router CSV            %s%n", csv);
      o.printf("  router logs               %s%n", logFile);
      Path plot = DemoReport.plot(dir, topology, messages, expectedAt, deliveredAt);
      Path summary = DemoReport.summary(dir, topology, n, hosts, messages, seconds, a);
      o.printf("  plot                      %s%n", plot);
      o.printf("  summary                   %s%n", summary);
      o.flush();
      if (console) {
        serveConsole(o, routers, publishers, g);
      }
      return a.exact() ? 0 : 1;
    } finally {
      for (BdrpClient c : clients) {
        c.close();
      }
      for (Router r : routers) {
        r.close();
      }
      io.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      callbacks.shutdown();
      log.close();
    }
  }

  /**
   * Serves the console on the running federation, every router given as a seed so that the first
   * poll reads them all (from any one, the console would find the others within a few polls by the
   * admin addresses the routers tell each other), while each publisher sends {@value #CONSOLE_RATE}
   * workload messages a second; returns when interrupted.
   */
  private void serveConsole(
      PrintWriter o, List<Router> routers, List<BdrpClient> publishers, WorkloadGenerator g)
      throws InterruptedException {
    List<String> seeds = new ArrayList<>();
    for (Router r : routers) {
      seeds.add("http://127.0.0.1:" + r.metricsAddress().getPort());
    }
    io.bdrp.cli.console.Federation federation =
        new io.bdrp.cli.console.Federation(
            seeds, io.bdrp.cli.console.Federation.httpClient(null), null);
    try (io.bdrp.cli.console.ConsoleServer server =
        new io.bdrp.cli.console.ConsoleServer(
            federation, Addresses.parse("--console-listen", consoleListen, 0))) {
      o.printf(
          "  console                   %s (the federation runs with light traffic; Ctrl-C stops)%n",
          server.url());
      o.flush();
      long tick = 1_000_000_000L / CONSOLE_RATE;
      long next = System.nanoTime();
      while (!Thread.currentThread().isInterrupted()) {
        for (BdrpClient p : publishers) {
          Message.Builder b = Message.builder();
          g.message().attributes().forEach(b::put);
          p.send(b.put("id", -1L).build());
        }
        next += tick;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
      }
    }
  }

  private static BdrpClient client(
      Router r, String name, EventLoopGroup io, ExecutorService callbacks) throws Exception {
    return BdrpClient.builder()
        .router(r.clientAddress())
        .name(name)
        .eventLoopGroup(io)
        .callbackExecutor(callbacks)
        .connect();
  }

  /**
   * Polls {@code condition} until it holds, on a progress line when it takes a while; fails after
   * 120 s, saying what it waited for.
   */
  private static void await(PrintWriter o, String what, BooleanSupplier condition)
      throws InterruptedException {
    long start = System.nanoTime();
    ProgressLine progress = null;
    while (!condition.getAsBoolean()) {
      long now = System.nanoTime();
      if (now - start > TimeUnit.SECONDS.toNanos(120)) {
        throw new IllegalStateException("timed out after 120 s waiting for " + what);
      }
      if (progress == null && now - start > 500_000_000L) {
        progress = new ProgressLine(o);
      }
      if (progress != null) {
        progress.update(String.format("waiting for %s (%.0f s)", what, (now - start) / 1e9));
      }
      Thread.sleep(10);
    }
    if (progress != null) {
      progress.done(String.format("%s: after %.1f s", what, (System.nanoTime() - start) / 1e9));
    }
  }

  /** The run folder, made now: {@code OUT/demo-DATE-TIME}. */
  private Path runFolder() {
    Path dir =
        out.resolve(
            "demo-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS")));
    try {
      return Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the run folder " + dir, e);
    }
  }

  private Path writeCsv(Path dir, long[] deliveredAt, int[] routerOf, int n) {
    Path file = dir.resolve("routers.csv");
    CsvSchema schema =
        CsvSchema.builder()
            .addColumn("router")
            .addColumn("hosts")
            .addColumn("host_deliveries")
            .setUseHeader(true)
            .build();
    try (SequenceWriter csv =
        new CsvMapper().writer(schema).writeValues(Files.newBufferedWriter(file))) {
      for (int r = 0; r < n; r++) {
        int rr = r;
        long h = java.util.Arrays.stream(routerOf).filter(x -> x == rr).count();
        csv.write(List.of(r, h, deliveredAt[r]));
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the run's CSV under " + out, e);
    }
  }
}
