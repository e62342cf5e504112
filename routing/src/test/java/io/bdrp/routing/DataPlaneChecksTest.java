package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.routing.DataNet.Header;
import io.bdrp.routing.DataNet.Payload;
import io.bdrp.routing.DataPlane.Drop;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the data plane checks in a DATA packet from a neighbour before it forwards or delivers it
 * (see DataPlane's "Checks on DATA from neighbours"), and which routers of D count towards the
 * broadcast threshold.
 */
class DataPlaneChecksTest {
  private static final double ALWAYS = 1e-9;

  private static Message message(String name, long value) {
    return Message.builder().put(name, value).build();
  }

  /** 0 - 1 - 2 with a host for {@code a = 1} at 1 and 2, converged. */
  private static DataNet line(double broadcastFraction, int[] hosts) {
    DataNet net =
        new DataNet(DataNet.testConfig(64).broadcastFraction(broadcastFraction).build())
            .router(0)
            .router(1)
            .router(2)
            .link(0, 1)
            .link(1, 2);
    hosts[0] = net.host(1, "a = 1");
    hosts[1] = net.host(2, "a = 1");
    net.converge();
    return net;
  }

  /**
   * A broadcast that a neighbour sends to router 1 naming router 1 itself as its source is refused
   * and counted: not delivered, not flooded down 1's tree. Guards against the old path, where a
   * broadcast of this router skipped the tree check and went to every child of its tree.
   */
  @Test
  void aBroadcastNamingTheReceiverAsItsSourceIsRefused() {
    int[] hosts = new int[2];
    DataNet net = line(ALWAYS, hosts);
    net.inject(1, 0, new Header(9, 1, 77, null), Payload.of(message("a", 1)));

    net.expectDelivered(hosts[0]);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 2), "not flooded down 1's tree");
    assertFalse(net.plane(1).lastLocal());
    net.expectOnlyDrops(1, Map.of(Drop.OWN_SOURCE, 1L));
    net.expectOnlyDrops(2, Map.of());
  }

  /**
   * A copy of D that names its receiver as its source (a forged source: a correct router never
   * sends a message back to the router it entered at) is refused and counted. Guards against its
   * delivery to the receiver's hosts and its forwarding to the rest of D.
   */
  @Test
  void aCopyOfDNamingTheReceiverAsItsSourceIsRefused() {
    int[] hosts = new int[2];
    DataNet net = line(1.0, hosts);
    net.inject(1, 0, Header.of(9, 1, 78, 1, 1, 2), Payload.of(message("a", 1)));

    net.expectDelivered(hosts[0]);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 2));
    net.expectOnlyDrops(1, Map.of(Drop.OWN_SOURCE, 1L));
  }

  /**
   * A copy of D or a broadcast whose source this router has no route to (a number with no router,
   * or one beyond maxRouters) is refused and counted as such. Guards against the delivery of a copy
   * of D from an unknown source, and against such a broadcast being counted as merely off the tree.
   */
  @Test
  void aPacketFromASourceWithoutARouteIsRefused() {
    int[] hosts = new int[2];
    DataNet net = line(1.0, hosts);
    net.inject(1, 0, Header.of(9, 50, 79, 1, 1, 2), Payload.of(message("a", 1)));
    net.inject(1, 0, Header.of(9, 5000, 80, 1, 1, 2), Payload.of(message("a", 1)));
    net.inject(1, 0, new Header(9, 50, 81, null), Payload.of(message("a", 1)));

    net.expectDelivered(hosts[0]);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 2));
    net.expectOnlyDrops(1, Map.of(Drop.UNKNOWN_SOURCE, 3L));

    // The same packets from the real source go through.
    net.inject(1, 0, Header.of(9, 0, 82, 1, 1, 2), Payload.of(message("a", 1)));
    net.expectDelivered(hosts[0], 82L);
    net.expectDelivered(hosts[1], 82L);
  }

  /**
   * A broadcast the kernel fast path passes up after sending the children their copies (marked for
   * local delivery only) is delivered to this router's hosts once and sent nowhere; the same
   * broadcast again, marked or not, is a duplicate. Guards against the router sending the copies a
   * second time, and against a second delivery when a copy the kernel took also reaches the router.
   */
  @Test
  void aBroadcastMarkedLocalOnlyIsDeliveredOnceAndSentNowhere() {
    int[] hosts = new int[2];
    DataNet net = line(ALWAYS, hosts);
    net.injectLocalOnly(1, 0, new Header(9, 0, 90, null), Payload.of(message("a", 1)));

    net.expectDelivered(hosts[0], 90L);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 2), "the kernel sent 1's child its copy");
    assertTrue(net.plane(1).lastLocal());
    net.expectOnlyDrops(1, Map.of());
    assertEquals(List.of(), net.taken(1), "the kernel's window has it: nothing to tell it");

    net.injectLocalOnly(1, 0, new Header(9, 0, 90, null), Payload.of(message("a", 1)));
    net.inject(1, 0, new Header(9, 0, 90, null), Payload.of(message("a", 1)));
    net.expectDelivered(hosts[0], 90L);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 2));
    net.expectOnlyDrops(1, Map.of(Drop.DUPLICATE, 2L));
  }

  /**
   * A broadcast that comes from a neighbour that is neither the next hop towards its source nor a
   * former one in its grace is off the tree: not delivered, not passed on, and counted. Guards
   * against a copy the tree does not carry going anywhere, and against it vanishing uncounted.
   */
  @Test
  void aBroadcastOffItsSourcesTreeIsCountedAndGoesNoFurther() {
    int[] hosts = new int[2];
    DataNet net = line(ALWAYS, hosts);
    // Router 1 reaches 2 directly: a broadcast of 2 that comes from 0 is off 2's tree at 1.
    net.inject(1, 0, new Header(9, 2, 83, null), Payload.of(message("a", 1)));

    net.expectDelivered(hosts[0]);
    net.expectDelivered(hosts[1]);
    assertEquals(List.of(), net.copies(1, 0));
    assertEquals(List.of(), net.copies(1, 2));
    assertFalse(net.plane(1).lastLocal());
    net.expectOnlyDrops(1, Map.of(Drop.NOT_ON_TREE, 1L));

    assertEquals(List.of(), net.taken(1), "off the tree: not taken");
    // The same broadcast from the next hop towards 2 is delivered and passed on to 0, and told
    // to the output once (a kernel fast path's window learns it); its duplicate is not.
    net.inject(1, 2, new Header(9, 2, 84, null), Payload.of(message("a", 1)));
    net.inject(1, 2, new Header(9, 2, 84, null), Payload.of(message("a", 1)));
    assertEquals(List.of(List.of(2L, 84L)), net.taken(1));
    net.expectDelivered(hosts[0], 84L);
    net.expectDelivered(hosts[1]);
    assertEquals(1, net.copies(1, 0).size(), "passed on to 1's child for 2");
    net.expectOnlyDrops(1, Map.of(Drop.NOT_ON_TREE, 1L, Drop.DUPLICATE, 1L));
  }

  /**
   * A forger on the link from 0 to 1 (the tree carries 0's broadcasts to 1 through it) that has
   * seen 0's broadcasts sends broadcasts of 0 with the ids it expects 0 to give next (the next 4096
   * after the last, as if ids were counted): 0's genuine broadcasts that follow are still delivered
   * at 1 and 2, none is dropped as a duplicate. Guards against predictable ids and a window that
   * marks ids before they arrive.
   */
  @Test
  void forgedBroadcastsCarryingARoutersNextIdsDoNotSuppressItsGenuineOnes() {
    int[] hosts = new int[2];
    DataNet net = line(ALWAYS, hosts);
    long last = 0;
    for (int i = 0; i < 3; i++) {
      last = net.publish(0, message("a", 1));
      assertTrue(net.published(last).broadcast());
    }
    for (long k = 1; k <= 4096; k++) {
      net.inject(1, 0, new Header(9, 0, last + k, null), Payload.of(message("b", 1)));
    }
    long[] genuine = new long[5];
    for (int i = 0; i < genuine.length; i++) {
      genuine[i] = net.publish(0, message("a", 1));
    }
    for (long id : genuine) {
      assertTrue(net.delivered(hosts[0]).contains(id), "at 1: " + id);
      assertTrue(net.delivered(hosts[1]).contains(id), "at 2: " + id);
    }
    net.expectDrops(1, Drop.DUPLICATE, 0);
    net.expectDrops(2, Drop.DUPLICATE, 0);
  }

  /**
   * Routers of D without a route do not count towards the broadcast threshold: router 0 reaches
   * only 1 and 2 once the links to 3..6 are gone, while it still holds their predicates (they
   * expire a minute later), so of D = {2, 3, 4, 5, 6} one router is reachable, not more than half
   * of the two reachable routers, and the message goes by D. Guards against counting all of D,
   * which made every such message a broadcast.
   */
  @Test
  void unreachableRoutersOfDDoNotCountTowardsTheBroadcastThreshold() {
    //   0 - 1 - 2, and 1 - 3, 1 - 4, 1 - 5, 1 - 6 until they are unlinked
    DataNet net = new DataNet(DataNet.testConfig(64).broadcastFraction(0.5).build());
    for (int r = 0; r <= 6; r++) {
      net.router(r);
    }
    net.link(0, 1);
    for (int r = 2; r <= 6; r++) {
      net.link(1, r);
    }
    int at2 = net.host(2, "a = 1");
    for (int r = 3; r <= 6; r++) {
      net.host(r, "a = 1");
    }
    net.converge();
    for (int r = 3; r <= 6; r++) {
      net.unlink(1, r);
    }
    net.runFor(2_000);
    assertEquals(2, net.node(0).routes().reachableCount());
    for (int r = 3; r <= 6; r++) {
      assertTrue(net.node(0).predicates().get(r) != null, "the predicate of " + r + " is held");
    }

    long id = net.publish(0, message("a", 1));

    assertFalse(net.published(id).broadcast(), "1 reachable router of D is not above 0.5 * 2");
    assertEquals(List.of(2, 3, 4, 5, 6), net.published(id).d());
    net.expectDelivered(at2, id);
    net.expectOnlyDrops(0, Map.of(Drop.NO_ROUTE, 4L));
  }

  /**
   * One published message in {@link DataPlane#MATCH_TIMED_EVERY} has its match timed, starting with
   * the first; the output hears -1 for the rest. Guards against two clock reads on every message
   * and against a sample that leaves out a router's first messages.
   */
  @Test
  void oneMessageInSixteenHasItsMatchTimed() {
    int[] hosts = new int[2];
    DataNet net = line(1.0, hosts);
    int n = 2 * DataPlane.MATCH_TIMED_EVERY + 1;
    for (int i = 0; i < n; i++) {
      net.publish(0, message("a", 1));
    }
    List<Long> times = net.matchNanos(0);
    assertEquals(n, times.size());
    for (int i = 0; i < n; i++) {
      boolean timed = i % DataPlane.MATCH_TIMED_EVERY == 0;
      assertEquals(timed, times.get(i) >= 0, "message " + i + ": " + times.get(i));
      if (!timed) {
        assertEquals(-1L, times.get(i), "message " + i);
      }
    }
  }
}
