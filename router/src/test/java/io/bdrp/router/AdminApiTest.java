package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.topologies.Bundled;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The admin API (docs/admin-api.md) with real HTTP requests against live routers on loopback: its
 * answers parse as JSON and agree with the router's view and with its metrics read around them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdminApiTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static HttpResponse<String> request(Router r, String method, String path, String auth)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + r.metricsAddress().getPort() + path))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (auth != null) {
      b.header("Authorization", auth);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** GET {@code path}, which must answer 200 with JSON. */
  private static JsonNode get(Router r, String path) throws Exception {
    HttpResponse<String> res = request(r, "GET", path, null);
    assertEquals(200, res.statusCode(), path + ": " + res.body());
    assertEquals("application/json", res.headers().firstValue("content-type").orElse(""));
    return JSON.readTree(res.body());
  }

  /** The value of the series {@code series} (name and labels) in the metrics now, or 0. */
  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** Asserts that {@code admin} lies between the metric read before it and the one after. */
  private static void between(long before, long admin, long after, String what) {
    assertTrue(
        before <= admin && admin <= after,
        what + ": admin " + admin + " outside metrics " + before + ".." + after);
  }

  @Test
  void everyEndpointAnswersJsonThatAgreesWithTheRouterAndItsMetrics() throws Exception {
    // routers-4: a ring 0-1-2-3-0 with a chord 0-2.
    try (Federation f =
        new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withMetrics(ANY, null))) {
      f.awaitRoutes();
      AtomicInteger got = new AtomicInteger();
      BdrpClient sub = f.client(3, "subscriber");
      sub.subscribe(Predicate.parse("exists(n)"), m -> got.incrementAndGet())
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      BdrpClient pub = f.client(1, "publisher");
      int total = 50;
      for (int i = 0; i < total; i++) {
        pub.send(Message.builder().put("n", (long) i).build());
      }
      Federation.await("every message at the subscriber", () -> got.get() >= total);

      for (Router r : f.routers) {
        JsonNode index = get(r, "/admin/v1");
        List<String> endpoints = new ArrayList<>();
        index.get("endpoints").forEach(e -> endpoints.add(e.asText()));
        assertEquals(
            List.of(
                "/admin/v1/router",
                "/admin/v1/links",
                "/admin/v1/hosts",
                "/admin/v1/routes",
                "/admin/v1/predicates",
                "/admin/v1/neighbours"),
            endpoints);
        for (String e : endpoints) {
          get(r, e); // every one answers JSON
        }

        JsonNode router = get(r, "/admin/v1/router");
        assertEquals(r.number(), router.get("router").asInt());
        assertEquals(1_000 + r.number(), router.get("epoch").asLong());
        assertEquals(
            "127.0.0.1:" + r.metricsAddress().getPort(),
            router.get("listen").get("metrics").asText());
        assertEquals(
            "127.0.0.1:" + r.clientAddress().getPort(),
            router.get("listen").get("clients").asText());
        assertEquals(64, router.get("routing").get("maxRouters").asInt());
        assertEquals(
            Federation.FAST.helloIntervalMs(),
            router.get("routing").get("helloIntervalMs").asLong());
        assertTrue(router.get("limits").get("hosts").has("maxFiltersPerHost"));

        // Links: their states are the router's, their counters the metrics'.
        int[] neighbours = f.topology.neighbours(r.number());
        JsonNode links = get(r, "/admin/v1/links").get("links");
        assertEquals(neighbours.length, links.size());
        for (JsonNode l : links) {
          int n = l.get("router").asInt();
          assertEquals(r.view().linkUp(n) ? "up" : "down", l.get("state").asText());
          assertEquals("up", l.get("state").asText(), "after awaitRoutes every link is up");
          assertEquals("tcp", l.get("dataTransport").asText());
          assertFalse(l.get("fastPath").asBoolean());
        }
        for (int n : neighbours) {
          String label = "{neighbour=\"" + n + "\"}";
          long outBefore = metric(r, "bdrp_link_data_out_total" + label);
          long inBefore = metric(r, "bdrp_link_data_in_total" + label);
          long sentBefore = metric(r, "bdrp_link_control_sent_total" + label);
          long droppedBefore = metric(r, "bdrp_link_data_dropped_total" + label);
          JsonNode l = null;
          for (JsonNode x : get(r, "/admin/v1/links").get("links")) {
            if (x.get("router").asInt() == n) {
              l = x;
            }
          }
          long outAfter = metric(r, "bdrp_link_data_out_total" + label);
          long inAfter = metric(r, "bdrp_link_data_in_total" + label);
          long sentAfter = metric(r, "bdrp_link_control_sent_total" + label);
          long droppedAfter = metric(r, "bdrp_link_data_dropped_total" + label);
          between(outBefore, l.get("data").get("out").asLong(), outAfter, "data out to " + n);
          between(inBefore, l.get("data").get("in").asLong(), inAfter, "data in from " + n);
          between(sentBefore, l.get("control").get("sent").asLong(), sentAfter, "control to " + n);
          between(
              droppedBefore, l.get("drops").get("data").asLong(), droppedAfter, "drops to " + n);
        }

        // Routes: every router the view reaches, with its metric and next hop.
        JsonNode routes = get(r, "/admin/v1/routes");
        int[] reachable = r.view().reachable();
        assertEquals(reachable.length, routes.get("count").asInt());
        List<Integer> listed = new ArrayList<>();
        for (JsonNode x : routes.get("routes")) {
          listed.add(x.get("router").asInt());
          assertTrue(x.get("metric").asInt() >= 1);
          int hop = x.get("nextHop").asInt();
          assertTrue(contains(neighbours, hop), "next hop " + hop + " is a neighbour");
        }
        assertEquals(java.util.Arrays.stream(reachable).boxed().toList(), listed);
        assertTrue(routes.get("next").isNull());

        // Predicates: one entry per origin held, the subscriber's router with a filter.
        JsonNode preds = get(r, "/admin/v1/predicates");
        assertEquals(r.view().predicateOrigins(), preds.get("origins").asInt());
        assertEquals(preds.get("origins").asInt(), preds.get("predicates").size());
        for (JsonNode p : preds.get("predicates")) {
          int origin = p.get("router").asInt();
          assertEquals(1_000 + origin, p.get("epoch").asLong());
          assertEquals(r.view().predicateOf(origin).size(), p.get("filters").asInt());
        }

        JsonNode ns = get(r, "/admin/v1/neighbours");
        assertEquals(r.number(), ns.get("router").asInt());
        assertEquals(neighbours.length, ns.get("neighbours").size());
      }

      // Hosts: the subscriber at router 3, its deliveries as the metrics count them.
      Router r3 = f.routers.get(3);
      JsonNode hosts = get(r3, "/admin/v1/hosts");
      assertEquals(1, hosts.get("count").asInt());
      JsonNode h = hosts.get("hosts").get(0);
      assertEquals("bdrp", h.get("protocol").asText());
      assertEquals("subscriber", h.get("name").asText());
      assertEquals(1, h.get("filters").asInt());
      assertTrue(h.get("remoteAddress").asText().startsWith("127.0.0.1:"));
      String series =
          "bdrp_host_delivered_total{host=\"" + h.get("id").asInt() + "\",name=\"subscriber\"}";
      assertEquals(metric(r3, series), h.get("delivered").asLong());
      assertTrue(h.get("delivered").asLong() >= total);

      // Errors: JSON too.
      Router r0 = f.routers.get(0);
      HttpResponse<String> missing = request(r0, "GET", "/admin/v1/nothing", null);
      assertEquals(404, missing.statusCode());
      assertTrue(JSON.readTree(missing.body()).has("error"));
      HttpResponse<String> post = request(r0, "POST", "/admin/v1/router", null);
      assertEquals(405, post.statusCode());
      assertTrue(JSON.readTree(post.body()).has("error"));
      HttpResponse<String> bad = request(r0, "GET", "/admin/v1/hosts?limit=1001", null);
      assertEquals(400, bad.statusCode());
      assertTrue(JSON.readTree(bad.body()).has("error"));
      assertEquals(404, request(r0, "GET", "/nothing", null).statusCode());
    }
  }

  /** Router {@code r}'s entry for its link to {@code n} in {@code /links}. */
  private static JsonNode link(Router r, int n) throws Exception {
    for (JsonNode x : get(r, "/admin/v1/links").get("links")) {
      if (x.get("router").asInt() == n) {
        return x;
      }
    }
    throw new AssertionError("router " + r.number() + " has no link to " + n);
  }

  /** The first of router {@code r}'s hosts, as {@code /hosts} lists it. */
  private static JsonNode firstHost(Router r) throws Exception {
    return get(r, "/admin/v1/hosts").get("hosts").get(0);
  }

  private static long at(JsonNode n, String a, String b) {
    return n.get(a).get(b).asLong();
  }

  @Test
  void linksCountBytesAndRatesEachWayAndHostsTheirRates() throws Exception {
    // routers-4: a ring 0-1-2-3-0 with a chord 0-2; router 0 reaches 3 over their link.
    try (Federation f =
        new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withMetrics(ANY, null))) {
      f.awaitRoutes();
      Router r0 = f.routers.get(0);
      Router r3 = f.routers.get(3);
      AtomicInteger got = new AtomicInteger();
      BdrpClient sub = f.client(3, "subscriber");
      sub.subscribe(Predicate.parse("exists(n)"), m -> got.incrementAndGet())
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      JsonNode before = link(r0, 3);
      assertTrue(at(before, "bytes", "out") > 0, "control frames are bytes too: " + before);
      assertTrue(at(before, "bytes", "in") > 0, "and so are the neighbour's: " + before);

      BdrpClient pub = f.client(0, "publisher");
      int total = 200;
      byte[] body = new byte[1000];
      for (int i = 0; i < total; i++) {
        pub.send(Message.builder().put("n", (long) i).body(body).build());
      }
      Federation.await("every message at the subscriber", () -> got.get() >= total);
      JsonNode after = link(r0, 3);
      assertTrue(
          at(after, "bytes", "out") - at(before, "bytes", "out") >= (long) total * body.length,
          "every DATA frame's bytes went out: " + before + " then " + after);
      JsonNode far = link(r3, 0);
      assertTrue(at(far, "bytes", "in") >= at(after, "bytes", "out") - at(before, "bytes", "out"));

      // The burst shows in the rates of the second it fell in, at both ends, then they fall back.
      Federation.await(
          "a second with DATA in its rates",
          () -> {
            try {
              JsonNode l = link(r0, 3);
              return at(l, "rates", "dataOut") > 0 && at(l, "rates", "bytesOut") > 0;
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          });
      Federation.await(
          "the subscriber's delivery rate",
          () -> {
            try {
              return at(firstHost(r3), "rates", "delivered") > 0;
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          });
      assertEquals(total, host(r0, "publisher").get("published").asLong());
      Federation.await(
          "a second without DATA",
          () -> {
            try {
              return at(link(r0, 3), "rates", "dataOut") == 0;
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          });

      // No copy was dropped here; whatever is, its reasons add up to the link's drops.
      JsonNode down = link(r0, 3);
      assertEquals(0, at(down, "drops", "data"));
      assertEquals(
          at(down, "drops", "data"),
          at(down, "drops", "down")
              + at(down, "drops", "highWater")
              + at(down, "drops", "transportFull"),
          "the reasons add up to the link's drops: " + down);
    }
  }

  private static boolean contains(int[] a, int v) {
    for (int x : a) {
      if (x == v) {
        return true;
      }
    }
    return false;
  }

  @Test
  void hostsComeInBoundedPagesInOrderOfNumber() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMetrics(ANY, null))) {
      List<BdrpClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < 5; i++) {
          clients.add(BdrpClient.builder().router(r.clientAddress()).name("c" + i).connect());
        }
        List<Integer> seen = new ArrayList<>();
        String path = "/admin/v1/hosts?limit=2";
        int pages = 0;
        while (true) {
          JsonNode page = get(r, path);
          pages++;
          assertEquals(5, page.get("count").asInt());
          assertTrue(page.get("hosts").size() <= 2, "a page holds at most limit hosts");
          page.get("hosts").forEach(h -> seen.add(h.get("id").asInt()));
          if (page.get("next").isNull()) {
            break;
          }
          path = "/admin/v1/hosts?limit=2&after=" + page.get("next").asInt();
        }
        assertEquals(3, pages);
        assertEquals(5, seen.size());
        assertEquals(seen.stream().sorted().distinct().toList(), seen, "ascending, once each");
      } finally {
        clients.forEach(BdrpClient::close);
      }
    }
  }

  /** The host named {@code name} in the first page of {@code r}'s hosts, or null. */
  private static JsonNode host(Router r, String name) throws Exception {
    for (JsonNode h : get(r, "/admin/v1/hosts?limit=1000").get("hosts")) {
      if (h.get("name").asText().equals(name)) {
        return h;
      }
    }
    return null;
  }

  @Test
  void anMqttSessionIsAHostWithItsProtocolFiltersAndDeliveries() throws Exception {
    try (Router r =
            Router.start(Federation.loneRouter().withMqttListen(ANY).withMetrics(ANY, null));
        MqttClients.Client m = new MqttClients.Client(r.mqttAddress(), "m0").connect(null, null)) {
      m.subscribe("a/#", 0);
      Federation.await("the subscription set", () -> filters(r, "m0") == 1);
      m.publish("a/b", "x", 0);
      m.next();
      JsonNode h = host(r, "m0");
      assertEquals("mqtt5", h.get("protocol").asText());
      assertTrue(h.get("remoteAddress").asText().startsWith("127.0.0.1:"));
      assertTrue(h.get("user").isNull(), "an open router's clients have no user");
      String series = "bdrp_host_delivered_total{host=\"" + h.get("id").asInt() + "\",name=\"m0\"}";
      assertEquals(1, h.get("delivered").asLong());
      assertEquals(1, h.get("published").asLong(), "its PUBLISH counted");
      assertEquals(metric(r, series), h.get("delivered").asLong());
      assertEquals(0, h.get("dropped").asLong());
    }
  }

  private static int filters(Router r, String name) {
    try {
      JsonNode h = host(r, name);
      return h == null ? -1 : h.get("filters").asInt();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void theAdminApiNeedsTheMetricsUserAndTellsTheNeighboursAdminAddresses() throws Exception {
    String password = ClientAuth.newToken();
    RouterConfig config =
        RouterConfig.parse(
            "router: 7\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                + " metrics: \"127.0.0.1:0\"}\nauth: {metrics: {user: prom, password: \""
                + ClientAuth.hashLine(password)
                + "\"}}\nneighbours:\n  - {router: 8, admin: \"http://10.0.0.8:9090\"}\n"
                + "  - {router: 9}\n",
            "r7.yaml");
    try (Router r = Router.start(config)) {
      for (String path : List.of("/metrics", "/admin/v1", "/admin/v1/router", "/admin/v1/x")) {
        assertEquals(401, request(r, "GET", path, null).statusCode(), path);
      }
      String auth =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString(("prom:" + password).getBytes(StandardCharsets.UTF_8));
      HttpResponse<String> res = request(r, "GET", "/admin/v1/neighbours", auth);
      assertEquals(200, res.statusCode());
      JsonNode ns = JSON.readTree(res.body()).get("neighbours");
      assertEquals(8, ns.get(0).get("router").asInt());
      assertEquals("http://10.0.0.8:9090", ns.get(0).get("admin").asText());
      assertEquals("configured", ns.get(0).get("adminSource").asText());
      assertEquals("down", ns.get(0).get("state").asText());
      assertEquals(9, ns.get(1).get("router").asInt());
      assertNull(ns.get(1).get("admin").textValue());
      assertTrue(ns.get(1).get("adminSource").isNull(), "neither configured nor told");
      assertEquals(404, request(r, "GET", "/admin/v2/router", auth).statusCode());
    }
    RouterConfig.ConfigException e =
        assertThrows(
            RouterConfig.ConfigException.class,
            () ->
                RouterConfig.parse(
                    "router: 7\nneighbours: [{router: 8, admin: \"10.0.0.8:9090\"}]", "r7.yaml"));
    assertTrue(e.getMessage().contains("neighbours[0].admin"), e.getMessage());
  }

  /** The base URL of {@code r}'s admin API, as a neighbour on loopback sees it. */
  private static String adminUrl(Router r) {
    return "http://127.0.0.1:" + r.metricsAddress().getPort();
  }

  /** GET {@code url}, which must answer 200 with JSON. */
  private static JsonNode get(String url) throws Exception {
    HttpResponse<String> res =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, res.statusCode(), url + ": " + res.body());
    return JSON.readTree(res.body());
  }

  @Test
  void routersWithoutAdminAddressesTellEachOtherTheirsAndOneRouterLeadsToEvery() throws Exception {
    // routers-4: a ring 0-1-2-3-0 with a chord 0-2; no router has a neighbour's admin address.
    try (Federation f =
        new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withMetrics(ANY, null))) {
      Federation.await(
          "every link up",
          () -> {
            for (Router r : f.routers) {
              for (int n : f.topology.neighbours(r.number())) {
                if (!r.view().linkUp(n)) {
                  return false;
                }
              }
            }
            return true;
          });
      for (Router r : f.routers) {
        JsonNode ns = get(r, "/admin/v1/neighbours").get("neighbours");
        assertEquals(f.topology.neighbours(r.number()).length, ns.size());
        for (JsonNode n : ns) {
          Router neighbour = f.routers.get(n.get("router").asInt());
          assertEquals("up", n.get("state").asText());
          assertEquals(adminUrl(neighbour), n.get("admin").asText(), "router " + r.number());
          assertEquals("advertised", n.get("adminSource").asText());
        }
      }

      // A crawl as the console's: from router 0's admin API, follow every neighbour's admin.
      java.util.Deque<String> todo =
          new java.util.ArrayDeque<>(List.of(adminUrl(f.routers.get(0))));
      java.util.Set<String> seen = new java.util.HashSet<>(todo);
      java.util.Set<Integer> reached = new java.util.TreeSet<>();
      while (!todo.isEmpty()) {
        String at = todo.poll();
        reached.add(get(at + "/admin/v1/router").get("router").asInt());
        for (JsonNode n : get(at + "/admin/v1/neighbours").get("neighbours")) {
          String next = n.get("admin").textValue();
          if (next != null && seen.add(next)) {
            todo.add(next);
          }
        }
      }
      assertEquals(java.util.Set.of(0, 1, 2, 3), reached);
      assertEquals(4, seen.size(), "one admin address per router: " + seen);
    }
  }

  @Test
  void aConfiguredAdminAddressWinsOverTheToldOne() throws Exception {
    String listen =
        "listen: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\", metrics: \"127.0.0.1:0\"}\n";
    // Router 0 names router 1's admin API (as behind NAT, or a service); router 1 names none.
    Router r0 =
        Router.start(
            RouterConfig.parse(
                "router: 0\n"
                    + listen
                    + "neighbours: [{router: 1, admin: \"https://admin-1.example:9443\"}]\n",
                "r0.yaml"));
    try (Router r1 =
        Router.start(
            RouterConfig.parse(
                "router: 1\n" + listen + "neighbours: [{router: 0}]\n", "r1.yaml"))) {
      r1.connect(0, r0.routerAddress());
      Federation.await("the link up", () -> r0.view().linkUp(1) && r1.view().linkUp(0));
      JsonNode at0 = get(r0, "/admin/v1/neighbours").get("neighbours").get(0);
      assertEquals("https://admin-1.example:9443", at0.get("admin").asText());
      assertEquals("configured", at0.get("adminSource").asText());
      JsonNode at1 = get(r1, "/admin/v1/neighbours").get("neighbours").get(0);
      assertEquals(adminUrl(r0), at1.get("admin").asText());
      assertEquals("advertised", at1.get("adminSource").asText());

      // Once the link is down, the last session's address stays.
      r0.close();
      Federation.await("the link down", () -> !r1.view().linkUp(0));
      JsonNode down = get(r1, "/admin/v1/neighbours").get("neighbours").get(0);
      assertEquals("down", down.get("state").asText());
      assertEquals(adminUrl(r0), down.get("admin").asText());
      assertEquals("advertised", down.get("adminSource").asText());
    } finally {
      r0.close();
    }
  }
}
