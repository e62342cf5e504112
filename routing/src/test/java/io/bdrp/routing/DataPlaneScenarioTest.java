package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.routing.DataNet.Header;
import io.bdrp.routing.DataNet.Payload;
import io.bdrp.routing.DataNet.Published;
import io.bdrp.routing.DataPlane.Drop;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class DataPlaneScenarioTest {

  private static final double NEVER = 1.0;
  private static final double ALWAYS = 1e-9;

  static Stream<String> topologies() {
    return Bundled.names().stream();
  }

  /** Routers numbered 3r, so that the 42-router topology spans two words of D. */
  private static DataNet bundled(String name, RoutingConfig config) {
    Topology t = Bundled.load(name);
    return DataNet.of(t, config, r -> 3 * r);
  }

  /**
   * Hosts with the paper's predicates on random routers, then messages published at random routers.
   */
  private static void randomWorkload(DataNet net, long seed, int hostsPerRouter, int messages) {
    WorkloadGenerator gen = new WorkloadGenerator(WorkloadSpec.PAPER, seed);
    Random random = new Random(seed);
    List<Integer> routers = net.routers();
    int hosts = Math.max(3, hostsPerRouter * routers.size());
    for (int i = 0; i < hosts; i++) {
      net.host(routers.get(random.nextInt(routers.size())), gen.predicate());
    }
    net.converge();
    for (int i = 0; i < messages; i++) {
      net.publish(routers.get(random.nextInt(routers.size())), gen.message());
    }
  }

  private static Message message(String name, long value) {
    return Message.builder().put(name, value).build();
  }

  @ParameterizedTest
  @MethodSource("topologies")
  void deliveriesEqualTheOracleOnEveryBundledTopology(String name) {
    DataNet net = bundled(name, DataNet.testConfig(128).broadcastFraction(NEVER).build());
    randomWorkload(net, name.hashCode(), 2, 300);

    assertEquals(0, net.broadcasts());
    if (net.routers().size() > 1) {
      assertTrue(net.remoteDeliveries() > 0, "no message left the router it was published at");
    }

    net.expectDeliveriesMatchPredicates();
    net.expectEachRouterReceivesOnce();
    net.expectNoDrops();
  }

  @ParameterizedTest
  @MethodSource("topologies")
  void aBroadcastReachesEveryRouterExactlyOnce(String name) {
    DataNet net = bundled(name, DataNet.testConfig(128).broadcastFraction(ALWAYS).build());
    randomWorkload(net, 7 + name.hashCode(), 2, 200);

    int broadcasts = 0;
    for (var e : net.published().entrySet()) {
      long id = e.getKey();
      Published p = e.getValue();
      assertEquals(!p.d().isEmpty(), p.broadcast(), "message " + id);
      for (int r : net.routers()) {
        int want = p.broadcast() && r != p.router() ? 1 : 0;
        assertEquals(want, net.receives(r, id), "message " + id + " at router " + r);
      }
      broadcasts += p.broadcast() ? 1 : 0;
    }
    if (net.routers().size() > 1) {
      assertTrue(broadcasts > 0, "no message went out as a broadcast");
      assertTrue(net.remoteDeliveries() > 0, "no message left the router it was published at");
    }
    net.expectDeliveriesMatchPredicates();
    net.expectNoDrops();
  }

  @ParameterizedTest
  @ValueSource(doubles = {NEVER, ALWAYS})
  void aMessageStopsWhereItsHopLimitRunsOut(double broadcastFraction) {
    DataNet net =
        DataNet.line(
            8, DataNet.testConfig(64).hopLimit(3).broadcastFraction(broadcastFraction).build());
    int[] near = new int[8];
    for (int r = 1; r < 8; r++) {
      near[r] = net.host(r, "a = 1");
    }
    int far = net.host(7, "b = 1");
    net.converge();

    long toAll = net.publish(0, message("a", 1));
    long toFarEnd = net.publish(0, message("b", 1));

    for (int r = 1; r <= 3; r++) {
      net.expectDelivered(near[r], toAll);
    }
    for (int r = 4; r < 8; r++) {
      net.expectDelivered(near[r]);
    }
    net.expectDelivered(far);
    for (long id : List.of(toAll, toFarEnd)) {
      assertEquals(List.of(3), net.hopLimits(0, 1, id));
      assertEquals(List.of(2), net.hopLimits(1, 2, id));
      assertEquals(List.of(1), net.hopLimits(2, 3, id));
      for (int r = 1; r < 8; r++) {
        assertEquals(r <= 3 ? 1 : 0, net.receives(r, id), "message " + id + " at router " + r);
      }
    }
    assertEquals(List.of(), net.copies(3, 4));
    net.expectOnlyDrops(3, Map.of(Drop.HOP_LIMIT, 2L));
    for (int r : List.of(0, 1, 2, 4, 5, 6, 7)) {
      net.expectOnlyDrops(r, Map.of());
    }
  }

  @ParameterizedTest
  @ValueSource(doubles = {NEVER, ALWAYS})
  void aCopyForABrokenLinkIsDroppedAndTheOtherBranchesDeliver(double broadcastFraction) {
    //   0 - 1 - 2 - 4
    //       |
    //       3
    DataNet net =
        new DataNet(DataNet.testConfig(64).broadcastFraction(broadcastFraction).build())
            .router(0)
            .router(1)
            .router(2)
            .router(3)
            .router(4)
            .link(0, 1)
            .link(1, 2)
            .link(2, 4)
            .link(1, 3);
    int at2 = net.host(2, "a = 1");
    int at3 = net.host(3, "a = 1");
    int at4 = net.host(4, "a = 1");
    net.converge();

    long before = net.publish(0, message("a", 1));
    net.expectDelivered(at2, before);
    net.expectDelivered(at3, before);
    net.expectDelivered(at4, before);
    net.expectNoDrops();

    net.breakDataLink(2, 4);
    long after = assertDoesNotThrow(() -> net.publish(0, message("a", 1)));

    net.expectDelivered(at2, before, after);
    net.expectDelivered(at3, before, after);
    net.expectDelivered(at4, before);
    assertEquals(0, net.receives(4, after));
    net.expectOnlyDrops(2, Map.of(Drop.LINK, 1L));
    for (int r : List.of(0, 1, 3, 4)) {
      net.expectOnlyDrops(r, Map.of());
    }
  }

  /**
   * A broadcast that reaches a router twice — once from its old parent on the source's tree and
   * once from its new one, as while routes change — is delivered and forwarded once; the second
   * copy is counted as a duplicate.
   */
  @Test
  void aBroadcastTakenTwiceIsDeliveredAndForwardedOnce() {
    //   0 - 1 - 2
    DataNet net =
        new DataNet(DataNet.testConfig(64).broadcastFraction(ALWAYS).build())
            .router(0)
            .router(1)
            .router(2)
            .link(0, 1)
            .link(1, 2);
    int at1 = net.host(1, "a = 1");
    int at2 = net.host(2, "a = 1");
    net.converge();
    long id = 7;
    Header h = new Header(9, 0, id, null);
    net.inject(1, 0, h, Payload.of(message("a", 1)));
    net.inject(1, 0, h, Payload.of(message("a", 1)));
    net.expectDelivered(at1, id);
    net.expectDelivered(at2, id);
    assertEquals(1, net.copies(1, 2).size(), "forwarded once");
    net.expectOnlyDrops(1, Map.of(Drop.DUPLICATE, 1L));
    net.expectOnlyDrops(2, Map.of());
  }

  @Test
  void routersOfDThatAreUnknownOrUnreachableAreCountedAndTheRestIsForwarded() {
    //   0 - 10 - 70
    //        |
    //       99
    // maxRouters 100: D has 2 words here; 120 is in the last word but not below maxRouters, 130
    // and 191 lie beyond it; 50 and 64 are below maxRouters but not in the network.
    DataNet net =
        new DataNet(DataNet.testConfig(100).broadcastFraction(NEVER).build())
            .router(0)
            .router(10)
            .router(70)
            .router(99)
            .link(0, 10)
            .link(10, 70)
            .link(10, 99);
    int at10 = net.host(10, "a = 1");
    int at70 = net.host(70, "a = 1");
    int at99 = net.host(99, "a = 1");
    net.converge();
    assertEquals(2, net.plane(10).words());

    long id = 42;
    Header h = Header.of(9, 0, id, 3, 10, 70, 99, 50, 64, 120, 130, 191);
    assertDoesNotThrow(() -> net.inject(10, 0, h, Payload.of(message("a", 1))));

    net.expectOnlyDrops(10, Map.of(Drop.UNKNOWN_ROUTER, 3L, Drop.NO_ROUTE, 2L));
    assertEquals(
        List.of(List.of(70)), net.copies(10, 70).stream().map(Header::destinations).toList());
    assertEquals(
        List.of(List.of(99)), net.copies(10, 99).stream().map(Header::destinations).toList());
    assertEquals(
        List.of(8, 8),
        Stream.of(net.copies(10, 70), net.copies(10, 99)).map(c -> c.get(0).hopLimit()).toList());
    assertEquals(List.of(), net.copies(10, 0));
    net.expectDelivered(at10, id);
    net.expectDelivered(at70, id);
    net.expectDelivered(at99, id);
    for (int r : List.of(0, 70, 99)) {
      net.expectOnlyDrops(r, Map.of());
    }
  }

  @ParameterizedTest
  @ValueSource(doubles = {NEVER, ALWAYS})
  void aMessageThatDoesNotDecodeIsCountedAndItsCopiesStillGoOut(double broadcastFraction) {
    //   0 - 1 - 2
    //       |
    //       3
    DataNet net =
        new DataNet(DataNet.testConfig(64).broadcastFraction(broadcastFraction).build())
            .router(0)
            .router(1)
            .router(2)
            .router(3)
            .link(0, 1)
            .link(1, 2)
            .link(1, 3);
    int at1 = net.host(1, "a = 1");
    int alsoAt1 = net.host(1, "a > 0");
    int at2 = net.host(2, "a = 1");
    int at3 = net.host(3, "a = 1");
    net.converge();

    long id = assertDoesNotThrow(() -> net.publish(0, new Payload(message("a", 1), 1)));

    net.expectOnlyDrops(1, Map.of(Drop.BAD_MESSAGE, 1L));
    net.expectDelivered(at1);
    net.expectDelivered(alsoAt1);
    assertEquals(1, net.copies(1, 2).size());
    assertEquals(1, net.copies(1, 3).size());
    net.expectDelivered(at2, id);
    net.expectDelivered(at3, id);
    for (int r : List.of(0, 2, 3)) {
      net.expectOnlyDrops(r, Map.of());
    }
  }
}
