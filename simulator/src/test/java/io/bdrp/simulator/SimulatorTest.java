package io.bdrp.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.BriteReader;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.SharedFiles;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SimulatorTest {
  /** Short timers: a simulated second of convergence per few hops. */
  static final RoutingConfig FAST =
      RoutingConfig.builder()
          .helloIntervalMs(100)
          .deadIntervalMs(350)
          .updateIntervalMs(400)
          .routeExpiryMs(1_400)
          .sourceGcMs(20_000)
          .predicateExpiryMs(5_000)
          .build();

  static Simulator.Options options() {
    return Simulator.Options.defaults().withRouting(FAST);
  }

  static Stream<String> bundled() {
    return Bundled.names().stream();
  }

  static Stream<Path> realFiles() throws IOException {
    try (Stream<Path> files = Files.list(SharedFiles.realTopologies())) {
      return files.filter(p -> p.toString().endsWith(".brite")).sorted().toList().stream();
    }
  }

  /** Every running router's metric to every other equals the shortest-path distance. */
  static void assertShortestPaths(Simulator sim) {
    for (int d = 0; d < sim.routerCount(); d++) {
      long[] dist = sim.shortestDistances(d);
      for (int r = 0; r < sim.routerCount(); r++) {
        RoutingNode node = sim.node(r);
        if (node == null || r == d) {
          continue;
        }
        int metric = node.unicast().metric(d);
        if (dist[r] < 0) {
          assertEquals(-1, node.unicast().nextHop(d), r + " has no route to unreachable " + d);
          continue;
        }
        assertEquals(dist[r], metric, "metric of " + r + " towards " + d);
        int hop = node.unicast().nextHop(d);
        long[] viaHop = sim.shortestDistances(hop);
        assertEquals(
            dist[r],
            sim.linkCost(r, hop) + viaHop[d],
            r + "'s next hop to " + d + " is on a shortest path");
      }
    }
  }

  static double converge(Simulator sim) {
    double t = sim.runUntilStable(5 * FAST.updateIntervalMs(), 120_000);
    assertTrue(t >= 0, "routes still changing after 120 simulated seconds");
    return t;
  }

  @ParameterizedTest
  @MethodSource("bundled")
  void bundledTopologiesConvergeToShortestPaths(String name) {
    Simulator sim = new Simulator(Bundled.load(name), options());
    converge(sim);
    assertShortestPaths(sim);
  }

  @ParameterizedTest
  @MethodSource("realFiles")
  void realBriteFilesConvergeToShortestPaths(Path file) throws IOException {
    Topology t = BriteReader.read(file).topology();
    Simulator sim = new Simulator(t, options());
    converge(sim);
    assertShortestPaths(sim);
  }

  /** Attaches {@code perRouter} hosts with paper-workload predicates to every router. */
  static void attachHosts(Simulator sim, WorkloadGenerator g, int perRouter) {
    int host = 0;
    for (int r = 0; r < sim.routerCount(); r++) {
      for (int i = 0; i < perRouter; i++) {
        sim.setHost(host++, r, g.predicate());
      }
    }
  }

  /** The hosts whose predicate {@code m} satisfies, by evaluating every predicate. */
  static TreeSet<Integer> oracle(Simulator sim, Message m) {
    TreeSet<Integer> want = new TreeSet<>();
    for (Map.Entry<Integer, Predicate> e : sim.hostPredicates().entrySet()) {
      if (e.getValue().matches(m)) {
        want.add(e.getKey());
      }
    }
    return want;
  }

  /**
   * Checks one message after it has settled: each truly matching host got it exactly once and no
   * other host got it; routers that delivered locally were in D (or the ingress router), every
   * router with a matching host did, each once; nothing dropped. (A transit router may relay two
   * copies of a message when shortest paths to two destinations meet at it from different sides;
   * the copies carry disjoint sets, so no router is a destination twice.)
   */
  static void assertExact(Simulator sim, DeliveryLog.Entry e) {
    TreeSet<Integer> want = oracle(sim, e.message());
    assertEquals(want, new TreeSet<>(e.hostDeliveries().keySet()), "hosts of message " + e.id());
    e.hostDeliveries().forEach((h, c) -> assertEquals(1, c, "deliveries to host " + h));
    TreeSet<Integer> matchingRouters = new TreeSet<>();
    for (int h : want) {
      matchingRouters.add(sim.hostRouters().get(h));
    }
    for (int r : matchingRouters) {
      assertEquals(1, e.localDecisions().getOrDefault(r, 0), "router " + r + " delivers once");
    }
    e.localDecisions()
        .forEach(
            (r, c) -> {
              assertEquals(1, c, "local decisions at " + r);
              assertTrue(
                  r == e.ingress() || e.broadcast() || e.inDestinations(r),
                  "router " + r + " delivered without being in D");
            });
    assertEquals(0, e.drops(DataPlane.Drop.HOP_LIMIT));
    assertEquals(0, e.drops(DataPlane.Drop.NOT_ON_TREE));
    assertEquals(0, e.unreachable());
  }

  @ParameterizedTest
  @MethodSource("bundled")
  void afterConvergenceEveryMessageReachesExactlyItsHosts(String name) {
    Simulator sim = new Simulator(Bundled.load(name), options());
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, name.hashCode());
    attachHosts(sim, g, 3);
    converge(sim);
    SplittableRandom rnd = new SplittableRandom(name.hashCode());
    int falsePositives = 0;
    int delivered = 0;
    for (int i = 0; i < 300; i++) {
      int at = rnd.nextInt(sim.routerCount());
      sim.at(sim.nowMillis() + i * 0.1, () -> sim.publish(at, g.message()));
    }
    sim.run(sim.nowMillis() + 30 + 2_000);
    assertEquals(300, sim.log().entries().size());
    for (DeliveryLog.Entry e : sim.log().entries()) {
      assertExact(sim, e);
      delivered += e.hostDeliveries().size();
      for (int r : e.localDecisions().keySet()) {
        if (r != e.ingress() && !sim.hostRouters().containsValue(r)) {
          falsePositives++;
        }
      }
    }
    assertTrue(sim.routerCount() == 1 || delivered > 0, "the workload delivers something");
    assertTrue(falsePositives >= 0);
  }

  @Test
  void broadcastsReachEveryRouterExactlyOnce() {
    for (String name : List.of("routers-4", "routers-8", "routers-42")) {
      Simulator sim =
          new Simulator(
              Bundled.load(name),
              Simulator.Options.defaults()
                  .withRouting(FAST.toBuilder().broadcastFraction(0.01).build()));
      for (int r = 0; r < sim.routerCount(); r++) {
        sim.setHost(r, r, Predicate.parse("exists(x)"));
      }
      converge(sim);
      for (int r = 0; r < sim.routerCount(); r++) {
        int at = r;
        sim.at(sim.nowMillis(), () -> sim.publish(at, Message.builder().put("x", 1L).build()));
      }
      sim.run(sim.nowMillis() + 2_000);
      for (DeliveryLog.Entry e : sim.log().entries()) {
        assertTrue(e.broadcast(), name + ": sent as a broadcast");
        assertEquals(sim.routerCount() - 1, e.routerCopies().size(), name + ": every router");
        e.routerCopies().forEach((r, c) -> assertEquals(1, c, name + ": copies at " + r));
        assertEquals(sim.routerCount() - 1, e.copies(), name + ": one copy per tree edge");
        assertExact(sim, e);
      }
    }
  }

  @Test
  void noForwardingLoopAtAnyEventWhileLinksFailAndRoutersRestart() {
    for (long seed = 1; seed <= 3; seed++) {
      Topology t = BriteGenerator.generate(BriteGenerator.Params.waxman(30, 2, seed));
      Simulator sim =
          new Simulator(
              t,
              options()
                  .withCarrierLoss(seed != 2)
                  .withCost(e -> 1 + (int) (Math.abs(e.id() * 7919L) % 5)));
      WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, seed);
      attachHosts(sim, g, 2);
      List<String> loops = new ArrayList<>();
      long[] checks = {0};
      sim.observe(
          s -> {
            checks[0]++;
            for (int d = 0; d < s.routerCount(); d++) {
              int at = s.loopTowards(d);
              if (at >= 0 && loops.size() < 5) {
                loops.add("loop towards " + d + " through " + at + " at " + s.nowMillis() + " ms");
              }
            }
          });
      converge(sim);
      SplittableRandom rnd = new SplittableRandom(seed);
      List<int[]> edges = new ArrayList<>();
      for (int a = 0; a < t.nodeCount(); a++) {
        for (int b : t.neighbours(a)) {
          if (a < b) {
            edges.add(new int[] {a, b});
          }
        }
      }
      double time = sim.nowMillis();
      for (int step = 0; step < 150; step++) {
        time += rnd.nextDouble() * 300;
        int kind = rnd.nextInt(10);
        if (kind < 6) {
          int[] e = edges.get(rnd.nextInt(edges.size()));
          boolean down = rnd.nextBoolean();
          sim.at(
              time,
              () -> {
                if (down) {
                  sim.linkDown(e[0], e[1]);
                } else {
                  sim.linkUp(e[0], e[1]);
                }
              });
        } else if (kind < 8) {
          int r = rnd.nextInt(t.nodeCount());
          sim.at(
              time,
              () -> {
                if (sim.alive(r)) {
                  sim.crash(r);
                } else {
                  sim.restart(r);
                }
              });
        } else {
          int r = rnd.nextInt(t.nodeCount());
          Message m = g.message();
          sim.at(
              time,
              () -> {
                if (sim.alive(r)) {
                  sim.publish(r, m);
                }
              });
        }
      }
      sim.run(time + 1);
      for (int[] e : edges) {
        sim.linkUp(e[0], e[1]);
      }
      for (int r = 0; r < t.nodeCount(); r++) {
        if (!sim.alive(r)) {
          sim.restart(r);
        }
      }
      converge(sim);
      if (!loops.isEmpty()) {
        fail("seed " + seed + ": " + loops);
      }
      assertTrue(checks[0] > 1_000, "loop check ran at every event: " + checks[0]);
      for (DeliveryLog.Entry e : sim.log().entries()) {
        e.hostDeliveries().forEach((h, c) -> assertEquals(1, c, "no duplicate during churn"));
        e.localDecisions().forEach((r, c) -> assertEquals(1, c, "no router delivers twice"));
        assertEquals(0, e.drops(DataPlane.Drop.HOP_LIMIT), "no copy runs out of hops");
      }
      assertShortestPaths(sim);
      // And after everything has healed, delivery is exact again.
      sim.log().clear();
      for (int i = 0; i < 100; i++) {
        int r = rnd.nextInt(t.nodeCount());
        sim.publish(r, g.message());
      }
      sim.run(sim.nowMillis() + 2_000);
      for (DeliveryLog.Entry e : sim.log().entries()) {
        assertExact(sim, e);
      }
    }
  }

  /**
   * Every control message is counted as the bytes the router-link codec writes for it (and those
   * bytes decode back to the message), and every DATA copy as the bytes of its DATA frame.
   */
  @Test
  void trafficIsCountedInTheBytesOfTheWireCodecs() {
    Simulator sim = new Simulator(Bundled.load("routers-8"), options());
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 8);
    attachHosts(sim, g, 2);
    int n = sim.routerCount();
    UnpooledByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT;
    long[] counted = new long[n];
    long[] encoded = new long[n];
    for (int r = 0; r < n; r++) {
      ByteBuf hello = RouterFrameCodec.encode(alloc, new ControlMessage.Hello(r, 1, 0));
      try {
        assertEquals(
            sim.controlMessages(r) * hello.readableBytes(),
            sim.controlBytes(r),
            "the hellos router " + r + " sent as it started");
      } finally {
        hello.release();
      }
      counted[r] = sim.controlBytes(r);
      encoded[r] = counted[r];
    }
    Set<Class<?>> kinds = new HashSet<>();
    sim.observeControl(
        (from, to, m) -> {
          ByteBuf frame = RouterFrameCodec.encode(alloc, m);
          try {
            int bytes = frame.readableBytes();
            assertEquals(bytes, sim.controlBytes(from) - counted[from], "size of " + m);
            assertEquals(m, RouterFrameCodec.decode(frame), "the frame holds the whole message");
            counted[from] = sim.controlBytes(from);
            encoded[from] += bytes;
            kinds.add(m.getClass());
          } finally {
            frame.release();
          }
        });
    converge(sim);
    for (int r = 0; r < n; r++) {
      assertEquals(encoded[r], sim.controlBytes(r), "control bytes of router " + r);
      assertTrue(sim.controlMessages(r) > 0);
    }
    assertTrue(
        kinds.containsAll(
            List.of(
                ControlMessage.Hello.class,
                ControlMessage.RouteUpdate.class,
                ControlMessage.PredicateAd.class)),
        "hellos, route updates and predicate advertisements were sized: " + kinds);

    SplittableRandom rnd = new SplittableRandom(8);
    for (int i = 0; i < 50; i++) {
      sim.publish(rnd.nextInt(n), g.message());
    }
    sim.publish(0, Message.builder().put("unmatched", 1L).build());
    sim.run(sim.nowMillis() + 2_000);
    // Copies carry D up to its last router; every router here is below 64, so one word.
    assertTrue(n <= 64);
    long[] d = new long[1];
    long wantBytes = 0;
    long wantCopies = 0;
    for (DeliveryLog.Entry e : sim.log().entries()) {
      assertExact(sim, e);
      ByteBuf frame =
          DataHeader.encode(
              alloc,
              FAST.hopLimit(),
              e.broadcast(),
              e.ingress(),
              e.id(),
              e.broadcast() ? null : d,
              e.message());
      try {
        wantBytes += (long) e.copies() * frame.readableBytes();
      } finally {
        frame.release();
      }
      wantCopies += e.copies();
    }
    long bytes = 0;
    long copies = 0;
    for (int r = 0; r < n; r++) {
      bytes += sim.dataBytes(r);
      copies += sim.dataCopies(r);
    }
    assertTrue(wantCopies > 0, "the workload sends copies");
    assertEquals(wantCopies, copies);
    assertEquals(wantBytes, bytes);
  }
}
