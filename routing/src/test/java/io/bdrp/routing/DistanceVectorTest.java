package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteDigest;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import io.bdrp.routing.ControlMessage.TableRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DistanceVectorTest {

  private static final int INF = Route.INFINITY;

  private record Sent(int to, long at, ControlMessage message) {}

  /** A single router driven by hand: a settable clock, faces that record what is sent. */
  private static final class Bench {
    long now;
    final List<String> events = new ArrayList<>();
    final List<ControlMessage> sent = new ArrayList<>();
    final List<Sent> sentTo = new ArrayList<>();
    final DistanceVector dv;

    Bench(int self, long epoch) {
      dv =
          new DistanceVector(
              self,
              epoch,
              DvNetwork.testConfig(16),
              () -> now,
              new DistanceVector.Listener() {
                @Override
                public void adjacencyUp(int n) {
                  events.add("up " + n);
                }

                @Override
                public void adjacencyDown(int n) {
                  events.add("down " + n);
                }

                @Override
                public void routesChanged() {
                  changes++;
                }
              });
    }

    int changes;

    Face face(int n) {
      return new Face() {
        @Override
        public int neighbour() {
          return n;
        }

        @Override
        public void send(ControlMessage m) {
          sent.add(m);
          sentTo.add(new Sent(n, now, m));
        }
      };
    }

    <T> List<T> sentOf(Class<T> type) {
      return sent.stream().filter(type::isInstance).map(type::cast).toList();
    }
  }

  @Test
  void adjacencyNeedsTheEpochEchoAndANewEpochResetsIt() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    assertEquals(List.of(new Hello(0, 5, 0)), b.sent, "hello right away, nothing to echo yet");
    b.sent.clear();

    assertTrue(b.dv.receive(new Hello(1, 7, 0)));
    assertFalse(b.dv.isUp(1), "one-way: 1 has not heard our epoch");
    assertEquals(List.of(new Hello(0, 5, 7)), b.sent, "echoes the new epoch at once");
    Route via1 = new Route(2, 9, 0, 3, false);
    assertFalse(
        b.dv.receive(new RouteUpdate(1, List.of(new Route(1, 7, 0, 0, false), via1))),
        "updates before the adjacency is up are ignored");
    assertEquals(-1, b.dv.nextHop(1));

    b.sent.clear();
    assertTrue(b.dv.receive(new Hello(1, 7, 5)));
    assertTrue(b.dv.isUp(1));
    assertArrayEquals(new int[] {1}, b.dv.upNeighbours());
    assertEquals(List.of("up 1"), b.events);
    assertEquals(
        List.of(new RouteUpdate(0, List.of(new Route(0, 5, 0, 0, false)))),
        b.sentOf(RouteUpdate.class),
        "full update on adjacency up");

    assertTrue(b.dv.receive(new RouteUpdate(1, List.of(new Route(1, 7, 0, 0, false), via1))));
    assertEquals(1, b.dv.nextHop(1));
    assertEquals(1, b.dv.metric(1));
    assertEquals(1, b.dv.nextHop(2));
    assertEquals(4, b.dv.metric(2));
    assertArrayEquals(new int[] {1, 2}, b.dv.reachable());
    assertEquals(0, b.dv.nextHop(0));
    assertEquals(0, b.dv.metric(0));

    // 1 restarts: a hello with a newer epoch drops the adjacency and everything learned from it.
    b.sent.clear();
    assertTrue(b.dv.receive(new Hello(1, 8, 0)));
    assertFalse(b.dv.isUp(1));
    assertEquals(List.of("up 1", "down 1"), b.events);
    assertEquals(-1, b.dv.nextHop(2));
    assertEquals(INF, b.dv.metric(2));
    assertEquals(-1, b.dv.nextHop(1));
    assertArrayEquals(new int[0], b.dv.reachable());
    assertTrue(b.sent.contains(new Hello(0, 5, 8)), "echoes the new epoch");
    assertFalse(
        b.dv.receive(new RouteUpdate(1, List.of(via1))),
        "the new incarnation is not trusted before it echoes our epoch");
    assertFalse(b.dv.receive(new Hello(1, 7, 5)), "a hello of the old incarnation is ignored");
    assertFalse(b.dv.isUp(1));

    assertTrue(b.dv.receive(new Hello(1, 8, 5)));
    assertTrue(b.dv.isUp(1));
    assertEquals(List.of("up 1", "down 1", "up 1"), b.events);
    assertEquals(-1, b.dv.nextHop(2), "no route of the old incarnation came back");
  }

  @Test
  void deadIntervalLinkDownAndForgottenEchoTakeTheAdjacencyDown() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.receive(new Hello(1, 7, 5));
    assertTrue(b.dv.isUp(1));

    b.now = 340;
    b.dv.tick();
    assertTrue(b.dv.isUp(1), "heard 340 ms ago, dead interval is 350");
    assertEquals(350, b.dv.nextDeadlineMillis(), "the dead interval is the next deadline");
    b.now = 350;
    b.dv.tick();
    assertFalse(b.dv.isUp(1));
    assertEquals(List.of("up 1", "down 1"), b.events);

    b.dv.receive(new Hello(1, 7, 5));
    assertTrue(b.dv.isUp(1));
    b.dv.linkDown(1);
    assertFalse(b.dv.isUp(1));
    b.sent.clear();
    b.now = 500;
    b.dv.tick();
    assertTrue(b.sent.contains(new Hello(0, 5, 0)), "after linkDown the epoch is forgotten");

    b.dv.receive(new Hello(1, 7, 5));
    assertTrue(b.dv.isUp(1));
    b.dv.receive(new Hello(1, 7, 0));
    assertFalse(b.dv.isUp(1), "the neighbour no longer echoes us: it forgot us");
    b.dv.removeLink(1);
    assertFalse(b.dv.receive(new Hello(1, 7, 5)), "not a configured neighbour");
    assertEquals(List.of("up 1", "down 1", "up 1", "down 1", "up 1", "down 1"), b.events);
  }

  @Test
  void anythingHeardFromANeighbourKeepsItAliveAsAHelloWould() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.heard(1);
    b.dv.receive(new Hello(1, 7, 5));
    assertTrue(b.dv.isUp(1));
    // Hellos stuck behind traffic: only data arrives, every 300 ms, for longer than the dead
    // interval (350 ms).
    for (long t = 300; t <= 1_500; t += 300) {
      b.now = t;
      b.dv.heard(1);
      b.dv.tick();
      assertTrue(b.dv.isUp(1), "data heard at " + t);
    }
    b.now = 1_500 + 350;
    b.dv.tick();
    assertFalse(b.dv.isUp(1), "silent for the dead interval");
    b.dv.heard(1); // traffic alone does not bring an adjacency up: that takes a hello
    assertFalse(b.dv.isUp(1));
    b.dv.heard(9); // not a neighbour: ignored
  }

  /**
   * Make before break: after its next hop towards a source changes, a router still takes that
   * source's broadcasts from the former next hop for a grace (the new one does not know yet that it
   * is the parent), and a neighbour that stops choosing it is still sent them for a hello interval;
   * both end with the sweep after their grace.
   */
  @Test
  void broadcastTreesAreMadeBeforeTheyAreBroken() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 2);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    // 1 has routes of its own to 3 and 5; 2 reaches 5 through us.
    RouteUpdate fromOne =
        new RouteUpdate(1, List.of(new Route(3, 9, 4, 3, false), new Route(5, 9, 4, 6, false)));
    b.dv.receive(fromOne);
    b.dv.receive(new RouteUpdate(2, List.of(new Route(5, 9, 4, INF, true))));
    assertEquals(1, b.dv.nextHop(3));
    assertArrayEquals(new int[] {2}, b.dv.children(5));
    assertEquals(0, b.dv.formerParents().length, "a first route has no former parent");

    b.now = 1_000;
    // 2 offers a shorter route to 3: the next hop moves from 1 to 2.
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 1, false))));
    assertEquals(2, b.dv.nextHop(3));
    ForwardingTable t = ForwardingTable.of(0, 16, hops(b.dv), new int[16][], b.dv.formerParents());
    Partition p = t.newPartition();
    t.broadcast(3, 1, 8, p);
    assertEquals(Partition.Drop.NONE, p.drop(), "still taken from the former next hop");
    t.broadcast(3, 2, 8, p);
    assertEquals(Partition.Drop.NONE, p.drop(), "and from the new one");
    // 2 no longer goes through us to 5: still sent to for a hello interval.
    b.dv.receive(new RouteUpdate(2, List.of(new Route(5, 9, 4, 4, false))));
    assertArrayEquals(new int[] {2}, b.dv.children(5), "a former child");

    long version = b.dv.version();
    b.now = 1_000 + DvNetwork.testConfig(16).updatePacingMs() + 3 * 100 + 1;
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(fromOne);
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 1, false))));
    b.dv.tick();
    assertTrue(b.dv.isUp(1) && b.dv.isUp(2));
    assertEquals(2, b.dv.nextHop(3));
    assertTrue(b.dv.version() > version, "the graces' end changes the trees");
    assertArrayEquals(new int[0], b.dv.children(5));
    assertEquals(0, b.dv.formerParents().length);
    t = ForwardingTable.of(0, 16, hops(b.dv), new int[16][], b.dv.formerParents());
    t.broadcast(3, 1, 8, p);
    assertEquals(Partition.Drop.NOT_ON_TREE, p.drop(), "the former next hop no longer");
  }

  /**
   * The graces are kept by entry (destination and neighbour slot): a neighbour added while they run
   * moves every entry to a wider layout, each grace stays with its own neighbour, and a sweep ends
   * those that are due and no other.
   */
  @Test
  void graceStaysWithItsNeighbourWhenANeighbourIsAdded() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 2);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(
        new RouteUpdate(1, List.of(new Route(3, 9, 4, 3, false), new Route(5, 9, 4, 6, false))));
    b.dv.receive(new RouteUpdate(2, List.of(new Route(5, 9, 4, INF, true))));
    long parentGrace = DvNetwork.testConfig(16).updatePacingMs() + 2 * 100;
    long childGrace = 100;
    b.now = 1_000 - parentGrace + 10; // 3's next hop moves from 1 to 2: a grace until 1,010
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 1, false))));
    b.now = 1_000; // 5's next hop moves to 2, which stops choosing this router: until 1,100
    b.dv.receive(new RouteUpdate(2, List.of(new Route(5, 9, 4, 4, false))));
    assertArrayEquals(new int[] {2}, b.dv.children(5), "a former child");

    b.dv.addLink(b.face(4), 4); // a third slot for every destination
    b.dv.receive(new Hello(4, 9, 5));
    assertTrue(b.dv.isUp(4));

    // The first sweep after 3's grace: that one ends, 5's two go on, each on its own neighbour (4
    // is a tentative child of 5 now: offered a route, it has said nothing yet).
    b.now = 1_000 + childGrace / 2;
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.tick();
    assertTrue(
        Arrays.stream(b.dv.children(5)).anyMatch(c -> c == 2),
        () -> "2 still a former child: " + Arrays.toString(b.dv.children(5)));
    assertEquals(
        List.of("5<-1"),
        Arrays.stream(b.dv.formerParents()).map(f -> f[0] + "<-" + f[1]).sorted().toList(),
        "5's broadcasts still taken from 1, 3's no longer");

    b.now = 1_000 + parentGrace + 1;
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(new Hello(4, 9, 5));
    b.dv.tick();
    assertFalse(Arrays.stream(b.dv.children(5)).anyMatch(c -> c == 2), "2's grace has ended");
    assertEquals(0, b.dv.formerParents().length);
  }

  /**
   * A neighbour that says it has no route to a destination is sent its broadcasts from the moment
   * it is offered one (a tentative child), until it says anything else or a grace passes; periodic
   * updates do not make it one again, a new "no route" does, and a route through another neighbour
   * keeps it one for a former parent's grace (that word may have crossed the offer).
   */
  @Test
  void aNeighbourWithoutARouteIsSentBroadcastsFromTheOffer() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 2);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    RouteUpdate fromOne =
        new RouteUpdate(
            1,
            List.of(
                new Route(0, 5, 0, INF, true),
                new Route(3, 9, 4, 2, false),
                new Route(4, 9, 4, 2, false)));
    b.dv.receive(fromOne);
    assertArrayEquals(
        new int[] {1, 2}, b.dv.children(0), "1 a child, 2 (nothing heard yet) a tentative one");
    b.dv.receive(new RouteUpdate(2, List.of(new Route(0, 5, 0, INF, true))));
    assertArrayEquals(new int[] {1, 2}, b.dv.children(0));
    assertArrayEquals(new int[] {2}, b.dv.children(3), "offered 3, and 2 has said nothing of it");
    assertArrayEquals(new int[] {2}, b.dv.children(4));
    RouteUpdate fromTwo =
        new RouteUpdate(2, List.of(new Route(0, 5, 0, INF, true), new Route(3, 9, 4, INF, true)));
    b.dv.receive(fromTwo);
    assertArrayEquals(new int[] {2}, b.dv.children(3), "it took the offer: a child");

    // 2 says nothing of 4: the grace (350 + 25 + 2 * 100 ms) ends, and the periodic full updates
    // (every 400 ms less jitter) do not start it again.
    for (long t = 100; t <= 1_200; t += 100) {
      b.now = t;
      b.dv.receive(new Hello(1, 7, 5));
      b.dv.receive(new Hello(2, 8, 5));
      b.dv.receive(fromOne);
      b.dv.receive(fromTwo);
      b.dv.tick();
      assertArrayEquals(
          t < 575 ? new int[] {2} : new int[0], b.dv.children(4), "children of 4 at " + t);
    }
    assertArrayEquals(new int[] {2}, b.dv.children(3));

    // A route of its own, then "no route" again: a tentative child again.
    b.dv.receive(new RouteUpdate(2, List.of(new Route(4, 9, 4, 3, false))));
    assertArrayEquals(new int[0], b.dv.children(4));
    b.dv.receive(new RouteUpdate(2, List.of(new Route(4, 9, 4, INF, false))));
    assertArrayEquals(new int[] {2}, b.dv.children(4), "a retraction while it holds our offer");
    // A route through another neighbour: still sent to for 25 + 2 * 100 ms.
    b.dv.receive(new RouteUpdate(2, List.of(new Route(4, 9, 4, 3, false))));
    assertArrayEquals(new int[] {2}, b.dv.children(4), "that word may have crossed the offer");
    b.now = 1_200 + 300;
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(fromOne);
    b.dv.receive(fromTwo);
    b.dv.tick();
    assertArrayEquals(new int[0], b.dv.children(4));

    b.dv.linkDown(2);
    assertArrayEquals(new int[0], b.dv.children(3), "a neighbour that is down is no child");
  }

  private static int[] hops(DistanceVector dv) {
    int[] h = new int[16];
    java.util.Arrays.fill(h, -1);
    for (int r : dv.reachable()) {
      h[r] = dv.nextHop(r);
    }
    return h;
  }

  @Test
  void poisonedReverseSplitHorizonAndSeqnoRequestsForSelf() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 2);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.sent.clear();
    b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, 2, false))));
    assertEquals(1, b.dv.nextHop(3));
    assertEquals(3, b.dv.metric(3));
    // The triggered update: poisoned towards 1 (our next hop), metric 3 towards 2.
    assertEquals(
        List.of(
            new RouteUpdate(0, List.of(new Route(3, 9, 4, INF, true))),
            new RouteUpdate(0, List.of(new Route(3, 9, 4, 3, false)))),
        b.sentOf(RouteUpdate.class));
    long version = b.dv.version();
    int changes = b.changes;
    b.dv.receive(new RouteUpdate(2, List.of(new Route(0, 5, 0, INF, true))));
    // 1's table did not mention 0 and was offered our route: a tentative child of ours.
    assertArrayEquals(new int[] {1, 2}, b.dv.children(0));
    assertEquals(version + 1, b.dv.version(), "a children change bumps the version");
    assertEquals(changes + 1, b.changes, "and tells the listener once");
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(new RouteUpdate(2, List.of(new Route(0, 5, 0, INF, true))));
    assertEquals(version + 1, b.dv.version(), "a hello or an unchanged route changes nothing");
    b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, 2, false))));
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, INF, true))));
    assertArrayEquals(new int[] {2}, b.dv.children(3), "2 reaches 3 through us");
    assertArrayEquals(new int[0], b.dv.children(4));

    // A request for ourselves, not older than our seq: bump past it and tell everyone.
    b.sent.clear();
    b.dv.receive(new SeqnoRequest(1, 0, 5, 0, 10));
    assertEquals(1, b.dv.seqno());
    assertEquals(2, b.sentOf(RouteUpdate.class).size());
    assertTrue(
        b.sentOf(RouteUpdate.class).stream()
            .allMatch(u -> u.routes().equals(List.of(new Route(0, 5, 1, 0, false)))));
    // An older request is answered with our route, no bump.
    b.sent.clear();
    b.dv.receive(new SeqnoRequest(2, 0, 5, 0, 10));
    assertEquals(1, b.dv.seqno());
    assertEquals(
        List.of(new RouteUpdate(0, List.of(new Route(0, 5, 1, 0, false)))),
        b.sentOf(RouteUpdate.class));

    // A request for 3 that our route (seq 9/4) does not satisfy goes on to the next hop, not back.
    b.sent.clear();
    b.dv.receive(new SeqnoRequest(2, 3, 9, 4, 10));
    assertEquals(List.of(new SeqnoRequest(0, 3, 9, 4, 9)), b.sent);
    b.sent.clear();
    b.dv.receive(new SeqnoRequest(2, 3, 9, 4, 10));
    assertEquals(List.of(), b.sent, "the same request again within a hello interval is dropped");
    b.sent.clear();
    b.dv.receive(new SeqnoRequest(2, 3, 9, 3, 10));
    assertEquals(
        List.of(new RouteUpdate(0, List.of(new Route(3, 9, 4, 3, false)))),
        b.sent,
        "a request our route satisfies is answered with it");
  }

  @Test
  void infeasibleRouteIsRejectedAndRequested() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 1);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, 1, false))));
    assertEquals(2, b.dv.metric(3)); // FD = (9/4, 2)
    b.sent.clear();
    b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, INF, false))));
    assertEquals(-1, b.dv.nextHop(3));
    assertTrue(b.sent.contains(new SeqnoRequest(0, 3, 9, 4, 64)), "lost route: request");
    assertTrue(
        b.sentOf(RouteUpdate.class).stream()
            .allMatch(u -> u.routes().equals(List.of(new Route(3, 9, 4, INF, false)))),
        "retraction to every neighbour");
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 2, false))));
    assertEquals(-1, b.dv.nextHop(3), "(9/4, 2) is not better than FD (9/4, 2): unfeasible");
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 1, false))));
    assertEquals(2, b.dv.nextHop(3), "(9/4, 1) is feasible");
    b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 5, 7, false))));
    assertEquals(2, b.dv.nextHop(3));
    assertEquals(8, b.dv.metric(3), "a newer seq is always feasible");
  }

  /**
   * Selection after a route heard looks at the selected entry and the one heard, not at every
   * entry: after each route that changes an entry, its choice is the one a look at every entry
   * makes, through better and worse routes, retractions and poisoned routes, older and newer seqnos
   * (unfeasible routes and FD moves), selected routes that expired before the sweep took them out,
   * and ties between neighbours of equal cost.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void aRouteHeardSelectsWhatALookAtEveryEntryWould(long seed) {
    Bench b = new Bench(0, 5);
    int neighbours = 12;
    for (int n = 1; n <= neighbours; n++) {
      b.dv.addLink(b.face(n), 1 + (n * 7) % 4); // costs 1..4, several neighbours each
    }
    for (int n = 1; n <= neighbours; n++) {
      b.dv.receive(new Hello(n, 100 + n, 5));
    }
    assertFalse(b.dv.holdingDown());
    Random rnd = new Random(seed);
    int[] seqno = new int[16];
    Route[][] last = new Route[neighbours + 1][16];
    int moves = 0;
    int retracted = 0;
    for (int step = 0; step < 6_000; step++) {
      if (rnd.nextInt(40) == 0) {
        // A hello interval: the sweep takes out the routes not heard for the route expiry.
        b.now += 100;
        for (int n = 1; n <= neighbours; n++) {
          b.dv.receive(new Hello(n, 100 + n, 5));
        }
        b.dv.tick();
      } else {
        b.now += rnd.nextInt(30); // routes expire between sweeps, and are still held
      }
      int n = 1 + rnd.nextInt(neighbours);
      int d = 13 + rnd.nextInt(3);
      if (rnd.nextInt(40) == 0) {
        seqno[d]++;
      }
      int s = Math.max(0, seqno[d] - (rnd.nextInt(6) == 0 ? 1 : 0));
      int metric = rnd.nextInt(6) == 0 ? INF : 1 + rnd.nextInt(6);
      Route r = new Route(d, 9, s, metric, metric == INF && rnd.nextBoolean());
      int before = b.dv.nextHop(d);
      b.dv.receive(new RouteUpdate(n, List.of(r)));
      // Selection runs for d when the entry changes, but a retraction for an entry not held (one
      // the sweep took out) is dropped: it changes nothing, and d may still hold an expired route.
      if (!r.equals(last[n][d]) && (metric < INF || r.viaReceiver())) {
        assertEquals(
            b.dv.selectionByFullLook(d), b.dv.nextHop(d), "seed " + seed + " step " + step);
      }
      last[n][d] = r;
      moves += before != b.dv.nextHop(d) ? 1 : 0;
      retracted += before >= 0 && b.dv.nextHop(d) < 0 ? 1 : 0;
    }
    assertTrue(moves > 200, "selections moved " + moves + " times");
    assertTrue(retracted > 10, "destinations lost their route " + retracted + " times");
  }

  @Test
  void timersExpireRoutesEndRetractionsAndForgetFeasibilityDistances() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.addLink(b.face(2), 1);
    b.dv.receive(new Hello(1, 7, 5));
    b.dv.receive(new Hello(2, 8, 5));
    b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, 1, false))));
    b.dv.receive(new RouteUpdate(2, List.of(new Route(4, 9, 1, 0, false))));
    assertEquals(2, b.dv.metric(3));
    assertEquals(2, b.dv.nextHop(4));
    long versionAt1500 = -1;
    for (long t = 100; t <= 4_100; t += 100) {
      while (b.dv.nextDeadlineMillis() < t) {
        b.now = b.dv.nextDeadlineMillis();
        b.dv.tick();
      }
      b.now = t;
      b.dv.receive(new Hello(1, 7, 5));
      b.dv.receive(new Hello(2, 8, 5));
      if (t < 1_000 && t % 300 == 0) {
        b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, 1, false))));
      } else if (t == 1_000) {
        b.dv.receive(new RouteUpdate(1, List.of(new Route(3, 9, 4, INF, false))));
      }
      if (t >= 1_000 && t % 300 == 0) {
        // An unfeasible route: (9/4, 5) is worse than FD (9/4, 2).
        b.dv.receive(new RouteUpdate(2, List.of(new Route(3, 9, 4, 5, false))));
      }
      b.dv.tick();
      String at = "t=" + t;
      if (t == 1_200) {
        assertEquals(2, b.dv.nextHop(4), at);
      }
      if (t == 1_400) {
        assertEquals(-1, b.dv.nextHop(4), "route to 4 not refreshed for 1300 ms expired");
      }
      if (t >= 1_000 && t < 4_000) {
        assertEquals(-1, b.dv.nextHop(3), at + ": only an unfeasible route, FD still held");
      }
      if (t == 1_500) {
        versionAt1500 = b.dv.version();
      }
      if (t == 3_900) {
        assertEquals(versionAt1500, b.dv.version(), "hellos and refreshes change nothing");
      }
    }
    assertEquals(2, b.dv.nextHop(3), "FD forgotten 3000 ms after the loss: the route is feasible");
    assertEquals(6, b.dv.metric(3));

    List<Sent> toOne = b.sentTo.stream().filter(x -> x.to() == 1).toList();
    Route retraction = new Route(3, 9, 4, INF, false);
    assertTrue(
        toOne.stream()
            .anyMatch(
                x ->
                    x.at() > 1_800
                        && x.at() < 2_300
                        && x.message() instanceof RouteUpdate u
                        && u.routes().contains(retraction)),
        "periodic updates repeat the retraction");
    assertTrue(
        toOne.stream()
            .filter(x -> x.at() > 2_400 && x.at() < 4_000)
            .allMatch(
                x ->
                    !(x.message() instanceof RouteUpdate u)
                        || u.routes().stream().noneMatch(r -> r.destination() == 3)),
        "after the route expiry the retraction is no longer mentioned");
    assertTrue(
        toOne.stream()
            .anyMatch(x -> x.at() > 2_400 && x.at() < 4_000 && x.message() instanceof RouteUpdate),
        "periodic updates went on");
    long requests =
        b.sentTo.stream()
            .filter(x -> x.to() == 2 && x.message().equals(new SeqnoRequest(0, 3, 9, 4, 64)))
            .count();
    assertTrue(requests >= 5 && requests <= 31, "requests repeated, at most one per 100 ms");
  }

  // ------------------------------------------------------------------ simulated networks

  private static void assertConverged(DvNetwork net) {
    for (int d = 0; d < net.size; d++) {
      assertConverged(net, d);
    }
  }

  /** Every live router's route to d is a shortest path (or none if d is out of reach). */
  private static void assertConverged(DvNetwork net, int d) {
    {
      long[] dist = net.distancesTo(d);
      for (int r = 0; r < net.size; r++) {
        if (!net.alive(r)) {
          continue;
        }
        DistanceVector dv = net.router(r);
        String where = "router " + r + " to " + d + " at t=" + net.now();
        if (dist[r] == Long.MAX_VALUE) {
          assertEquals(-1, dv.nextHop(d), where);
          assertEquals(INF, dv.metric(d), where);
          continue;
        }
        assertEquals(dist[r], dv.metric(d), where);
        int nh = dv.nextHop(d);
        if (r == d) {
          assertEquals(r, nh, where);
        } else {
          assertEquals(dist[r], net.cost(r, nh) + dist[nh], where + ": next hop " + nh);
        }
      }
    }
  }

  private static DvNetwork line(int n) {
    DvNetwork net = new DvNetwork(n, DvNetwork.testConfig(n));
    for (int i = 0; i + 1 < n; i++) {
      net.connect(i, i + 1, 3 + i);
    }
    return net;
  }

  @Test
  void restartedNeighbourIsResetAndItsOldRoutesAreNotKept() {
    DvNetwork net = line(3);
    net.startAll();
    net.runFor(2_000);
    assertConverged(net);
    List<String> atDown = new ArrayList<>();
    net.observe(
        x -> {
          if (x.alive(0) && x.events(0).contains("down 1 @1") && atDown.isEmpty()) {
            atDown.add(x.router(0).nextHop(2) + "/" + x.router(0).nextHop(1));
          }
          assertNull(x.findLoop());
        });
    long epochBefore = net.router(1).epoch();
    net.crash(1);
    net.runFor(50); // less than the dead interval: 0 learns of the restart from the new epoch
    net.start(1);
    net.runFor(2_000);
    assertEquals(List.of("up 1 @1", "down 1 @1", "up 1 @1"), net.events(0));
    assertEquals(List.of("-1/-1"), atDown, "routes through the old incarnation dropped at once");
    assertTrue(net.router(1).epoch() > epochBefore);
    assertConverged(net);
  }

  @Test
  void restartedRouterHoldsDownUntilItsNeighboursDroppedItsOldRoutes() {
    // A=0, B=1, C=2, destination 3. C reaches 3 through B; A through C. B's links to C and 3 are
    // slow, its link to A fast: right after a restart B hears A's route to 3 (through C, through
    // B's old incarnation) long before C hears that B restarted. Selecting it would close the loop
    // B -> A -> C -> B.
    DvNetwork net = new DvNetwork(4, DvNetwork.testConfig(4));
    net.connect(1, 0, 1, 5, 5);
    net.connect(0, 2, 1, 1, 1);
    net.connect(2, 1, 100, 1, 1);
    net.connect(1, 3, 100, 1, 1);
    net.startAll();
    net.runFor(3_000);
    assertConverged(net);
    assertEquals(1, net.router(2).nextHop(3));
    assertEquals(2, net.router(0).nextHop(3));
    net.observe(x -> assertNull(x.findLoop()));
    net.crash(1);
    net.runFor(10);
    net.start(1);
    net.runFor(60);
    assertTrue(net.router(1).isUp(0));
    assertTrue(net.router(1).holdingDown(), "C and 3 have not echoed the new epoch yet");
    assertEquals(-1, net.router(1).nextHop(3));
    net.runFor(3_000);
    assertFalse(net.router(1).holdingDown());
    assertConverged(net);
  }

  @Test
  void convergesOnALine() {
    DvNetwork net = line(6);
    net.startAll();
    net.runFor(3_000);
    assertConverged(net);
    assertArrayEquals(new int[] {1, 2, 3, 4, 5}, net.router(0).reachable());
    assertEquals(5, net.router(0).metric(5));
  }

  @Test
  void convergesOnARingWithAsymmetricCosts() {
    DvNetwork net = new DvNetwork(7, DvNetwork.testConfig(7));
    for (int i = 0; i < 7; i++) {
      net.connect(i, (i + 1) % 7, 2 + i, 1 + i, 8 - i);
    }
    net.startAll();
    net.runFor(3_000);
    assertConverged(net);
  }

  @Test
  void convergesOnASquareWithADiagonal() {
    DvNetwork net = new DvNetwork(4, DvNetwork.testConfig(4));
    net.connect(0, 1, 5, 1, 1);
    net.connect(1, 2, 5, 1, 1);
    net.connect(2, 3, 5, 1, 1);
    net.connect(3, 0, 5, 1, 1);
    net.connect(0, 2, 5, 3, 3);
    net.startAll();
    net.runFor(3_000);
    assertConverged(net);
    assertEquals(2, net.router(0).metric(2));
    net.setCost(0, 2, 1);
    net.runFor(3_000);
    assertConverged(net);
    assertEquals(2, net.router(0).nextHop(2));
    assertEquals(1, net.router(0).metric(2));
  }

  private static DvNetwork randomGraph(Random rnd, int n, int extraEdges, int maxCost) {
    DvNetwork net = new DvNetwork(n, DvNetwork.testConfig(n));
    for (int i = 1; i < n; i++) {
      int j = rnd.nextInt(i);
      net.connect(i, j, 1 + rnd.nextInt(30), 1 + rnd.nextInt(maxCost), 1 + rnd.nextInt(maxCost));
    }
    for (int k = 0; k < extraEdges; k++) {
      int a = rnd.nextInt(n);
      int b = rnd.nextInt(n);
      if (a != b && net.link(a, b) == null) {
        net.connect(a, b, 1 + rnd.nextInt(30), 1 + rnd.nextInt(maxCost), 1 + rnd.nextInt(maxCost));
      }
    }
    return net;
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void convergesOnARandomGraphAndChildrenFormShortestPathTrees(long seed) {
    DvNetwork net = randomGraph(new Random(seed), 30, 30, 10);
    net.startAll();
    net.runFor(6_000);
    assertConverged(net);
    assertChildrenTrees(net);
  }

  private static void assertChildrenTrees(DvNetwork net) {
    for (int s = 0; s < net.size; s++) {
      int[] parents = new int[net.size];
      java.util.Arrays.fill(parents, -1);
      for (int p = 0; p < net.size; p++) {
        if (!net.alive(p)) {
          continue;
        }
        for (int c : net.router(p).children(s)) {
          assertEquals(-1, parents[c], "router " + c + " is a child of two routers towards " + s);
          parents[c] = p;
        }
      }
      for (int r = 0; r < net.size; r++) {
        if (!net.alive(r) || r == s || net.router(r).nextHop(s) < 0) {
          assertEquals(-1, parents[r], "unreachable router " + r + " has a parent towards " + s);
          continue;
        }
        assertEquals(net.router(r).nextHop(s), parents[r], "parent of " + r + " towards " + s);
      }
    }
  }

  @Test
  void convergesOnTwoHundredRouters() {
    Random rnd = new Random(200);
    DvNetwork net = randomGraph(rnd, 200, 200, 10);
    net.startAll();
    net.runFor(3_000);
    for (int k = 0; k < 20; k++) {
      assertConverged(net, rnd.nextInt(net.size));
    }
    assertEquals(199, net.router(rnd.nextInt(net.size)).reachable().length);
    assertEquals(0, net.requestsDelivered, "a cold start needs no seqno request");
  }

  @Test
  void reconvergesAfterLinkDownSilentFailureAndRecovery() {
    DvNetwork net = randomGraph(new Random(7), 20, 20, 5);
    net.startAll();
    net.observe(x -> assertNull(x.findLoop()));
    net.runFor(5_000);
    assertConverged(net);
    List<DvNetwork.Link> links = net.links();
    DvNetwork.Link a = links.get(3);
    DvNetwork.Link b = links.get(11);
    net.linkDown(a.a, a.b);
    net.runFor(3_000);
    assertConverged(net);
    net.cut(b.a, b.b);
    net.runFor(3_000);
    assertFalse(net.router(b.a).isUp(b.b), "the dead interval noticed the silent failure");
    assertConverged(net);
    net.restore(a.a, a.b);
    net.restore(b.a, b.b);
    net.runFor(3_000);
    assertConverged(net);
    assertChildrenTrees(net);
  }

  @Test
  void partitionRetractsAndExpiresRoutes() {
    DvNetwork net = line(4);
    net.startAll();
    net.runFor(2_000);
    assertConverged(net);
    net.cut(1, 2);
    net.runFor(400); // dead interval 350 ms: adjacency down, retractions sent
    assertFalse(net.router(1).isUp(2));
    assertEquals(INF, net.router(0).metric(3));
    assertEquals(-1, net.router(0).nextHop(2));
    assertArrayEquals(new int[] {1}, net.router(0).reachable());
    assertArrayEquals(new int[] {2}, net.router(3).reachable());
    net.runFor(5_000); // past route expiry and source GC
    assertConverged(net);
    assertArrayEquals(new int[] {1}, net.router(0).reachable());
    net.restore(1, 2);
    net.runFor(2_000);
    assertConverged(net);
  }

  @Test
  void longerPathAfterFailureIsAcceptedThroughSeqnoRequest() {
    // 0-1-2 cheap, 0-3-2 expensive and initially silent; FD at 0 for 2 is (seq, 2).
    DvNetwork net = new DvNetwork(4, DvNetwork.testConfig(4));
    net.connect(0, 1, 5, 1, 1);
    net.connect(1, 2, 5, 1, 1);
    net.connect(0, 3, 5, 10, 10);
    net.connect(3, 2, 5, 10, 10);
    net.cut(0, 3);
    net.cut(3, 2);
    net.startAll();
    net.observe(x -> assertNull(x.findLoop()));
    net.runFor(2_000);
    assertEquals(2, net.router(0).metric(2));
    int seqBefore = net.router(2).seqno();

    net.linkDown(1, 2);
    net.runFor(300);
    assertEquals(-1, net.router(0).nextHop(2), "partitioned");
    net.restore(0, 3);
    net.restore(3, 2);
    net.runFor(1_000); // well before source GC (3 s): only a seqno request can make it feasible
    assertEquals(3, net.router(0).nextHop(2));
    assertEquals(20, net.router(0).metric(2));
    assertTrue(net.router(2).seqno() > seqBefore, "2 bumped its seqno on request");
    assertConverged(net);

    // Same on a square: the surviving path is longer than FD and reachable at once.
    net.restore(1, 2);
    net.runFor(2_000);
    assertConverged(net);
    net.linkDown(1, 2);
    net.runFor(1_000);
    assertEquals(20, net.router(0).metric(2));
    assertConverged(net);
  }

  @ParameterizedTest
  @ValueSource(longs = {11, 12, 13})
  void noRoutingLoopUnderRandomFailuresCrashesAndCostChanges(long seed) {
    Random rnd = new Random(seed);
    int n = 20 + rnd.nextInt(21);
    DvNetwork net = randomGraph(rnd, n, n, 8);
    net.startAll();
    long[] checks = {0, 0};
    // Next hops change only in events that bump the version of the router they ran on (a crash
    // removes next hops, a fresh start has none), so checking after those is checking after all.
    net.observe(
        x -> {
          checks[0]++;
          if (x.lastEventChangedRoutes()) {
            checks[1]++;
            String loop = x.findLoop();
            if (loop != null) {
              fail(loop);
            }
          }
        });
    List<DvNetwork.Link> links = net.links();
    List<DvNetwork.Link> broken = new ArrayList<>();
    List<Integer> crashed = new ArrayList<>();
    for (int step = 0; step < 250; step++) {
      int kind = rnd.nextInt(10);
      if (kind < 3) {
        DvNetwork.Link l = links.get(rnd.nextInt(links.size()));
        if (l.working) {
          if (rnd.nextBoolean()) {
            net.linkDown(l.a, l.b);
          } else {
            net.cut(l.a, l.b);
          }
          broken.add(l);
        }
      } else if (kind < 6 && !broken.isEmpty()) {
        DvNetwork.Link l = broken.remove(rnd.nextInt(broken.size()));
        net.restore(l.a, l.b);
      } else if (kind == 6) {
        int r = rnd.nextInt(n);
        if (net.alive(r)) {
          net.crash(r);
          if (rnd.nextBoolean()) {
            net.runFor(rnd.nextInt(100)); // back before its neighbours time it out
            net.start(r);
          } else {
            crashed.add(r);
          }
        }
      } else if (kind == 7 && !crashed.isEmpty()) {
        net.start(crashed.remove(rnd.nextInt(crashed.size())));
      } else {
        DvNetwork.Link l = links.get(rnd.nextInt(links.size()));
        int from = rnd.nextBoolean() ? l.a : l.b;
        net.setCost(from, from == l.a ? l.b : l.a, 1 + rnd.nextInt(8));
      }
      net.runFor(rnd.nextInt(rnd.nextInt(4) == 0 ? 1_500 : 200));
    }
    for (DvNetwork.Link l : broken) {
      net.restore(l.a, l.b);
    }
    for (int r : crashed) {
      net.start(r);
    }
    net.runFor(8_000);
    assertConverged(net);
    assertChildrenTrees(net);
    assertTrue(checks[0] > 50_000, "events: " + checks[0]);
    assertTrue(checks[1] > 1_000, "events that changed routes: " + checks[1]);
  }

  @Test
  void fullUpdatesComeEveryIntervalLessAJitterThatSpreadsRoutersStartedTogether() {
    Set<Long> firstGaps = new TreeSet<>();
    for (int self = 0; self < 8; self++) {
      Bench b = new Bench(self, 5);
      int n = self == 1 ? 2 : 1;
      b.dv.addLink(b.face(n), 1);
      b.dv.receive(new Hello(n, 7, 5)); // up at time 0: the first full update goes at once
      for (b.now = 1; b.now <= 2_000; b.now++) {
        if (b.now % 100 == 0) {
          b.dv.receive(new Hello(n, 7, 5));
        }
        b.dv.tick();
      }
      List<Long> at =
          b.sentTo.stream().filter(x -> x.message() instanceof RouteUpdate).map(Sent::at).toList();
      assertTrue(at.size() >= 5, "full updates: " + at);
      for (int i = 1; i < at.size(); i++) {
        long gap = at.get(i) - at.get(i - 1);
        assertTrue(gap >= 300 && gap <= 400, "router " + self + ": " + at);
      }
      firstGaps.add(at.get(1) - at.get(0));
    }
    assertTrue(firstGaps.size() > 1, "routers started together spread out: " + firstGaps);
  }

  @Test
  void fullUpdateOfAThousandRoutesFromFourNeighbours() {
    RoutingConfig config = DvNetwork.testConfig(1_024);
    long[] now = {0};
    int[] sent = {0};
    DistanceVector dv = new DistanceVector(0, 1, config, () -> now[0], TestFaces.QUIET);
    for (int nb = 1; nb <= 4; nb++) {
      dv.addLink(TestFaces.face(nb, m -> sent[0]++), nb);
      dv.receive(new Hello(nb, 100 + nb, 1));
    }
    for (int round = 0; round < 3; round++) {
      for (int nb = 1; nb <= 4; nb++) {
        List<Route> routes = new ArrayList<>();
        for (int d = 1; d < 1_000; d++) {
          routes.add(new Route(d, 7, round, d == nb ? 0 : 10 + (d + nb) % 5, false));
        }
        dv.receive(new RouteUpdate(nb, routes));
      }
    }
    assertEquals(999, dv.reachable().length);
    for (int d = 5; d < 1_000; d++) {
      // candidate via nb = 10 + (d + nb) % 5 + nb
      int best = Integer.MAX_VALUE;
      for (int nb = 1; nb <= 4; nb++) {
        best = Math.min(best, 10 + (d + nb) % 5 + nb);
      }
      assertEquals(best, dv.metric(d), "destination " + d);
    }
  }

  // ------------------------------------------------------------------ digests

  @Test
  void aQuietNetworkKeepsItsRoutesOnDigestsAlone() {
    for (boolean digests : new boolean[] {true, false}) {
      DvNetwork net = randomGraph(new Random(7), 12, 6, 5);
      net.digests = digests;
      net.startAll();
      net.runFor(3_000);
      assertConverged(net);
      long routes = net.routesDelivered;
      long digestsBefore = net.digestsDelivered;
      // Ten route expiries (1.3 s each) with nothing changing.
      net.runFor(13_000);
      assertConverged(net);
      long quietRoutes = net.routesDelivered - routes;
      long quietDigests = net.digestsDelivered - digestsBefore;
      int links = net.links().size();
      if (digests) {
        assertEquals(0, quietRoutes, "routes sent while nothing changed");
        // A full update every 300..400 ms per direction of each link: at least 32 in 13 s.
        assertTrue(quietDigests >= 2L * links * 32, "digests: " + quietDigests);
        assertEquals(0, net.tableRequestsDelivered, "every digest agreed");
        long sent = 0;
        long agreed = 0;
        for (int r = 0; r < net.size; r++) {
          sent += net.router(r).digestsSent();
          agreed += net.router(r).digestsAgreed();
          assertEquals(0, net.router(r).digestsDisagreed());
        }
        assertTrue(sent >= net.digestsDelivered && sent - net.digestsDelivered <= 2L * links);
        assertEquals(net.digestsDelivered, agreed);
      } else {
        assertEquals(0, quietDigests);
        assertTrue(quietRoutes >= 2L * links * 32 * 11, "full updates: " + quietRoutes);
      }
    }
  }

  @Test
  void aDigestThatDisagreesBringsTheFullTable() {
    DvNetwork net = line(4);
    net.startAll();
    net.runFor(3_000);
    assertConverged(net);
    assertEquals(3, net.router(0).metric(3));
    // Router 1's triggered update about 3 is lost on the way to 0; the adjacency stays up.
    net.cut(0, 1);
    net.setCost(2, 3, 5);
    net.runFor(150);
    net.restore(0, 1);
    assertEquals(3, net.router(0).metric(3), "router 0 missed the change");
    assertEquals(0, net.tableRequestsDelivered);
    net.runFor(1_000);
    assertTrue(net.router(0).digestsDisagreed() >= 1, "router 0 found its routes stale");
    assertTrue(net.tableRequestsDelivered >= 1);
    assertTrue(net.router(1).tablesRequested() >= 1);
    assertEquals(7, net.router(0).metric(3));
    assertConverged(net);
  }

  @Test
  void aDigestRefreshesTheRoutesItAgreesWith() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.receive(new Hello(1, 7, 5));
    List<Route> routes = new ArrayList<>();
    for (int d = 1; d < 6; d++) {
      routes.add(new Route(d, 7, 2, d == 1 ? 0 : d, false));
    }
    routes.add(new Route(0, 5, 0, INF, true)); // to us, through us
    routes.add(new Route(6, 7, 3, INF, false)); // a retraction: not in digests
    b.dv.receive(new RouteUpdate(1, routes));
    long hash = 0;
    for (Route r : routes.subList(0, 6)) {
      hash +=
          RouteDigest.routeHash(r.destination(), r.epoch(), r.seqno(), r.metric(), r.viaReceiver());
    }
    for (b.now = 1; b.now <= 4_000; b.now++) {
      if (b.now % 100 == 0) {
        b.dv.receive(new Hello(1, 7, 5));
      }
      if (b.now % 1_000 == 0) {
        b.dv.receive(new RouteDigest(1, 6, hash));
      }
      b.dv.tick();
    }
    assertEquals(5, b.dv.reachable().length, "refreshed by digests past three route expiries");
    assertEquals(4, b.dv.digestsAgreed());
    assertTrue(b.sentOf(TableRequest.class).isEmpty());

    b.dv.receive(new RouteDigest(1, 6, hash + 1));
    b.dv.receive(new RouteDigest(1, 5, hash));
    assertEquals(2, b.sentOf(TableRequest.class).size());
    assertEquals(2, b.dv.digestsDisagreed());
    // Without a digest that agrees, the routes expire.
    for (long end = b.now + 1_500; b.now <= end; b.now++) {
      if (b.now % 100 == 0) {
        b.dv.receive(new Hello(1, 7, 5));
      }
      b.dv.tick();
    }
    assertEquals(0, b.dv.reachable().length);
  }

  @Test
  void tableRequestsAreServedAtMostOncePerHelloInterval() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.acceptsDigests(1, true);
    b.dv.receive(new Hello(1, 7, 5)); // up at time 0: the full table goes at once
    assertEquals(1, b.sentOf(RouteUpdate.class).size());
    for (b.now = 1; b.now <= 250; b.now++) {
      if (b.now % 10 == 0 && b.now < 100) {
        b.dv.receive(new TableRequest(1));
      }
      b.dv.tick();
    }
    // Nine requests within the first hello interval: one more full table, at its end.
    List<Long> fulls =
        b.sentTo.stream().filter(x -> x.message() instanceof RouteUpdate).map(Sent::at).toList();
    assertEquals(List.of(0L, 100L), fulls);
    assertEquals(9, b.dv.tablesRequested());
    b.dv.receive(new TableRequest(1)); // 150 ms after the last: at once
    assertEquals(3, b.sentOf(RouteUpdate.class).size());
    // The periodic update that follows changed nothing: a digest of the one route, to us.
    for (; b.now <= 800; b.now++) {
      if (b.now % 100 == 0) {
        b.dv.receive(new Hello(1, 7, 5));
      }
      b.dv.tick();
    }
    List<RouteDigest> digests = b.sentOf(RouteDigest.class);
    assertFalse(digests.isEmpty(), "periodic updates as digests");
    assertEquals(new RouteDigest(0, 1, RouteDigest.routeHash(0, 5, 0, 0, false)), digests.get(0));
    assertEquals(3, b.sentOf(RouteUpdate.class).size());

    // Our own seqno moves: sent at once, and the next digest stands for the new route.
    b.dv.resign();
    assertEquals(4, b.sentOf(RouteUpdate.class).size());
    int before = b.sentOf(RouteDigest.class).size();
    for (long end = b.now + 500; b.now <= end; b.now++) {
      if (b.now % 100 == 0) {
        b.dv.receive(new Hello(1, 7, 5));
      }
      b.dv.tick();
    }
    digests = b.sentOf(RouteDigest.class);
    assertTrue(digests.size() > before, "a digest after the change");
    assertEquals(
        new RouteDigest(0, 1, RouteDigest.routeHash(0, 5, 1, 0, false)), digests.getLast());
  }

  @Test
  void aNeighbourWhoseRouteExpiresAfterAnOfferIsATentativeChildUntilItsGraceEnds() {
    Bench b = new Bench(0, 5);
    b.dv.addLink(b.face(1), 1);
    b.dv.receive(new Hello(1, 7, 5)); // up: our route to ourselves is offered to 1
    b.dv.receive(new RouteUpdate(1, List.of(new Route(0, 5, 0, INF, true))));
    assertArrayEquals(new int[] {1}, b.dv.children(0));
    boolean tentativeSeen = false;
    for (b.now = 1; b.now <= 3_000; b.now++) {
      if (b.now % 100 == 0) {
        b.dv.receive(new Hello(1, 7, 5));
      }
      b.dv.tick(); // the sweep that expires 1's word makes it tentative, and sweeps on
      if (b.now == 1_450) {
        tentativeSeen = Arrays.equals(new int[] {1}, b.dv.children(0));
      }
    }
    assertTrue(tentativeSeen, "1 said nothing more: a tentative child after its word expired");
    assertArrayEquals(new int[0], b.dv.children(0));
  }
}
