package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.routing.DataNet.Header;
import io.bdrp.routing.DataNet.Payload;
import io.bdrp.routing.DataPlane.Drop;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A trace goes through the data plane's own decisions (D, the split by next hop, the hop limit, the
 * exact match at routers of D) and reports them step by step, while no host receives it and none of
 * the data plane's counters moves.
 */
class DataPlaneTraceTest {
  /** A trace copy on its way: to router {@code to} from {@code from}. */
  private record InFlight(int from, int to, Header header, Payload payload) {}

  /** Traces {@code m} at {@code ingress}, relaying every copy to its neighbour; the steps. */
  private static List<Trace.Step> trace(DataNet net, int ingress, Message m) {
    List<Trace.Step> steps = new ArrayList<>();
    ArrayDeque<InFlight> queue = new ArrayDeque<>();
    int[] at = {ingress};
    Trace.Output<Payload> out =
        (neighbour, hopLimit, source, traceId, d, message) ->
            queue.add(
                new InFlight(
                    at[0],
                    neighbour,
                    new Header(hopLimit, source, traceId, d == null ? null : d.clone()),
                    message));
    steps.add(net.plane(ingress).trace(m, Payload.of(m), out));
    while (!queue.isEmpty()) {
      InFlight c = queue.poll();
      at[0] = c.to();
      steps.add(net.plane(c.to()).traceReceive(c.from(), c.header(), c.payload(), out));
    }
    return steps;
  }

  private static DataNet line(int hopLimit, int[] hosts) {
    DataNet net =
        DataNet.line(3, DataNet.testConfig(64).broadcastFraction(1.0).hopLimit(hopLimit).build());
    hosts[0] = net.host(1, "a = 1");
    hosts[1] = net.host(2, "a = 1 && b > 2");
    net.converge();
    return net;
  }

  private static long[] bits(int... routers) {
    long[] d = new long[1];
    for (int r : routers) {
      d[0] |= 1L << r;
    }
    return d;
  }

  @Test
  void aTraceReportsEachDecisionAndDeliversNothing() {
    int[] hosts = new int[2];
    DataNet net = line(32, hosts);
    List<Trace.Step> steps = trace(net, 0, Message.builder().put("a", 1L).put("b", 1L).build());

    assertEquals(3, steps.size(), "the ingress, then routers 1 and 2");
    Trace.Step ingress = steps.get(0);
    assertTrue(ingress.ingress());
    assertArrayEquals(bits(1, 2), ingress.destinations());
    assertEquals(1, ingress.copies().size());
    assertEquals(1, ingress.copies().get(0).neighbour());
    assertArrayEquals(bits(1, 2), ingress.copies().get(0).d());
    assertArrayEquals(new int[0], ingress.hosts());

    Trace.Step transit = steps.get(1);
    assertEquals(0, transit.from());
    assertEquals(0, transit.source());
    assertEquals(32, transit.hopLimit());
    assertTrue(transit.local(), "router 1 is in D");
    assertArrayEquals(new int[] {hosts[0]}, transit.hosts());
    assertEquals(1, transit.matching());
    assertArrayEquals(bits(2), transit.copies().get(0).d(), "the rest of D goes on");
    assertNull(transit.destinations());

    Trace.Step last = steps.get(2);
    assertTrue(last.local());
    assertArrayEquals(new int[0], last.hosts(), "a false positive: router 2's host wants b > 2");
    assertEquals(List.of(), last.copies());
    assertEquals(List.of(), last.drops());

    net.expectDelivered(hosts[0]);
    net.expectDelivered(hosts[1]);
    for (int r = 0; r < 3; r++) {
      DataPlane<Payload> p = net.plane(r);
      assertEquals(0, p.published() + p.received() + p.copies() + p.delivered());
      net.expectOnlyDrops(r, Map.of());
    }
  }

  @Test
  void aHopLimitThatRunsOutIsReportedWhereItHappens() {
    int[] hosts = new int[2];
    DataNet net = line(1, hosts);
    List<Trace.Step> steps = trace(net, 0, Message.builder().put("a", 1L).put("b", 3L).build());

    assertEquals(2, steps.size(), "the copy stops at router 1");
    Trace.Step at1 = steps.get(1);
    assertEquals(1, at1.hopLimit());
    assertEquals(List.of(), at1.copies());
    assertEquals(1, at1.drops().size());
    assertEquals(Drop.HOP_LIMIT, at1.drops().get(0).reason());
    assertArrayEquals(new int[] {hosts[0]}, at1.hosts(), "router 1 still matches its hosts");
    net.expectOnlyDrops(1, Map.of()); // reported, not counted
  }

  @Test
  void aStepCountsEveryMatchingHostAndListsAtMostTheCap() {
    DataNet net = DataNet.line(2, DataNet.testConfig(64).build());
    for (int i = 0; i < Trace.MAX_HOSTS + 4; i++) {
      net.host(1, "a = 1");
    }
    net.converge();
    List<Trace.Step> steps = trace(net, 0, Message.builder().put("a", 1L).build());
    assertEquals(Trace.MAX_HOSTS + 4, steps.get(1).matching());
    assertEquals(Trace.MAX_HOSTS, steps.get(1).hosts().length);
  }
}
