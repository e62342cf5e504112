package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The distance vector between a few routers joined by in-order, zero-latency links that the test
 * can cut; time advances only when the test says so. (Convergence, loop freedom and shortest paths
 * on many topologies are tested in the simulator module.)
 */
class DistanceVectorHandTest {
  static final RoutingConfig CONFIG =
      RoutingConfig.builder()
          .helloIntervalMs(100)
          .deadIntervalMs(350)
          .updateIntervalMs(400)
          .routeExpiryMs(1_400)
          .sourceGcMs(20_000)
          .maxRouters(16)
          .build();

  /** Routers joined by links; messages wait in one queue until {@link #flush()}. */
  static final class Net {
    long now = 1;
    final Map<Integer, DistanceVector> routers = new HashMap<>();
    final Map<Integer, Long> epochs = new HashMap<>();
    final ArrayDeque<Object[]> queue = new ArrayDeque<>();
    final List<String> events = new ArrayList<>();
    final Map<Long, Boolean> cut = new HashMap<>();
    final List<ControlMessage> sent = new ArrayList<>();
    final Map<Integer, int[]> links = new HashMap<>();

    static long key(int a, int b) {
      return (long) Math.min(a, b) << 32 | Math.max(a, b);
    }

    DistanceVector start(int r, long epoch, int... neighbours) {
      return start(r, epoch, OriginAuthority.NONE, neighbours);
    }

    /** A router that signs and verifies claims with {@code authority}. */
    DistanceVector start(int r, long epoch, OriginAuthority authority, int... neighbours) {
      epochs.put(r, epoch);
      links.put(r, neighbours);
      DistanceVector dv =
          new DistanceVector(
              r,
              epoch,
              CONFIG,
              () -> now,
              new DistanceVector.Listener() {
                @Override
                public void adjacencyUp(int n) {
                  events.add(r + " up " + n);
                }

                @Override
                public void adjacencyDown(int n) {
                  events.add(r + " down " + n);
                }

                @Override
                public void routesChanged() {}
              });
      dv.useAuthority(authority);
      routers.put(r, dv);
      for (int n : neighbours) {
        dv.addLink(face(r, n), 1);
      }
      return dv;
    }

    Face face(int from, int to) {
      return new Face() {
        @Override
        public int neighbour() {
          return to;
        }

        @Override
        public void send(ControlMessage m) {
          sent.add(m);
          if (!cut.getOrDefault(key(from, to), false)) {
            queue.add(new Object[] {to, m});
          }
        }
      };
    }

    void flush() {
      for (int i = 0; i < 100_000 && !queue.isEmpty(); i++) {
        Object[] e = queue.poll();
        DistanceVector dv = routers.get((Integer) e[0]);
        if (dv != null) {
          dv.receive((ControlMessage) e[1]);
        }
      }
      assertTrue(queue.isEmpty(), "messages keep flowing");
    }

    /** Advances time to {@code until}, running timers and delivering as they fire. */
    void run(long until) {
      while (true) {
        long next = Long.MAX_VALUE;
        for (DistanceVector dv : routers.values()) {
          next = Math.min(next, dv.nextDeadlineMillis());
        }
        if (next > until) {
          break;
        }
        now = Math.max(now, next);
        for (DistanceVector dv : routers.values()) {
          dv.tick();
        }
        flush();
      }
      now = until;
    }
  }

  @Test
  void adjacencyNeedsEachSideToHearItsOwnEpochEchoed() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    // Nobody at the other end yet: hellos go out but nothing comes up.
    net.flush();
    assertFalse(a.isUp(1));
    Hello first = (Hello) net.sent.get(0);
    assertEquals(new Hello(0, 10, 0), first, "the first hello echoes nothing");

