package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.topologies.Bundled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The reliable service between router processes' worth of routers on loopback, with the client
 * library: confirmed messages, delivered once each and in the publisher's order, while the transit
 * router on their path is stopped mid-stream.
 */
class ReliableServiceTest {
  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  private static final int TOTAL = 2_000;

  /** A subscriber to every message at router {@code r}, once predicates agree everywhere. */
  private static ConcurrentLinkedQueue<Long> subscriber(Federation f, int r) throws Exception {
    ConcurrentLinkedQueue<Long> got = new ConcurrentLinkedQueue<>();
    f.client(r, "subscriber")
        .subscribe(Predicate.parse("exists(n)"), m -> got.add(m.get("n").asLong()))
        .get(10, TimeUnit.SECONDS);
    f.awaitPredicates();
    return got;
  }

  /**
   * Publishes {@link #TOTAL} messages reliably, stops router {@code stopped} a quarter of the way
   * through, and checks that all are confirmed and reach the subscriber once each, in order.
   */
  private static void publishStoppingAndCheck(
      Federation f, BdrpClient pub, int stopped, ConcurrentLinkedQueue<Long> got) throws Exception {
    List<CompletableFuture<Void>> confirmed = new ArrayList<>();
    for (int i = 0; i < TOTAL; i++) {
      confirmed.add(pub.sendReliable(Message.builder().put("n", (long) i).build()));
      if (i == TOTAL / 4) {
        f.routers.get(stopped).close();
      }
    }
    CompletableFuture.allOf(confirmed.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    Federation.await("every message at the subscriber", () -> got.size() >= TOTAL);
    List<Long> expected = new ArrayList<>();
    for (long i = 0; i < TOTAL; i++) {
      expected.add(i);
    }
    assertEquals(expected, new ArrayList<>(got), "each message once, in publisher order");
  }

  @Test
  void reliableMessagesAreConfirmedAndDeliveredOnceInOrderWhileTheirTransitRouterStops()
      throws Exception {
    // routers-4: a ring 0-1-2-3-0 with a chord 0-2. From 1 to 3 the two paths of two hops tie,
    // and the tie goes to the lower router number: through 0, which stops mid-stream.
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      f.awaitRoutes();
      ConcurrentLinkedQueue<Long> got = subscriber(f, 3);
      publishStoppingAndCheck(f, f.client(1, "publisher"), 0, got);
      Router ingress = f.routers.get(1);
      assertEquals(TOTAL, metric(ingress, "bdrp_reliable_confirmed_total"));
      assertEquals(0, metric(ingress, "bdrp_reliable_retained_messages"));
      assertEquals(0, metric(f.routers.get(3), "bdrp_reliable_held_messages"));
      assertTrue(metric(f.routers.get(3), "bdrp_reliable_deliveries_total") >= TOTAL);
    }
  }

  @Test
  void aPublisherWhoseIngressStopsMovesToItsFailoverRouterAndEachMessageArrivesOnceInOrder()
      throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      f.awaitRoutes();
      ConcurrentLinkedQueue<Long> got = subscriber(f, 3);
      List<Integer> sessions = new java.util.concurrent.CopyOnWriteArrayList<>();
      try (BdrpClient pub =
          BdrpClient.builder()
              .router(f.routers.get(1).clientAddress())
              .failover(f.routers.get(2).clientAddress())
              .name("publisher")
              .listener(
                  new BdrpClient.ConnectionListener() {
                    @Override
                    public void connected(int routerNumber) {
                      sessions.add(routerNumber);
                    }
                  })
              .connect()) {
        publishStoppingAndCheck(f, pub, 1, got);
        assertEquals(List.of(1, 2), sessions, "a session with router 1, then with router 2");
        assertTrue(metric(f.routers.get(2), "bdrp_reliable_confirmed_total") > 0);
      }
    }
  }
}
