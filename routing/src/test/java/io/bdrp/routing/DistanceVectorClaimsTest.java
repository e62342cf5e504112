package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import io.bdrp.routing.DistanceVectorHandTest.Net;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Claims that a neighbour makes about another router's sequence number: the router they name moves
 * its own past them, so that a forged route cannot black-hole it, and sequence numbers never wrap.
 */
class DistanceVectorClaimsTest {
  private static final int FORGER = 9;
  private static final long FORGER_EPOCH = 99;

  /** The routes to {@code destination} that {@code sent} carries, in order. */
  private static List<Route> routesTo(List<ControlMessage> sent, int destination) {
    List<Route> out = new ArrayList<>();
    for (ControlMessage m : sent) {
      if (m instanceof RouteUpdate u) {
        for (Route r : u.routes()) {
          if (r.destination() == destination) {
            out.add(r);
          }
        }
      }
    }
    return out;
  }

  /**
   * Line 0 - 1 - 2 - 3 - 4, and a forger attached to 4 that advertises a route to 0 with 0's epoch
   * + 1 (newer than anything 0 originated, so feasible everywhere), at metric 0: routers 3 and 4
   * take it. Then the forger leaves. Routers 3 and 4 are left with a feasibility distance at the
   * forged sequence number and ask for a newer one; 0 must move past the forged claim, or they
   * refuse its genuine routes until {@code sourceGcMs} (20 s here). Guards against the origin
   * answering a request from a later epoch by bumping its seqno within its own epoch, which never
   * overtakes.
   */
  @Test
  void aForgedNewerRouteToARouterIsOvertakenAfterTheForgerLeaves() {
    Net net = new Net();
    DistanceVector o = net.start(0, 10, 1);
    net.start(1, 11, 0, 2);
    net.start(2, 12, 1, 3);
    DistanceVector r3 = net.start(3, 13, 2, 4);
    DistanceVector r4 = net.start(4, 14, 3, FORGER);
    // The forger is a neighbour of 4 driven by hand: it echoes 4's epoch and claims 0's epoch + 1.
    Route forged = new Route(0, 10 + 1, 0, 0, false);
    long t = net.now;
    for (; t <= 2_000; t += 50) {
      net.run(t);
      r4.receive(new Hello(FORGER, FORGER_EPOCH, r4.epoch()));
      r4.receive(new RouteUpdate(FORGER, List.of(forged)));
      net.flush();
    }
    assertEquals(FORGER, r4.nextHop(0), "the forged route is taken where it is shortest");
    assertEquals(4, r3.nextHop(0));

    // The forger leaves: 4 stops hearing it and times it out after the dead interval.
    long left = t;
    long bound = left + DistanceVectorHandTest.CONFIG.deadIntervalMs() + 5 * 100;
    net.run(bound);

    assertEquals(3, r4.nextHop(0), "4 reaches 0 again through 3 within a few hello intervals");
    assertEquals(4, r4.metric(0));
    assertEquals(2, r3.nextHop(0));
    assertEquals(3, r3.metric(0));
    assertTrue(
        DistanceVector.compareSeq(o.routeEpoch(), o.seqno(), forged.epoch(), forged.seqno()) > 0,
        "0's own sequence number moved past the forged one");
    assertEquals(1, o.claimsOvertaken());
    assertEquals(10, o.epoch(), "its incarnation (hellos, adjacencies) is unchanged");
  }

  /**
   * A route to a router itself that names a newer sequence number than its own makes it advertise
   * the claim's successor in the very next update. Guards against the old behaviour of storing the
   * claim and going on originating an older route.
   */
  @Test
  void aRouteToItselfWithANewerSequenceIsOvertakenInTheNextUpdate() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    a.receive(new Hello(1, 20, 10));
    net.sent.clear();
    a.receive(new RouteUpdate(1, List.of(new Route(0, 12, 5, 3, false))));
    assertEquals(List.of(new Route(0, 12, 6, 0, false)), routesTo(net.sent, 0));
    assertEquals(12, a.routeEpoch());
    assertEquals(6, a.seqno());
    assertEquals(1, a.claimsOvertaken());

    net.sent.clear();
    a.receive(new RouteUpdate(1, List.of(new Route(0, 12, 6, Route.INFINITY, true))));
    assertEquals(List.of(), routesTo(net.sent, 0), "its own current route: no claim");
    a.receive(new RouteUpdate(1, List.of(new Route(0, 11, 900, 1, false))));
    assertEquals(List.of(), routesTo(net.sent, 0), "an older one: no claim either");
  }

  /**
   * A request naming the largest seqno of the router's epoch moves it into the next epoch at seqno
   * 0, newer than what was asked, instead of overflowing to a negative seqno that every router
   * would take for older. Guards against {@code seqno = request + 1} overflowing.
   */
  @Test
  void aRequestAtTheLargestSeqnoMovesIntoTheNextEpoch() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    a.receive(new Hello(1, 20, 10));
    net.sent.clear();
    a.receive(new SeqnoRequest(1, 0, 10, Integer.MAX_VALUE, 5));
    assertEquals(List.of(new Route(0, 11, 0, 0, false)), routesTo(net.sent, 0));
    assertTrue(DistanceVector.compareSeq(11, 0, 10, Integer.MAX_VALUE) > 0);
    assertTrue(
        DistanceVector.compareSeq(10, Integer.MIN_VALUE, 10, 0) < 0,
        "no wrap: negatives are older");
  }

  /**
   * A route claim at the largest seqno is moved past the same way, and the pair with the largest
   * epoch and seqno, which has no successor, leaves the router where it is rather than wrapping.
   */
  @Test
  void aClaimAtTheLargestSeqnoIsOvertakenWithoutWrapping() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    a.receive(new Hello(1, 20, 10));
    net.sent.clear();
    a.receive(new RouteUpdate(1, List.of(new Route(0, 10, Integer.MAX_VALUE, 2, false))));
    assertEquals(List.of(new Route(0, 11, 0, 0, false)), routesTo(net.sent, 0));

    net.run(net.now + 100); // past the limit of one move per hello interval
    net.sent.clear();
    a.receive(new SeqnoRequest(1, 0, Long.MAX_VALUE, Integer.MAX_VALUE, 5));
    assertEquals(11, a.routeEpoch(), "no successor to move to");
    assertEquals(0, a.seqno());
  }

  /**
   * Claims in quick succession make the router move at most once per hello interval, past the
   * newest of them: a neighbour cannot make it flood a triggered update per forged message.
   */
  @Test
  void claimsAreMovedPastAtMostOncePerHelloInterval() {
    Net net = new Net();
    DistanceVector a = net.start(0, 10, 1);
    a.receive(new Hello(1, 20, 10));
    net.sent.clear();
    for (int s = 1; s <= 50; s++) {
      a.receive(new RouteUpdate(1, List.of(new Route(0, 11, s, 1, false))));
    }
    assertEquals(List.of(new Route(0, 11, 2, 0, false)), routesTo(net.sent, 0), "the first only");
    net.sent.clear();
    net.now += 99;
    a.tick();
    assertEquals(List.of(), routesTo(net.sent, 0), "not before a hello interval has passed");
    net.now += 1;
    assertEquals(net.now, a.nextDeadlineMillis());
    a.tick();
    assertEquals(List.of(new Route(0, 11, 51, 0, false)), routesTo(net.sent, 0), "the newest");
    assertEquals(2, a.claimsOvertaken());
  }
}
