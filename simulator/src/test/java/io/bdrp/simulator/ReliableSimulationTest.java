package io.bdrp.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.routing.Reliable;
import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * The reliable service in the simulator, against the oracle (every host's predicate evaluated on
 * every message): exactly once at every matching host, in each publisher's order, and every message
 * confirmed to its publisher, through lost copies, links that go down and come back, transit
 * routers that crash and restart, and an ingress router that crashes while its publisher sends (the
 * publisher sends what was not confirmed again through another router).
 */
class ReliableSimulationTest {
  /** Routers that publishers use; they have no hosts. */
  private static final int[] INGRESS = {0, 1, 2};

  /** Transit routers without hosts, which may crash and restart. */
  private static final int[] TRANSIT = {3, 4};

  /** A publisher as the client library would be: it resends what is unconfirmed on failover. */
  private static final class Publisher {
    final long id;
    int router;
    long next = 1;
    final TreeMap<Long, Message> unconfirmed = new TreeMap<>();

    Publisher(long id, int router) {
      this.id = id;
      this.router = router;
    }
  }

  /** What the run saw. */
  private static final class Record {
    final Map<Long, long[]> byId = new HashMap<>(); // message id -> {publisher, seq}
    final Map<String, Message> messages = new HashMap<>(); // "publisher/seq" -> message
    final Map<String, Map<Integer, Integer>> deliveries = new HashMap<>();
    final Map<String, Long> lastSeq = new HashMap<>(); // "host/publisher" -> last seq delivered
    final List<String> outOfOrder = new ArrayList<>();
    final TreeSet<String> confirmed = new TreeSet<>();
    final List<String> failed = new ArrayList<>();
  }

  /** A retention shorter than the run, so that what a dead ingress left held is dropped. */
  private static final Reliable.Config RELIABLE =
      Reliable.Config.DEFAULT.withRetentionMillis(20_000);

  private static Simulator network(long seed) {
    Topology t = BriteGenerator.generate(BriteGenerator.Params.waxman(16, 2, seed));
    return new Simulator(
        t,
        SimulatorTest.options()
            .withCost(e -> 1 + (int) (Math.abs(e.id() * 7919L) % 3))
            .withReliable(RELIABLE));
  }

  private static Record watch(Simulator sim) {
    Record rec = new Record();
    sim.observeDeliveries(
        (host, router, id) -> {
          long[] ps = rec.byId.get(id);
          if (ps == null) {
            return; // a best-effort message
          }
          String key = ps[0] + "/" + ps[1];
          rec.deliveries.computeIfAbsent(key, k -> new HashMap<>()).merge(host, 1, Integer::sum);
          String stream = host + "/" + ps[0];
          Long last = rec.lastSeq.put(stream, ps[1]);
          if (last != null && last >= ps[1] && rec.outOfOrder.size() < 5) {
            rec.outOfOrder.add(
                "host " + host + ": publisher " + ps[0] + " " + ps[1] + " after " + last);
          }
        });
    return rec;
  }

  private static void send(Simulator sim, Record rec, Publisher p, long seq, Message m) {
    Long id = sim.publishReliable(p.router, m, p.id, seq);
    assertTrue(id != null, "retention full at router " + p.router);
    rec.byId.put(id, new long[] {p.id, seq});
  }

  /** Checks every message against the oracle once the network has settled. */
  private static void assertExactlyOnceInOrder(Simulator sim, Record rec, int published) {
    assertEquals(List.of(), rec.failed, "messages given up on");
    assertEquals(List.of(), rec.outOfOrder, "deliveries out of publisher order");
    assertEquals(published, rec.confirmed.size(), "messages confirmed");
    int deliveries = 0;
    for (Map.Entry<String, Message> e : rec.messages.entrySet()) {
      TreeSet<Integer> want = SimulatorTest.oracle(sim, e.getValue());
      Map<Integer, Integer> got = rec.deliveries.getOrDefault(e.getKey(), Map.of());
      assertEquals(want, new TreeSet<>(got.keySet()), "hosts that got " + e.getKey());
      for (Map.Entry<Integer, Integer> h : got.entrySet()) {
        assertEquals(1, h.getValue(), "copies of " + e.getKey() + " at host " + h.getKey());
      }
      deliveries += got.size();
    }
    assertTrue(deliveries > published / 4, "the workload delivers: " + deliveries);
    for (int r = 0; r < sim.routerCount(); r++) {
      Reliable<Message> rel = sim.reliable(r);
      assertEquals(0, rel.retainedMessages(), "messages still held at ingress " + r);
      assertEquals(0, rel.heldMessages(), "messages still held for reordering at " + r);
    }
  }

  private static Simulator withHosts(long seed, WorkloadGenerator g) {
    Simulator sim = network(seed);
    int host = 0;
    for (int r = 0; r < sim.routerCount(); r++) {
      if (r > TRANSIT[TRANSIT.length - 1]) {
        for (int i = 0; i < 3; i++) {
          sim.setHost(host++, r, g.predicate());
        }
      }
    }
    // One host that takes everything, so that every message has a destination router.
    sim.setHost(host, sim.routerCount() - 1, Predicate.parse("true"));
    SimulatorTest.converge(sim);
    return sim;
  }

