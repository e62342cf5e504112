package io.bdrp.cli;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.simulator.DeliveryLog;
import io.bdrp.simulator.Simulator;
import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.DataHeader;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp sim}: runs the routing state machines of every router of a topology in the
 * discrete-event simulator, from a cold start to convergence, and reports what convergence costs:
 * simulated time, control traffic per router, table sizes and memory. Then publishes messages,
 * checks every delivery against an oracle and reports the data traffic.
 */
@Command(
    name = "sim",
    mixinStandardHelpOptions = true,
    description = {
      "Simulates a B-DRP network from a cold start: every router runs the real routing state "
          + "machines, links have latency, time is simulated. Reports convergence time, control "
          + "traffic, table sizes and memory, then checks message delivery against an oracle.",
      "Exits 1 if the network does not converge or any delivery is wrong."
    })
final class SimCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--topology",
      description =
          "A bundled topology (${COMPLETION-CANDIDATES}) or a BRITE file; without it a"
              + " topology is generated (see --routers, --model).",
      completionCandidates = Bundled.Names.class)
  String topology;

  @Option(
      names = "--routers",
      defaultValue = "1000",
      description = "Routers of the generated topology (default: ${DEFAULT-VALUE}).")
  int routers;

  @Option(
      names = "--model",
      defaultValue = "waxman",
      description = "Generator model: waxman or ba (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--links-per-router",
      defaultValue = "2",
      description = "Links each new router adds in the generator, m (default: ${DEFAULT-VALUE}).")
  int m;

  @Option(
      names = "--hosts-per-router",
      defaultValue = "1",
      description = "Hosts with a paper-workload predicate per router (default: ${DEFAULT-VALUE}).")
  int hostsPerRouter;

  @Option(
      names = "--names",
      defaultValue = "12,8",
      split = ",",
      description =
          "String and integer attribute names of the workload: fewer names, more matches"
              + " (default: ${DEFAULT-VALUE}, the paper's; the testbed's fig7 runs use 24,16).")
  int[] names;

  @Option(
      names = "--messages",
      defaultValue = "1000",
      description = "Messages published after convergence (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--rate",
      defaultValue = "100000",
      description =
          "Messages per second published, in simulated time, over all ingress routers (default:"
              + " ${DEFAULT-VALUE}).")
  double rate;

  @Option(
      names = "--ramp-to",
      description =
          "Raise the rate linearly from --rate to this many messages per second over the run, as"
              + " the testbed's ramps do (default: a constant rate).")
  Double rampTo;

  @Option(
      names = "--latency-ms",
      description =
          "Latency of every link in milliseconds; without it each link has the delay of its"
              + " BRITE edge (1 ms where the file gives none).")
  Double latencyMs;

  @Option(
      names = "--publishers",
      defaultValue = "10",
      description =
          "Routers the messages are published at, picked at random; each builds its index over"
              + " every router's filters once (default: ${DEFAULT-VALUE}).")
  int publishers;

  @Option(
      names = "--limit-s",
      defaultValue = "600",
      description =
          "Give up if not converged after this many simulated seconds (default: ${DEFAULT-VALUE}).")
  double limitSeconds;

  @Option(
      names = "--churn",
      defaultValue = "0",
      description =
          "After the traffic: change the predicates of this many random hosts, 10 ms apart, report"
              + " the advertisement bytes (and what whole advertisements would have cost), and"
              + " check traffic again (default: ${DEFAULT-VALUE}).")
  int churn;

  @Option(
      names = "--update-pacing-ms",
      description =
          "routing.updatePacingMs: non-urgent route updates go out at most once per this"
              + " interval (default: the router's, 100; 0 sends every change at once).")
  Long updatePacingMs;

  @Option(
      names = "--service",
      defaultValue = "best-effort",
      description =
          "How the messages are published: best-effort, or reliable (numbered, acknowledged and"
              + " confirmed; prints the bytes of acknowledgements and reliable headers against"
              + " DATA's) (default: ${DEFAULT-VALUE}).")
  String service;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of the generator and the workload (default: ${DEFAULT-VALUE}).")
  long seed;

  @Mixin BloomOption bloom;

  private WorkloadSpec workload() {
    if (names.length != 2 || names[0] < 0 || names[1] < 0 || names[0] + names[1] == 0) {
      throw new IllegalArgumentException(
          "--names takes two counts, string names and integer names, such as 12,8");
    }
    return WorkloadSpec.PAPER.withNames(names[0], names[1]);
  }

  @Override
  public Integer call() throws IOException {
    PrintWriter o = spec.commandLine().getOut();
    Topology t = topology();
    // Router numbers are exactly 0..n-1: every table by router number is sized to them, not to the
    // default maxRouters (4,096), which would take four times the heap at 1,000 routers.
    RoutingConfig routing = RoutingConfig.DEFAULT.toBuilder().maxRouters(t.nodeCount()).build();
    if (updatePacingMs != null) {
      routing = routing.toBuilder().updatePacingMs(updatePacingMs).build();
    }
    if (!service.equals("best-effort") && !service.equals("reliable")) {
      throw new IllegalArgumentException(
          "--service must be best-effort or reliable, got '" + service + "'");
    }
    boolean reliable = service.equals("reliable");
    Simulator.Options options =
        Simulator.Options.defaults().withRouting(routing).withBloom(bloom.parameters());
    if (reliable) {
      options = options.withReliable(io.bdrp.routing.Reliable.Config.DEFAULT);
    }
    if (latencyMs != null) {
      if (!(latencyMs > 0)) {
        throw new IllegalArgumentException("--latency-ms must be positive, got " + latencyMs);
      }
      options = options.withLatency(latencyMs, false);
    }
    o.printf(
        "bdrp sim: %d routers, %d links, diameter %d, %s; hello %d ms, update %d ms, pacing %d"
            + " ms; Bloom M=%d k=%d, %s categories; workload names %d,%d%n",
        t.nodeCount(),
        t.edgeCount(),
        t.diameter(),
        latencyMs == null ? "link delays from the file" : latencyMs + " ms links",
        routing.helloIntervalMs(),
        routing.updateIntervalMs(),
        routing.updatePacingMs(),
        options.bloom().bits(),
        options.bloom().hashes(),
        options.bloom().categories().configName(),
        names[0],
        names[1]);
    o.flush();

    // Every router holds a route and an advertisement reference per other router: about 180 bytes
    // per pair of routers at the peak of a cold start (measured at 5,000 and 10,000 routers).
    long needed = 180L * t.nodeCount() * t.nodeCount();
    long max = Runtime.getRuntime().maxMemory();
    if (needed > max) {
      o.printf(
          "bdrp sim: warning: %d routers need about %,d MiB of heap and this JVM may use %,d MiB;"
              + " give it more with BDRP_JAVA_OPTS=-Xmx<size>%n",
          t.nodeCount(), needed >> 20, max >> 20);
      o.flush();
    }
    long wallStart = System.nanoTime();
    Simulator sim = new Simulator(t, options);
    WorkloadGenerator g = new WorkloadGenerator(workload(), seed);
    int host = 0;
    for (int r = 0; r < t.nodeCount(); r++) {
      for (int i = 0; i < hostsPerRouter; i++) {
        sim.setHost(host++, r, g.predicate());
      }
    }
    long[] lastReport = {System.nanoTime()};
    boolean[] converging = {true}; // progress lines only until the summary: not among its lines
    sim.observe(
        s -> {
          long nowNs = System.nanoTime();
          if (converging[0] && nowNs - lastReport[0] > 5_000_000_000L) {
            lastReport[0] = nowNs;
            o.printf(
                "  ... simulated %.3f s, %,d events, last change at %.3f s%n",
                s.nowMillis() / 1000, s.events(), s.lastChangeMillis() / 1000);
            o.flush();
          }
        });
    double quietMs = 3.0 * routing.routeExpiryMs();
    double converged = sim.runUntilStable(quietMs, limitSeconds * 1000);
    converging[0] = false;
    double wall = (System.nanoTime() - wallStart) / 1e9;
    if (converged < 0) {
      o.printf("not converged after %.0f simulated seconds%n", limitSeconds);
      o.flush();
      return 1;
    }
    long bytes = 0;
    long maxBytes = 0;
    long msgs = 0;
    long adBytes = 0;
    long adBitmapBytes = 0;
    long ads = 0;
    long routes = 0;
    long digestsSent = 0;
    long digestsAgreed = 0;
    long digestsDisagreed = 0;
    long entries = 0;
    long filterBytes = 0;
    int wrongRoutes = 0;
    for (int r = 0; r < t.nodeCount(); r++) {
      bytes += sim.controlBytes(r);
      maxBytes = Math.max(maxBytes, sim.controlBytes(r));
      msgs += sim.controlMessages(r);
      adBytes += sim.advertisementBytes(r);
      adBitmapBytes += sim.advertisementBitmapBytes(r);
      ads += sim.advertisements(r);
      RoutingNode node = sim.node(r);
      routes += node.unicast().reachable().length;
      digestsSent += node.unicast().digestsSent();
      digestsAgreed += node.unicast().digestsAgreed();
      digestsDisagreed += node.unicast().digestsDisagreed();
      entries += node.predicates().size();
      filterBytes += node.predicates().filterBytes();
    }
    // Spot-check shortest paths from a sample of sources.
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < Math.min(20, t.nodeCount()); i++) {
      int d = rnd.nextInt(t.nodeCount());
      long[] dist = sim.shortestDistances(d);
      for (int r = 0; r < t.nodeCount(); r++) {
        if (r != d && sim.node(r).unicast().metric(d) != dist[r]) {
          wrongRoutes++;
        }
      }
    }
    Runtime rt = Runtime.getRuntime();
    System.gc();
    long heap = rt.totalMemory() - rt.freeMemory();
    int n = t.nodeCount();
    o.printf(
        "converged at %.2f s simulated: the last change to any table, none in the %.0f s after"
            + " (%.1f s wall, %,d events)%n",
        converged / 1000, quietMs / 1000, wall, sim.events());
    o.printf(
        "  control traffic until quiet: %,.0f bytes per router (max %,d), %,.0f messages per router%n",
        bytes / (double) n, maxBytes, msgs / (double) n);
    o.printf(
        "  of which advertisements (PREDICATE_AD, PREDICATE_DELTA, PREDICATE_BATCH): %,.0f bytes per router (%,.0f with every"
            + " filter an M-bit bitmap), %,.0f messages per router%n",
        adBytes / (double) n, adBitmapBytes / (double) n, ads / (double) n);
    o.printf(
        "  UNICAST: %.1f routes per router; shortest-path spot check: %d wrong metrics%n",
        routes / (double) n, wrongRoutes);
    o.printf(
        "  periodic updates as digests: %,d sent, %,d agreed, %,d disagreed (the full table asked"
            + " for)%n",
        digestsSent, digestsAgreed, digestsDisagreed);
    o.printf(
        "  PREDICATES: %.1f origins per router, %,.0f filter bytes per router%n",
        entries / (double) n, filterBytes / (double) n);
    o.printf(
        "  memory: %,d MiB heap in use for the whole simulation, %,.0f KiB per router%n",
        heap >> 20, heap / 1024.0 / n);
    o.flush();

    // Traffic, checked against the oracle.
    int[] ingress = rnd.ints(Math.max(1, Math.min(publishers, n)), 0, n).toArray();
    boolean ok = wrongRoutes == 0 && traffic(o, sim, g, rnd, ingress, n);
    if (churn > 0) {
      ok &= churn(o, sim, g, rnd, ingress, n, quietMs);
    }
    o.println(ok ? "OK" : "FAILED");
    o.flush();
    return ok ? 0 : 1;
  }

  /**
   * One message's deliveries against the hosts whose predicates match it: expected, undelivered,
   * delivered, duplicates, spurious. Each host's predicate is matched once: a delivery to a host
   * that does not match (or is no host) is spurious.
   */
  private static long[] check(DeliveryLog.Entry e, Map<Integer, Predicate> hosts) {
    Map<Integer, Integer> got = e.hostDeliveries();
    long expected = 0;
    long reached = 0; // hosts that match and got it
    for (Map.Entry<Integer, Predicate> h : hosts.entrySet()) {
      if (h.getValue().matches(e.message())) {
        expected++;
        reached += got.containsKey(h.getKey()) ? 1 : 0;
      }
    }
    long duplicates = 0;
    for (int count : got.values()) {
      duplicates += count - 1;
    }
    return new long[] {expected, expected - reached, got.size(), duplicates, got.size() - reached};
  }

  private static long[] sum(long[] a, long[] b) {
    long[] s = new long[a.length];
    for (int i = 0; i < a.length; i++) {
      s[i] = a[i] + b[i];
    }
    return s;
  }

  /**
   * Publishes {@link #messages} messages from the ingress routers, checks every delivery against
   * the oracle (the hosts' exact predicates), prints the result and the data traffic against
   * flooding every message to every router; true when nothing was lost, duplicated or spurious.
   */
  private boolean traffic(
      PrintWriter o,
      Simulator sim,
      WorkloadGenerator g,
      SplittableRandom rnd,
      int[] ingress,
      int n) {
    boolean reliable = service.equals("reliable");
    long[] bytesBefore = new long[n];
    long[] copiesBefore = new long[n];
    long acksBefore = 0;
    long headersBefore = 0;
    for (int r = 0; r < n; r++) {
      bytesBefore[r] = sim.dataBytes(r);
      copiesBefore[r] = sim.dataCopies(r);
      if (reliable) {
        acksBefore += sim.ackBytes(r);
        headersBefore += sim.reliableHeaderBytes(r);
      }
    }
    if (!(rate > 0)) {
      throw new IllegalArgumentException("--rate must be positive, got " + rate);
    }
    double to = rampTo == null ? rate : rampTo;
    if (!(to > 0)) {
      throw new IllegalArgumentException("--ramp-to must be positive, got " + rampTo);
    }
    // Send times: the rate goes linearly from `rate` to `to` over the run's length.
    double[] times = new double[messages];
    double length = 2.0 * messages / (rate + to); // seconds
    double t = 0;
    for (int i = 0; i < messages; i++) {
      times[i] = t * 1000;
      t += 1 / (rate + (to - rate) * Math.min(1, t / length));
    }
    long[] nextSeq = new long[n];
    long[] refused = {0};
    int logged = sim.log().entries().size();
    long floodBytes = 0;
    double start = sim.nowMillis();
    for (int i = 0; i < messages; i++) {
      int at = ingress[rnd.nextInt(ingress.length)];
      Message msg = g.message();
      // Flooding: one copy over each link of a spanning tree, without a destination set.
      floodBytes += (long) (n - 1) * DataHeader.frameLength(0, MessageCodec.encodedLength(msg));
      if (reliable) {
        // One publisher per ingress router, numbering its messages.
        sim.at(
            start + times[i],
            () -> {
              if (sim.publishReliable(at, msg, at + 1, ++nextSeq[at]) == null) {
                refused[0]++;
              }
            });
      } else {
        sim.at(start + times[i], () -> sim.publish(at, msg));
      }
    }
    sim.run(start + (messages == 0 ? 0 : times[messages - 1]) + 10_000);
    long dataBytes = 0;
    long dataCopies = 0;
    for (int r = 0; r < n; r++) {
      dataBytes += sim.dataBytes(r) - bytesBefore[r];
      dataCopies += sim.dataCopies(r) - copiesBefore[r];
    }
    List<DeliveryLog.Entry> entries = sim.log().entries();
    Map<Integer, Predicate> hosts = sim.hostPredicates();
    // The oracle: every message against every host's predicate, on every core (the simulation is
    // over, nothing changes under it). A thousand messages at 10,000 hosts are ten million matches.
    long[] counts =
        entries.subList(logged, entries.size()).parallelStream()
            .map(e -> check(e, hosts))
            .reduce(new long[5], SimCommand::sum);
    long expected = counts[0];
    long undelivered = counts[1];
    long delivered = counts[2];
    long duplicates = counts[3];
    long spurious = counts[4];
    int published = entries.size() - logged;
    o.printf(
        "traffic: %,d messages, %,d expected deliveries, %,d delivered, %,d undelivered, %,d"
            + " duplicates, %,d spurious%n",
        published, expected, delivered, undelivered, duplicates, spurious);
    o.printf(
        "  data traffic: %,d DATA copies, %,d bytes on links (%,.0f per message); flooding every"
            + " message to every router: %,d bytes (%.1fx)%n",
        dataCopies,
        dataBytes,
        dataBytes / (double) Math.max(1, published),
        floodBytes,
        floodBytes / (double) Math.max(1, dataBytes));
    if (reliable) {
      long acks = -acksBefore;
      long headers = -headersBefore;
      for (int r = 0; r < n; r++) {
        acks += sim.ackBytes(r);
        headers += sim.reliableHeaderBytes(r);
      }
      o.printf(
          "  reliable: %,d acknowledgement bytes (%.2f%% of DATA bytes), %,d bytes of reliable"
              + " headers in DATA (%.2f%%); %,d refused at the ingress%n",
          acks,
          100.0 * acks / Math.max(1, dataBytes),
          headers,
          100.0 * headers / Math.max(1, dataBytes),
          refused[0]);
    }
    o.flush();
    return undelivered == 0 && duplicates == 0 && spurious == 0 && refused[0] == 0;
  }

  /**
   * Changes the predicates of {@link #churn} random hosts, 10 ms apart, lets the network settle,
   * prints what the advertisements cost (and what they would have cost had every change gone
   * whole), then checks traffic against the oracle again.
   */
  private boolean churn(
      PrintWriter o,
      Simulator sim,
      WorkloadGenerator g,
      SplittableRandom rnd,
      int[] ingress,
      int n,
      double quietMs) {
    long ads = 0;
    long whole = 0;
    long control = 0;
    for (int r = 0; r < n; r++) {
      ads -= sim.advertisementBytes(r);
      whole -= sim.advertisementWholeBytes(r);
      control -= sim.controlBytes(r);
    }
    int hosts = n * hostsPerRouter;
    double start = sim.nowMillis();
    for (int i = 0; i < churn; i++) {
      int host = rnd.nextInt(hosts);
      Predicate p = g.predicate();
      sim.at(start + i * 10.0, () -> sim.setHost(host, host / hostsPerRouter, p));
    }
    sim.run(start + churn * 10.0);
    double settled = sim.runUntilStable(quietMs, sim.nowMillis() + limitSeconds * 1000);
    for (int r = 0; r < n; r++) {
      ads += sim.advertisementBytes(r);
      whole += sim.advertisementWholeBytes(r);
      control += sim.controlBytes(r);
    }
    o.printf(
        "churn: %,d predicate changes over %.1f s; advertisements %,.0f bytes per router (%,.0f"
            + " had every change gone whole: %.1fx), control %,.0f bytes per router%n",
        churn,
        churn * 10.0 / 1000,
        ads / (double) n,
        whole / (double) n,
        whole / (double) Math.max(1, ads),
        control / (double) n);
    if (settled < 0) {
      o.println("  not settled");
      return false;
    }
    return traffic(o, sim, g, rnd, ingress, n);
  }

  private Topology topology() throws IOException {
    if (topology != null) {
      try {
        return Bundled.loadOrRead(topology).topology();
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--topology: " + e.getMessage(), e);
      }
    }
    if (routers < 1) {
      throw new IllegalArgumentException("--routers must be at least 1, got " + routers);
    }
    return switch (model) {
      case "waxman" -> BriteGenerator.generate(BriteGenerator.Params.waxman(routers, m, seed));
      case "ba" -> BriteGenerator.generate(BriteGenerator.Params.barabasiAlbert(routers, m, seed));
      default ->
          throw new IllegalArgumentException("--model must be waxman or ba, got '" + model + "'");
    };
  }
}
