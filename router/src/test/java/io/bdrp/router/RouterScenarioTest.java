package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.rdma.RdmaLinks;
import io.bdrp.topologies.Bundled;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Multi-router federations on loopback: delivery equals an oracle that sees every predicate, with
 * DATA over TCP or UDP, and with TLS on every client session and mutual TLS on every router link.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RouterScenarioTest {
  /** What one client received: message id → count, and markers per publisher. */
  static final class Inbox {
    final Map<Long, Integer> got = new ConcurrentHashMap<>();
    final Map<Long, AtomicInteger> markers = new ConcurrentHashMap<>();
  }

  @TempDir static Path certificates;

  static Stream<Arguments> topologiesAndTransports() {
    return Stream.of("routers-4", "routers-8")
        .flatMap(
            t ->
                Stream.concat(
                    // rdma runs over the shared-memory ring standing in for verbs (no device here).
                    Stream.of(RouterConfig.LinkTransport.values())
                        .map(x -> Arguments.of(t, x, false)),
                    Stream.of(Arguments.of(t, RouterConfig.LinkTransport.TCP, true))));
  }

  @ParameterizedTest(name = "{0} over {1}, TLS {2}")
  @MethodSource("topologiesAndTransports")
  void deliveryEqualsTheOracle(String topology, RouterConfig.LinkTransport transport, boolean tls)
      throws Exception {
    TestCerts ca = tls ? TestCerts.ca(certificates.resolve(topology), "ca") : null;
    if (transport == RouterConfig.LinkTransport.RDMA) {
      System.setProperty(RdmaLinks.BACKEND_PROPERTY, "shm");
    }
    try (Federation f = new Federation(Bundled.load(topology), transport, ca)) {
      run(f, topology, transport);
    } finally {
      System.clearProperty(RdmaLinks.BACKEND_PROPERTY);
    }
  }

  /**
   * Routers numbered 0, 97, ..., 679: D spans eleven words while a copy's part of it names a few
   * routers, so copies carry D as a list of routers (DataHeader.layoutOf), over TCP and through the
   * UDP datagrams (and the kernel fast path's refusal to split them, when it is loaded).
   */
  @ParameterizedTest(name = "routers-8 numbered 97 apart, over {0}")
  @org.junit.jupiter.params.provider.EnumSource(names = {"TCP", "UDP"})
  void routersNumberedFarApartDeliverAsTheOracleSays(RouterConfig.LinkTransport transport)
      throws Exception {
    try (Federation f = Federation.spread(Bundled.load("routers-8"), transport, 97)) {
      run(f, "routers-8", transport);
    }
  }

  private static void run(Federation f, String topology, RouterConfig.LinkTransport transport)
      throws Exception {
    {
      f.awaitRoutes();
      if (transport == RouterConfig.LinkTransport.UDP) {
        f.awaitUdp();
      }
      if (transport == RouterConfig.LinkTransport.SHM) {
        f.awaitShm();
      }
      if (transport == RouterConfig.LinkTransport.RDMA) {
        f.awaitDataBy(RouterConfig.LinkTransport.RDMA);
      }
      WorkloadGenerator g =
          new WorkloadGenerator(WorkloadSpec.PAPER.withNames(20, 20), topology.hashCode());
      int n = f.routers.size();
      List<BdrpClient> clients = new ArrayList<>();
      List<Predicate> predicates = new ArrayList<>();
      List<Inbox> inboxes = new ArrayList<>();
      for (int i = 0; i < 2 * n; i++) {
        BdrpClient c = f.client(i % n, "host-" + i);
        Predicate p = g.predicate();
        Inbox in = new Inbox();
        c.subscribe(p, m -> in.got.merge(m.get("id").asLong(), 1, Integer::sum))
            .get(10, TimeUnit.SECONDS);
        c.subscribe(
                Predicate.parse("exists(marker)"),
                m ->
                    in.markers
                        .computeIfAbsent(m.get("marker").asLong(), k -> new AtomicInteger())
                        .incrementAndGet())
            .get(10, TimeUnit.SECONDS);
        clients.add(c);
        predicates.add(p);
        inboxes.add(in);
      }
      f.awaitPredicates();

      // Publish from every client, then a marker from each: once a client has every marker,
      // everything sent before them along the same paths has arrived.
      SplittableRandom rnd = new SplittableRandom(7);
      Map<Long, Message> sent = new HashMap<>();
      long id = 0;
      for (int k = 0; k < 300; k++) {
        int from = rnd.nextInt(clients.size());
        Message base = g.message();
        Message.Builder b = Message.builder();
        base.attributes().forEach(b::put);
        Message m = b.put("id", id).build();
        sent.put(id++, m);
        clients.get(from).send(m).get(10, TimeUnit.SECONDS);
      }
      for (int c = 0; c < clients.size(); c++) {
        clients
            .get(c)
            .send(Message.builder().put("marker", (long) c).build())
            .get(10, TimeUnit.SECONDS);
      }
      int publishers = clients.size();
      Federation.await(
          "every marker at every client",
          () -> inboxes.stream().allMatch(in -> in.markers.size() == publishers));

      long expected = 0;
      for (int c = 0; c < clients.size(); c++) {
        Map<Long, Integer> want = new TreeMap<>();
        for (Map.Entry<Long, Message> e : sent.entrySet()) {
          if (predicates.get(c).matches(e.getValue())) {
            want.put(e.getKey(), 1);
            expected++;
          }
        }
        assertEquals(want, new TreeMap<>(inboxes.get(c).got), "deliveries to client " + c);
        inboxes.get(c).markers.values().forEach(v -> assertEquals(1, v.get(), "markers once"));
      }
      assertTrue(expected > 0, "the workload delivers something");
      if (transport == RouterConfig.LinkTransport.SHM) {
        assertTrue(f.ringFrames() > 0, "DATA went through the rings");
      }
      if (transport == RouterConfig.LinkTransport.RDMA) {
        long written = f.rdmaFrames("sent");
        assertTrue(written > 0, "DATA went through the rings whose endpoints the hellos exchanged");
        Federation.await(
            "every frame written into a ring read and taken",
            () -> f.rdmaFrames("received") == written);
      }
    }
  }
}