  @Test
  void withoutFaultsEveryMessageIsDeliveredOnceInOrderAndConfirmed() {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 7);
    Simulator sim = withHosts(7, g);
    Record rec = watch(sim);
    sim.observeReliable(
        new Simulator.ReliableObserver() {
          @Override
          public void confirmed(int ingress, long id, long publisher, long seq) {
            rec.confirmed.add(publisher + "/" + seq);
          }

          @Override
          public void failed(int ingress, long id, long publisher, long seq, long[] unreached) {
            rec.failed.add(publisher + "/" + seq);
          }
        });
    double t0 = sim.nowMillis();
    int published = 0;
    for (int pub : INGRESS) {
      Publisher p = new Publisher(100 + pub, pub);
      for (int i = 0; i < 100; i++) {
        long seq = p.next++;
        Message m = g.message();
        rec.messages.put(p.id + "/" + seq, m);
        sim.at(t0 + i * 3 + pub, () -> send(sim, rec, p, seq, m));
        published++;
      }
    }
    sim.run(t0 + 5_000);
    assertExactlyOnceInOrder(sim, rec, published);
    long data = 0;
    long acks = 0;
    for (int r = 0; r < sim.routerCount(); r++) {
      data += sim.dataBytes(r);
      acks += sim.ackBytes(r);
      assertEquals(0, sim.reliable(r).count(Reliable.Count.RESENT), "resent at " + r);
    }
    assertTrue(acks < data / 5, "acknowledgement bytes " + acks + " against DATA " + data);
  }

  /**
   * Random faults while three publishers send: links down and up again (partitions included),
   * transit routers crashed and restarted, and one ingress router crashed for good, its publisher
   * moving to another router and sending what was not confirmed again.
   */
  @Property(tries = 5)
  void exactlyOnceInPublisherOrderThroughFaults(@ForAll long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, seed);
    long topologySeed = 1 + Math.floorMod(seed, 50);
    Simulator sim = withHosts(topologySeed, g);
    Record rec = watch(sim);
    Map<Long, Publisher> publishers = new HashMap<>();
    sim.observeReliable(
        new Simulator.ReliableObserver() {
          @Override
          public void confirmed(int ingress, long id, long publisher, long seq) {
            rec.confirmed.add(publisher + "/" + seq);
            Publisher p = publishers.get(publisher);
            if (p != null) {
              p.unconfirmed.remove(seq);
            }
          }

          @Override
          public void failed(int ingress, long id, long publisher, long seq, long[] unreached) {
            rec.failed.add(publisher + "/" + seq);
          }
        });
    double t0 = sim.nowMillis();
    double span = 3_000;
    int published = 0;
    for (int pub : INGRESS) {
      Publisher p = new Publisher(100 + pub, pub);
      publishers.put(p.id, p);
      for (int i = 0; i < 120; i++) {
        long seq = p.next++;
        Message m = g.message();
        rec.messages.put(p.id + "/" + seq, m);
        sim.at(
            t0 + i * span / 120 + pub,
            () -> {
              p.unconfirmed.put(seq, m);
              send(sim, rec, p, seq, m);
            });
        published++;
      }
    }
    // Links down for 0.2-2.5 s each; some overlap and may cut the network in two.
    List<Edge> edges = new ArrayList<>(sim.topology().edges());
    for (int i = 0; i < 8; i++) {
      Edge e = edges.get(rnd.nextInt(edges.size()));
      int a = sim.topology().routerOf(e.from());
      int b = sim.topology().routerOf(e.to());
      double at = t0 + rnd.nextDouble(span);
      double back = at + 200 + rnd.nextDouble(2_300);
      sim.at(at, () -> sim.linkDown(a, b));
      sim.at(back, () -> sim.linkUp(a, b));
    }
    // Transit routers crash and restart.
    for (int r : TRANSIT) {
      double at = t0 + rnd.nextDouble(span);
      sim.at(at, () -> sim.crash(r));
      sim.at(at + 300 + rnd.nextDouble(1_500), () -> sim.restart(r));
    }
    // An ingress router crashes for good: its publisher goes to the next and resends.
    int dead = INGRESS[rnd.nextInt(INGRESS.length)];
    double deathAt = t0 + span / 3 + rnd.nextDouble(span / 3);
    if (rnd.nextBoolean()) {
      // Cut off first, so that what its publisher sent meanwhile is unconfirmed when it dies.
      for (int b : sim.topology().neighbours(dead)) {
        sim.at(deathAt - 400, () -> sim.linkDown(dead, b));
        sim.at(deathAt + 1_000, () -> sim.linkUp(dead, b));
      }
    }
    sim.at(
        deathAt,
        () -> {
          sim.crash(dead);
          for (Publisher p : publishers.values()) {
            if (p.router == dead) {
              p.router = INGRESS[(dead + 1) % INGRESS.length];
              for (Map.Entry<Long, Message> u : p.unconfirmed.entrySet()) {
                send(sim, rec, p, u.getKey(), u.getValue());
              }
            }
          }
        });
    sim.run(t0 + span + 40_000);
    sim.restart(dead);
    sim.run(sim.nowMillis() + 10_000);
    assertExactlyOnceInOrder(sim, rec, published);
  }
}
