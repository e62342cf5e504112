package io.bdrp.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.RoutingNode;
import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Broadcast trees while routers gain routes, against the oracle: a router starts, or a partition
 * heals, while several sources broadcast, and every host whose predicate a broadcast matches gets
 * it exactly once if its router had a route to the broadcast's source when the source sent it (the
 * route installed in an earlier event than the publication, and held since). No host gets any
 * message twice, and no host whose predicate it does not match gets it.
 *
 * <p>Every router has a host that takes everything, so each broadcast must reach every router that
 * had a route to its source; the broadcast threshold is low, so nearly every message is one.
 */
class BroadcastTreeSimulationTest {
  /** Routers that publish throughout; they never crash and stay on one side of the partition. */
  private static final int SOURCES = 4;

  /** Milliseconds between two publications of one source. */
  private static final double EVERY_MS = 2;

  /** What a run must show, gathered as it goes. */
  private static final class Watch {
    final Simulator sim;
    final WorkloadGenerator g;
    // since[r][s]: the event after which router r has held a route to s, or -1 if it has none.
    final long[][] since;
    final long[] versions;
    // Per broadcast published: the hosts that must get it.
    final Map<Long, TreeSet<Integer>> required = new HashMap<>();
    final List<Long> ids = new ArrayList<>();

    Watch(Simulator sim, WorkloadGenerator g) {
      this.sim = sim;
      this.g = g;
      int n = sim.routerCount();
      since = new long[n][n];
      versions = new long[n];
      Arrays.fill(versions, -1);
      for (long[] row : since) {
        Arrays.fill(row, -1);
      }
      sim.observe(s -> noteRoutes());
      noteRoutes();
    }

    /** After each event: which routers hold a route to which sources, and since when. */
    void noteRoutes() {
      for (int r = 0; r < sim.routerCount(); r++) {
        RoutingNode node = sim.node(r);
        if (node == null) {
          Arrays.fill(since[r], -1);
          versions[r] = -1;
          continue;
        }
        long v = node.unicast().version();
        if (v == versions[r]) {
          continue;
        }
        versions[r] = v;
        for (int s = 0; s < sim.routerCount(); s++) {
          boolean has = s == r || node.unicast().nextHop(s) >= 0;
          if (!has) {
            since[r][s] = -1;
          } else if (since[r][s] < 0) {
            since[r][s] = sim.events();
          }
        }
      }
    }

    /** Publishes a message at {@code source} now and notes who must get it if it is a broadcast. */
    void publish(int source) {
      if (!sim.alive(source)) {
        return;
      }
      Message m = g.message();
      long id = sim.publish(source, m);
      ids.add(id);
      if (!sim.log().entry(id).broadcast()) {
        return;
      }
      TreeSet<Integer> want = new TreeSet<>();
      for (Map.Entry<Integer, Predicate> h : sim.hostPredicates().entrySet()) {
        int r = sim.hostRouters().get(h.getKey());
        if (since[r][source] >= 0 && h.getValue().matches(m)) {
          want.add(h.getKey());
        }
      }
      required.put(id, want);
    }

    /** Checks every message once the network has settled. */
    void check(String run) {
      int broadcasts = 0;
      long missed = 0;
      List<String> firstMissed = new ArrayList<>();
      for (long id : ids) {
        DeliveryLog.Entry e = sim.log().entry(id);
        TreeSet<Integer> matching = SimulatorTest.oracle(sim, e.message());
        e.hostDeliveries()
            .forEach(
                (h, c) -> {
                  assertEquals(1, c, run + ": deliveries of " + id + " to host " + h);
                  assertTrue(matching.contains(h), run + ": host " + h + " does not match " + id);
                });
        TreeSet<Integer> want = required.get(id);
        if (want == null) {
          continue;
        }
        broadcasts++;
        for (int h : want) {
          if (!e.hostDeliveries().containsKey(h)) {
            missed++;
            if (firstMissed.size() < 5) {
              firstMissed.add(
                  "host "
                      + h
                      + " at router "
                      + sim.hostRouters().get(h)
                      + " missed broadcast "
                      + id
                      + " from "
                      + e.ingress());
            }
          }
        }
        assertEquals(0, e.drops(DataPlane.Drop.HOP_LIMIT), run + ": hop limit of " + id);
      }
      assertEquals(List.of(), firstMissed, run + ": " + missed + " deliveries missed");
      assertTrue(broadcasts > ids.size() * 9 / 10, run + ": broadcasts " + broadcasts);
    }
  }