    DistanceVector b = net.start(1, 20, 0);
    net.flush();
    assertTrue(a.isUp(1));
    assertTrue(b.isUp(0));
    assertEquals(1, a.nextHop(1));
    assertEquals(1, a.metric(1));
    assertEquals(0, b.nextHop(0));
    assertTrue(
        net.events.contains("0 up 1") && net.events.contains("1 up 0"), net.events.toString());
  }

  @Test
  void aHelloWithoutTheEchoDoesNotBringTheAdjacencyUp() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    net.flush();
    a.receive(new Hello(1, 20, 9)); // echoes an epoch that is not a's
    assertFalse(a.isUp(1));
    a.receive(new RouteUpdate(1, List.of(new Route(5, 1, 1, 1, false))));
    assertEquals(-1, a.nextHop(5), "routes from a neighbour without an adjacency are ignored");
    a.receive(new Hello(1, 20, 10));
    assertTrue(a.isUp(1));
  }

  @Test
  void aRestartedNeighbourLosesEverythingItSaidBefore() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    DistanceVector b = net.start(1, 20, 0, 2);
    net.start(2, 30, 1);
    net.run(2_000);
    assertEquals(1, a.nextHop(2));
    assertEquals(2, a.metric(2));

    // Router 1 restarts, alone this time (its link to 2 is gone), before 0's dead interval.
    net.routers.remove(1);
    net.events.clear();
    net.cut.put(Net.key(1, 2), true);
    net.cut.put(Net.key(2, 1), true);
    b = net.start(1, 21, 0);
    net.flush();
    assertEquals("0 down 1", net.events.get(0), "down first: " + net.events);
    assertTrue(net.events.containsAll(List.of("0 up 1", "1 up 0")), net.events.toString());
    assertEquals(-1, a.nextHop(2), "the route through 1's previous life is gone");
    assertEquals(1, a.nextHop(1));
    assertTrue(b.isUp(0));
  }

  @Test
  void silenceBeyondTheDeadIntervalTakesTheAdjacencyAndItsRoutesDown() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    net.start(1, 20, 0, 2);
    net.start(2, 30, 1);
    net.run(2_000);
    assertEquals(1, a.nextHop(2));
    net.cut.put(Net.key(1, 0), true);
    net.cut.put(Net.key(0, 1), true);
    // The last hello heard came at most a hello interval before the cut.
    net.run(2_000 + CONFIG.deadIntervalMs() - CONFIG.helloIntervalMs() - 1);
    assertTrue(a.isUp(1), "not yet dead");
    net.run(2_000 + CONFIG.deadIntervalMs() + CONFIG.helloIntervalMs());
    assertFalse(a.isUp(1));
    assertEquals(-1, a.nextHop(2));
    assertEquals(-1, a.nextHop(1));
  }

  @Test
  void theNextHopGetsAPoisonedRouteThatNamesItTheParent() {
    Net net = new Net();
    net.start(0, 10, 1);
    DistanceVector b = net.start(1, 20, 0, 2);
    DistanceVector c = net.start(2, 30, 1);
    net.run(2_000);
    // 2 reaches 0 through 1: what 2 tells 1 about 0 is poisoned and marked "via you".
    List<Route> toB = new ArrayList<>();
    for (ControlMessage m : net.sent) {
      if (m instanceof RouteUpdate u && u.sender() == 2) {
        for (Route r : u.routes()) {
          if (r.destination() == 0) {
            toB.add(r);
          }
        }
      }
    }
    assertFalse(toB.isEmpty());
    Route last = toB.get(toB.size() - 1);
    assertEquals(Route.INFINITY, last.metric());
    assertTrue(last.viaReceiver());
    assertArrayEquals(new int[] {2}, b.children(0), "1 is 2's parent towards 0");
    assertArrayEquals(new int[] {1}, net.routers.get(0).children(0), "0's tree: 1 below it");
    assertArrayEquals(new int[] {}, c.children(0));
  }

  @Test
  void routesOfTwoIncarnationsOfADestinationKeepTheirOwnEpochsAcrossANewNeighbourSlot() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1, 2);
    a.receive(new Hello(1, 20, 10));
    a.receive(new Hello(2, 30, 10));
    a.receive(new RouteUpdate(2, List.of(new Route(5, 50, 3, 1, false))));
    assertEquals(2, a.nextHop(5));
    // Destination 5 restarted (epoch 60): neighbour 1 has heard of it, neighbour 2 not yet. Both
    // routes are feasible; 2's is shorter.
    a.receive(new RouteUpdate(1, List.of(new Route(5, 60, 1, 10, false))));
    assertEquals(2, a.nextHop(5));
    assertEquals(2, a.metric(5));
    // A third neighbour widens every destination's entries; each keeps its epoch.
    a.addLink(net.face(0, 3), 1);
    a.receive(new Hello(3, 40, 10));
    // 2's route at its sequence (50, 3) gets worse: no longer feasible; 1's (60, 1) is.
    a.receive(new RouteUpdate(2, List.of(new Route(5, 50, 3, 7, false))));
    assertEquals(1, a.nextHop(5), "the route of the new incarnation");
    assertEquals(11, a.metric(5));
    assertEquals(1, a.selectedSeqno(5));
    // A late route of the old incarnation, however short, is older than the one selected.
    a.receive(new RouteUpdate(3, List.of(new Route(5, 50, 9, 1, false))));
    assertEquals(1, a.nextHop(5));
    a.receive(new RouteUpdate(2, List.of(new Route(5, 60, 2, 1, false))));
    assertEquals(2, a.nextHop(5), "2 has heard of the new incarnation: its newer sequence");
    assertEquals(2, a.metric(5));
  }

  @Test
  void aWorseRouteAtTheSameSequenceIsRefusedUntilTheDestinationAnswersARequest() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    // Neighbour 1 is driven by hand.
    a.receive(new Hello(1, 20, 10));
    assertTrue(a.isUp(1));
    a.receive(new RouteUpdate(1, List.of(new Route(5, 50, 3, 2, false))));
    assertEquals(3, a.metric(5));
    net.sent.clear();

    a.receive(new RouteUpdate(1, List.of(new Route(5, 50, 3, 7, false))));
    assertEquals(-1, a.nextHop(5), "metric 7 at the same sequence is not below FD 3: infeasible");
    assertTrue(
        net.sent.contains(new SeqnoRequest(0, 5, 50, 3, CONFIG.seqnoRequestHops())),
        "a request for a sequence newer than the feasibility distance (50, 3) goes out: "
            + net.sent);

    a.receive(new RouteUpdate(1, List.of(new Route(5, 50, 4, 7, false))));
    assertEquals(1, a.nextHop(5), "a newer sequence is feasible at any metric");
    assertEquals(8, a.metric(5));
  }

  @Test
  void aDestinationAnswersARequestWithANewerSequence() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    a.receive(new Hello(1, 20, 10));
    net.sent.clear();
    a.receive(new SeqnoRequest(1, 0, 10, 7, 5));
    Route self = null;
    for (ControlMessage m : net.sent) {
      if (m instanceof RouteUpdate u) {
        for (Route r : u.routes()) {
          if (r.destination() == 0) {
            self = r;
          }
        }
      }
    }
    assertEquals(new Route(0, 10, 8, 0, false), self, "newer than the (10, 7) asked about");
  }

  @Test
  void nonUrgentChangesArePacedAndRetractionsGoAtOnce() {
    long[] now = {1};
    List<String> toTwo = new ArrayList<>();
    DistanceVector a = new DistanceVector(0, 10, CONFIG, () -> now[0], TestFaces.QUIET);
    a.addLink(TestFaces.face(1, m -> {}), 1);
    a.addLink(
        TestFaces.face(
            2,
            m -> {
              if (m instanceof RouteUpdate u) {
                List<String> routes = new ArrayList<>();
                for (Route r : u.routes()) {
                  routes.add(
                      r.destination() + (r.metric() == Route.INFINITY ? ":inf" : ":" + r.metric()));
                }
                toTwo.add(String.join(" ", routes));
              }
            }),
        1);
    a.receive(new Hello(1, 20, 10));
    a.receive(new Hello(2, 30, 10));
    assertTrue(a.isUp(1) && a.isUp(2));
    toTwo.clear();
    long pacing = CONFIG.updatePacingMs();
    assertTrue(pacing > 0, "the hand test's configuration paces");

    a.receive(new RouteUpdate(1, List.of(new Route(5, 1, 1, 1, false))));
    assertEquals(List.of("5:2"), toTwo, "an isolated change goes at once");
    a.receive(new RouteUpdate(1, List.of(new Route(6, 1, 1, 1, false))));
    a.receive(new RouteUpdate(1, List.of(new Route(7, 1, 1, 3, false))));
    assertEquals(List.of("5:2"), toTwo, "changes within the pacing interval wait");
    assertEquals(now[0] + pacing, a.nextDeadlineMillis());
    now[0] += pacing - 1;
    a.tick();
    assertEquals(List.of("5:2"), toTwo);
    now[0] += 1;
    a.tick();
    assertEquals(List.of("5:2", "6:2 7:4"), toTwo, "one batch with every change gathered");

    a.receive(new RouteUpdate(1, List.of(new Route(7, 1, 1, 1, false))));
    assertEquals(2, toTwo.size(), "a better metric is not urgent");
    a.receive(new RouteUpdate(1, List.of(new Route(6, 1, 1, Route.INFINITY, false))));
    assertEquals("6:inf", toTwo.get(2), "a lost route's retraction goes at once");
    a.receive(new RouteUpdate(1, List.of(new Route(5, 1, 2, 4, false))));
    assertEquals("5:5", toTwo.get(3), "a newer sequence number goes at once");
    now[0] += pacing;
    a.tick();
    assertEquals(List.of("5:2", "6:2 7:4", "6:inf", "5:5", "7:2"), toTwo);
  }

  @Test
  void invalidLinksAreRefused() {
    DistanceVector.Listener quiet = TestFaces.QUIET;
    DistanceVector a = new DistanceVector(0, 1, CONFIG, () -> 0, quiet);
    Face self = TestFaces.face(0, m -> {});
    assertThrows(IllegalArgumentException.class, () -> a.addLink(self, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new DistanceVector(16, 1, CONFIG, () -> 0, quiet),
        "router number beyond maxRouters");
    assertThrows(
        IllegalArgumentException.class, () -> new DistanceVector(1, 0, CONFIG, () -> 0, quiet));
  }
}
