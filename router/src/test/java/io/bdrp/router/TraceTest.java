package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.topologies.Bundled;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.TraceReport;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Message traces on federations of routers on loopback: the hosts a trace reports are those that
 * real delivery of the same message reaches, its false positives are the routers of D without an
 * exactly matching host, no host receives a trace, a trace outside the user's publish permission or
 * beyond the session's rate is refused and counted, and a drop is reported with its reason.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TraceTest {
  /** {@code bdrp_traces_refused_total{reason}} of {@code r}. */
  private static long refusedTraces(Router r, String reason) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "(?m)^bdrp_traces_refused_total\\{reason=\"" + reason + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void tracesReportWhatRealDeliveryDoes() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-8"))) {
      f.awaitRoutes();
      WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER.withNames(20, 20), 11);
      int n = f.routers.size();
      List<BdrpClient> clients = new ArrayList<>();
      List<Predicate> predicates = new ArrayList<>();
      List<Map<Long, Integer>> inboxes = new ArrayList<>();
      List<AtomicInteger> markers = new ArrayList<>();
      for (int i = 0; i < 2 * n; i++) {
        BdrpClient c = f.client(i % n, "host-" + i);
        Predicate p = g.predicate();
        Map<Long, Integer> in = new ConcurrentHashMap<>();
        AtomicInteger marks = new AtomicInteger();
        c.subscribe(
                p,
                m -> {
                  if (m.get("id") != null) {
                    in.merge(m.get("id").asLong(), 1, Integer::sum);
                  }
                })
            .get(10, TimeUnit.SECONDS);
        c.subscribe(Predicate.parse("exists(marker)"), m -> marks.incrementAndGet())
            .get(10, TimeUnit.SECONDS);
        clients.add(c);
        predicates.add(p);
        inboxes.add(in);
        markers.add(marks);
      }
      f.awaitPredicates();
      // Broadcasts (most of these messages) follow the trees, which settle an update after the
      // routes; a trace sent before then may take copies off the trees and miss reports.
      f.awaitTrees();

      SplittableRandom rnd = new SplittableRandom(5);
      Map<Long, Message> messages = new HashMap<>();
      Map<Long, Integer> publishers = new HashMap<>();
      Map<Long, TreeSet<String>> traced = new HashMap<>();
      int falsePositives = 0;
      for (long id = 0; id < 40; id++) {
        Message.Builder b = Message.builder();
        g.message().attributes().forEach(b::put);
        Message m = b.put("id", id).build();
        int from = rnd.nextInt(clients.size());
        ClientFrame.TraceResult r = clients.get(from).trace(m).get(10, TimeUnit.SECONDS);
        messages.put(id, m);
        publishers.put(id, from);

        assertTrue(r.complete(), "every router reported: " + r);
        assertEquals(from % n, r.ingress(), "the client's router is the ingress");
        assertTrue(r.reports().get(0).ingress(), "the ingress reports first");
        // The hosts each report names (every client here is anonymous on an open router: named).
        TreeSet<String> hosts = new TreeSet<>();
        for (TraceReport rep : r.reports()) {
          assertEquals(rep.matching(), rep.hosts().size(), "every matching host listed");
          rep.hosts().forEach(h -> hosts.add(h.name()));
        }
        traced.put(id, hosts);
        // The oracle: every client whose predicate the message satisfies.
        TreeSet<String> want = new TreeSet<>();
        TreeSet<Integer> routersWithMatch = new TreeSet<>();
        for (int c = 0; c < clients.size(); c++) {
          if (predicates.get(c).matches(m)) {
            want.add("host-" + c);
            routersWithMatch.add(c % n);
          }
        }
        assertEquals(want, hosts, "the hosts trace " + id + " reports");
        int[] fp =
            Arrays.stream(r.destinations()).filter(d -> !routersWithMatch.contains(d)).toArray();
        assertArrayEquals(fp, r.falsePositives(), "false positives of trace " + id);
        falsePositives += fp.length;
        // Every router of D other than the ingress reported the message matched there.
        TreeSet<Integer> checked = new TreeSet<>();
        r.reports().stream().filter(TraceReport::local).forEach(x -> checked.add(x.router()));
        for (int d : r.destinations()) {
          assertTrue(checked.contains(d), "router " + d + " of D matched trace " + id);
        }
      }

      // Now the same messages for real, then a marker from every client: once each has every
      // marker, everything sent before along the same paths has arrived.
      for (long id = 0; id < messages.size(); id++) {
        clients.get(publishers.get(id)).send(messages.get(id)).get(10, TimeUnit.SECONDS);
      }
      for (int c = 0; c < clients.size(); c++) {
        clients
            .get(c)
            .send(Message.builder().put("marker", (long) c).build())
            .get(10, TimeUnit.SECONDS);
      }
      int all = clients.size();
      Federation.await(
          "every marker at every client", () -> markers.stream().allMatch(x -> x.get() == all));
      long delivered = 0;
      for (int c = 0; c < clients.size(); c++) {
        Map<Long, Integer> want = new TreeMap<>();
        for (Map.Entry<Long, TreeSet<String>> e : traced.entrySet()) {
          if (e.getValue().contains("host-" + c)) {
            want.put(e.getKey(), 1); // once: the trace itself was delivered to no one
            delivered++;
          }
        }
        assertEquals(want, new TreeMap<>(inboxes.get(c)), "deliveries to client " + c);
      }
      assertTrue(delivered > 0, "the workload delivers something");
      assertTrue(falsePositives > 0, "the workload meets false positives: " + falsePositives);
    }
  }

  @Test
  void aTraceOutsideThePublishPermissionIsRefused() throws Exception {
    String token = ClientAuth.newToken();
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "bob",
                    ClientAuth.hashLine(token),
                    new ClientAuth.Permissions("bob", null, Predicate.parse("topic = \"news\"")))),
            null);
    try (Router router = Router.start(Federation.loneRouter().withClientAuth(auth));
        BdrpClient bob =
            BdrpClient.builder()
                .router(router.clientAddress())
                .reconnect(false)
                .authToken(token)
                .connect()) {
      ClientFrame.TraceResult ok =
          bob.trace(Message.builder().put("topic", "news").build()).get(10, TimeUnit.SECONDS);
      assertTrue(ok.complete());
      assertTrue(
          ok.reports().get(0).hosts().stream().allMatch(h -> h.name().isEmpty()),
          "a user with restricted permissions sees no host names");
      ExecutionException e =
          assertThrows(
              ExecutionException.class,
              () ->
                  bob.trace(Message.builder().put("topic", "sport").build())
                      .get(10, TimeUnit.SECONDS));
      BdrpClient.RouterException why = (BdrpClient.RouterException) e.getCause();
      assertEquals(ErrorCode.NOT_AUTHORIZED.number(), why.code());
      assertTrue(why.getMessage().contains("publish permission"), why.getMessage());
      assertEquals(1, refusedTraces(router, "publish_permission"), "counted");
    }
  }

  @Test
  void tracesBeyondTheSessionsRateAreRefusedAndCounted() throws Exception {
    try (Router router = Router.start(Federation.loneRouter());
        BdrpClient c =
            BdrpClient.builder().router(router.clientAddress()).reconnect(false).connect()) {
      // Sent at once: the router reads them in a burst, far faster than its bucket refills.
      int n = 3 * Traces.PER_HOST_PER_SECOND;
      List<java.util.concurrent.CompletableFuture<ClientFrame.TraceResult>> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        all.add(c.trace(Message.builder().put("i", (long) i).build()));
      }
      int refused = 0;
      for (var f : all) {
        try {
          assertTrue(f.get(10, TimeUnit.SECONDS).complete());
        } catch (ExecutionException e) {
          BdrpClient.RouterException why = (BdrpClient.RouterException) e.getCause();
          assertEquals(ErrorCode.OVERLOADED.number(), why.code(), why.getMessage());
          refused++;
        }
      }
      assertTrue(refused > 0, "some of " + n + " traces refused");
      assertEquals(refused, refusedTraces(router, "host_rate"), "every refusal counted");
    }
  }

  @Test
  void aRouterOfDWithoutARouteIsReportedAsADrop() throws Exception {
    // Predicates outlive routes here, so D still names the router that went away.
    try (Federation f =
        new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withRouting(c.routing().toBuilder().predicateExpiryMs(600_000).build()))) {
      f.awaitRoutes();
      int gone = f.routers.size() - 1;
      BdrpClient far = f.client(gone, "far");
      far.setPredicate(Predicate.parse("x = 1")).get(10, TimeUnit.SECONDS);
      BdrpClient near = f.client(0, "near");
      f.awaitPredicates();
      ClientFrame.TraceResult before =
          near.trace(Message.builder().put("x", 1L).build()).get(10, TimeUnit.SECONDS);
      assertArrayEquals(new int[] {gone}, before.destinations());
      assertEquals(1, before.matchingHosts());

      f.routers.get(gone).close(); // its host's predicate stays in the others' PREDICATES
      Federation.await(
          "router 0 without a route to router " + gone,
          () -> Arrays.stream(f.routers.get(0).view().reachable()).noneMatch(r -> r == gone));
      ClientFrame.TraceResult after =
          near.trace(Message.builder().put("x", 1L).build()).get(10, TimeUnit.SECONDS);
      assertArrayEquals(new int[] {gone}, after.destinations(), "D still names it");
      TraceReport ingress = after.reports().get(0);
      assertEquals(
          List.of(new TraceReport.Dropped("no_route", 1, new int[] {gone})),
          ingress.drops(),
          "the ingress reports the drop and its reason");
      assertEquals(0, after.matchingHosts());
    }
  }
}