  private static Simulator network(long seed, WorkloadGenerator g) {
    Topology t = BriteGenerator.generate(BriteGenerator.Params.waxman(20, 2, seed));
    Simulator sim =
        new Simulator(
            t,
            SimulatorTest.options()
                .withRouting(SimulatorTest.FAST.toBuilder().broadcastFraction(0.01).build())
                .withCost(e -> 1 + (int) (Math.abs(e.id() * 7919L) % 3)));
    int host = 0;
    for (int r = 0; r < sim.routerCount(); r++) {
      sim.setHost(host++, r, Predicate.parse("true"));
      sim.setHost(host++, r, g.predicate());
    }
    return sim;
  }

  /** Schedules every source's publications over {@code [from, to)}. */
  private static void traffic(Watch w, int[] sources, double from, double to) {
    for (double t = from; t < to; t += EVERY_MS) {
      for (int k = 0; k < sources.length; k++) {
        int s = sources[k];
        w.sim.at(t + k * EVERY_MS / sources.length, () -> w.publish(s));
      }
    }
  }

  /**
   * A router that was down starts while four others broadcast; once up it broadcasts too. It gains
   * its routes after a hold-down, and every other router gains its route to it.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void aRouterThatStartsGetsEveryBroadcastSentOnceItHasARoute(long seed) {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, seed);
    Simulator sim = network(seed, g);
    int started = sim.routerCount() - 1;
    sim.crash(started);
    SimulatorTest.converge(sim);
    Watch w = new Watch(sim, g);
    double t0 = sim.nowMillis();
    int[] sources = {0, 1, 2, 3};
    traffic(w, sources, t0, t0 + 1_500);
    sim.at(t0 + 300, () -> sim.restart(started));
    traffic(w, new int[] {started}, t0 + 301, t0 + 1_500);
    sim.run(t0 + 1_500);
    SimulatorTest.converge(sim);
    w.check("seed " + seed);
  }

  /**
   * The network is cut in two, routes to the other side are lost, and the cut heals while sources
   * on both sides broadcast: every router gains routes to every source of the other side.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void aHealedPartitionGetsEveryBroadcastSentOnceItHasARoute(long seed) {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, seed);
    Simulator sim = network(seed, g);
    int n = sim.routerCount();
    // Side A: the routers within half the network of router 0, by breadth-first order.
    boolean[] sideA = new boolean[n];
    ArrayDeque<Integer> queue = new ArrayDeque<>(List.of(0));
    sideA[0] = true;
    int inA = 1;
    while (!queue.isEmpty() && inA < n / 2) {
      for (int b : sim.topology().neighbours(queue.poll())) {
        if (!sideA[b] && inA < n / 2) {
          sideA[b] = true;
          inA++;
          queue.add(b);
        }
      }
    }
    List<int[]> cut = new ArrayList<>();
    for (int a = 0; a < n; a++) {
      for (int b : sim.topology().neighbours(a)) {
        if (a < b && sideA[a] != sideA[b]) {
          cut.add(new int[] {a, b});
        }
      }
    }
    for (int[] l : cut) {
      sim.linkDown(l[0], l[1]);
    }
    SimulatorTest.converge(sim);
    // Two sources on each side.
    int[] sources = new int[SOURCES];
    int fromA = 0;
    int fromB = 0;
    for (int r = 0; r < n && fromA + fromB < SOURCES; r++) {
      if (sideA[r] && fromA < SOURCES / 2) {
        sources[fromA++ + fromB] = r;
      } else if (!sideA[r] && fromB < SOURCES / 2) {
        sources[fromA + fromB++] = r;
      }
    }
    for (int s = 0; s < n; s++) {
      for (int r = 0; r < n; r++) {
        if (sideA[r] != sideA[s]) {
          assertEquals(-1, sim.node(r).unicast().nextHop(s), "partitioned: " + r + " to " + s);
        }
      }
    }
    Watch w = new Watch(sim, g);
    double t0 = sim.nowMillis();
    traffic(w, sources, t0, t0 + 1_500);
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int[] l : cut) {
      sim.at(t0 + 300 + rnd.nextInt(200), () -> sim.linkUp(l[0], l[1]));
    }
    sim.run(t0 + 1_500);
    SimulatorTest.converge(sim);
    w.check("seed " + seed);
  }
}
