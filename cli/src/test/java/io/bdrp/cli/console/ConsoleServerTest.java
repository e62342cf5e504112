package io.bdrp.cli.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.Router;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.RoutingConfig;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The console server without a browser, on a line of three live routers each configured with its
 * neighbours' admin addresses, started after the console: from router 0 alone it finds all three,
 * serves their picture, its page and the graph library, and marks a router that stops as not
 * answering; configured with none, it finds them by the addresses they tell each other. Traces from
 * the console server: the result of a trace it may run, a clear error for one the router refuses, a
 * router that cannot be reached, and requests outside its bounds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConsoleServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final List<Router> routers = new ArrayList<>();
  private ConsoleServer console;

  @AfterEach
  void stop() {
    if (console != null) {
      console.close();
    }
    routers.forEach(Router::close);
  }

  private HttpResponse<String> get(String path, String method) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(console.url() + path.substring(1)))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Reads {@code /api/federation} until {@code condition} holds of it, for at most 30 s. */
  private JsonNode awaitPicture(String what, Predicate<JsonNode> condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      HttpResponse<String> res = get("/api/federation", "GET");
      assertEquals(200, res.statusCode());
      assertEquals("application/json", res.headers().firstValue("content-type").orElse(""));
      JsonNode p = JSON.readTree(res.body());
      if (condition.test(p)) {
        return p;
      }
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what + "; last picture " + p);
      }
      Thread.sleep(100);
    }
  }

  private static JsonNode router(JsonNode picture, int n) {
    for (JsonNode r : picture.get("routers")) {
      if (r.path("router").asInt(-1) == n) {
        return r;
      }
    }
    return null;
  }

  @Test
  void readsARouterBehindTheMetricsUserWithItsPassword() throws Exception {
    String password = io.bdrp.router.security.ClientAuth.newToken();
    RouterConfig config =
        RouterConfig.parse(
            "router: 4\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                + " metrics: \"127.0.0.1:0\"}\nauth: {metrics: {user: prom, password: \""
                + io.bdrp.router.security.ClientAuth.hashLine(password)
                + "\"}}\n",
            "r4.yaml");
    Router r = Router.start(config);
    routers.add(r);
    String admin = "http://127.0.0.1:" + r.metricsAddress().getPort();
    String basic =
        "Basic "
            + java.util.Base64.getEncoder()
                .encodeToString(
                    ("prom:" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    console =
        new ConsoleServer(
            new Federation(List.of(admin), Federation.httpClient(null), basic),
            new InetSocketAddress("127.0.0.1", 0));
    JsonNode p = awaitPicture("router 4 answering", pic -> router(pic, 4) != null);
    assertTrue(router(p, 4).get("answering").asBoolean());
    console.close();

    console =
        new ConsoleServer(
            new Federation(List.of(admin), Federation.httpClient(null), null),
            new InetSocketAddress("127.0.0.1", 0));
    JsonNode refused =
        awaitPicture("the refusal", pic -> pic.get("routers").get(0).hasNonNull("error"));
    assertTrue(
        refused.get("routers").get(0).get("error").asText().contains("401"),
        "without the password: " + refused);
  }

  @Test
  void findsTheFederationFromOneRouterAndServesItsPicturePageAndLibrary() throws Exception {
    // A line 0 - 1 - 2, each router told its neighbours' admin addresses.
    int[] metrics = ConsoleBrowserTest.freePorts(3);
    // The console first: its first polls find nothing, and it keeps trying.
    console =
        new ConsoleServer(
            new Federation(
                List.of("http://127.0.0.1:" + metrics[0] + "/"), Federation.httpClient(null), null),
            new InetSocketAddress("127.0.0.1", 0));
    RoutingConfig routing =
        RoutingConfig.builder().helloIntervalMs(250).deadIntervalMs(3_000).maxRouters(64).build();
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    for (int r = 0; r < 3; r++) {
      List<RouterConfig.Neighbour> ns = new ArrayList<>();
      for (int x : new int[] {r - 1, r + 1}) {
        if (x >= 0 && x < 3) {
          ns.add(
              new RouterConfig.Neighbour(
                  x, null, 1, RouterConfig.LinkTransport.TCP, "http://127.0.0.1:" + metrics[x]));
        }
      }
      routers.add(
          Router.start(
              new RouterConfig(
                      r,
                      1_000 + r,
                      any,
                      any,
                      null,
                      ns,
                      routing,
                      BloomParameters.DEFAULT,
                      RouterLimits.DEFAULT,
                      null)
                  .withMetrics(InetSocketAddress.createUnresolved("127.0.0.1", metrics[r]), null)));
    }
    routers.get(0).connect(1, routers.get(1).routerAddress());
    routers.get(1).connect(2, routers.get(2).routerAddress());

    JsonNode p =
        awaitPicture(
            "three routers answering with their links up",
            pic -> {
              for (int r = 0; r < 3; r++) {
                JsonNode x = router(pic, r);
                if (x == null || !x.get("answering").asBoolean()) {
                  return false;
                }
                for (JsonNode l : x.get("links")) {
                  if (!l.get("state").asText().equals("up")) {
                    return false;
                  }
                }
              }
              return true;
            });
    assertEquals(3, p.get("routers").size(), "one entry per admin address: " + p);
    assertEquals("http://127.0.0.1:" + metrics[0], router(p, 0).get("admin").asText());
    assertEquals(2, router(p, 1).get("links").size());
    assertEquals(1, router(p, 1).get("info").get("router").asInt());
    assertEquals(0, router(p, 2).get("hosts").get("count").asInt());

    HttpResponse<String> page = get("/", "GET");
    assertEquals(200, page.statusCode());
    assertTrue(page.body().contains("lib/cytoscape.min.js"), page.body());
    HttpResponse<String> lib = get("/lib/cytoscape.min.js", "GET");
    assertEquals(200, lib.statusCode());
    assertTrue(lib.body().length() > 100_000, "Cytoscape.js from its WebJar");
    assertEquals(200, get("/console.js", "GET").statusCode());
    assertEquals(404, get("/nothing", "GET").statusCode());
    assertEquals(405, get("/api/federation", "POST").statusCode());

    routers.get(2).close();
    JsonNode after =
        awaitPicture(
            "router 2 not answering and router 1's link to it down",
            pic -> {
              JsonNode r2 = router(pic, 2);
              JsonNode r1 = router(pic, 1);
              boolean down = false;
              for (JsonNode l : r1.get("links")) {
                down |= l.get("router").asInt() == 2 && l.get("state").asText().equals("down");
              }
              return !r2.get("answering").asBoolean() && down;
            });
    assertTrue(router(after, 2).hasNonNull("error"), "why it does not answer: " + after);
    assertEquals(2, router(after, 2).get("info").get("router").asInt(), "what it said last");
  }

  @Test
  void findsTheFederationByTheAdminAddressesRoutersTellEachOther() throws Exception {
    // A line 0 - 1 - 2 without a single admin address configured: each router tells its
    // neighbours its metrics port in the link hello, and they list it at the session's address.
    String listen =
        "listen: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\", metrics: \"127.0.0.1:0\"}\n";
    for (int r = 0; r < 3; r++) {
      StringBuilder ns = new StringBuilder("neighbours: [");
      for (int x : new int[] {r - 1, r + 1}) {
        if (x >= 0 && x < 3) {
          ns.append(ns.length() > 13 ? ", " : "").append("{router: ").append(x).append("}");
        }
      }
      routers.add(
          Router.start(
              RouterConfig.parse("router: " + r + "\n" + listen + ns + "]\n", "r" + r + ".yaml")));
    }
    routers.get(0).connect(1, routers.get(1).routerAddress());
    routers.get(1).connect(2, routers.get(2).routerAddress());
    // Router 0 given by another spelling of its address than the one router 1 lists it at: the
    // console keeps one entry per router, the first address found.
    String seed = "http://[::ffff:127.0.0.1]:" + routers.get(0).metricsAddress().getPort();
    console =
        new ConsoleServer(
            new Federation(List.of(seed), Federation.httpClient(null), null),
            new InetSocketAddress("127.0.0.1", 0));

    // Router 1 answers only once it lists router 0 (its link is up when router 0 lists router 1),
    // so a picture in which every address known has answered has followed that listing too.
    JsonNode p =
        awaitPicture(
            "three routers answering, and every address known read",
            pic -> {
              for (int r = 0; r < 3; r++) {
                JsonNode x = router(pic, r);
                if (x == null || !x.get("answering").asBoolean()) {
                  return false;
                }
              }
              for (JsonNode x : pic.get("routers")) {
                if (x.get("router").isNull()) {
                  return false;
                }
              }
              return true;
            });
    assertEquals(3, p.get("routers").size(), "one entry per router: " + p);
    for (int r = 1; r < 3; r++) {
      assertEquals(admin(routers.get(r)), router(p, r).get("admin").asText());
    }
    assertEquals(seed, router(p, 0).get("admin").asText());
  }

  private static String admin(Router r) {
    return "http://127.0.0.1:" + r.metricsAddress().getPort();
  }

  private HttpResponse<String> postTrace(String body) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(console.url() + "api/trace"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String traceRequest(int router, String message, String timeoutMs) {
    return JSON.createObjectNode()
        .put("router", router)
        .put("message", message)
        .toString()
        .replaceFirst("}$", timeoutMs == null ? "}" : ",\"timeoutMs\":" + timeoutMs + "}");
  }

  @Test
  void tracesAsAClientOfTheChosenRouterWithinItsBoundsAndSaysWhyNot() throws Exception {
    // Anonymous clients may publish only topic = "ok": a trace of anything else is refused.
    Router r =
        Router.start(
            RouterConfig.parse(
                "router: 3\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                    + " metrics: \"127.0.0.1:0\"}\nauth: {clients: {anonymous: {publish: 'topic ="
                    + " \"ok\"'}}}\n",
                "r3.yaml"));
    routers.add(r);
    console =
        new ConsoleServer(
            new Federation(
                List.of("http://127.0.0.1:" + r.metricsAddress().getPort()),
                Federation.httpClient(null),
                null),
            new InetSocketAddress("127.0.0.1", 0));
    awaitPicture("router 3 answering", pic -> router(pic, 3) != null);

    HttpResponse<String> ok = postTrace(traceRequest(3, "{\"topic\":\"ok\"}", "1000"));
    assertEquals(200, ok.statusCode(), ok.body());
    JsonNode answer = JSON.readTree(ok.body());
    assertEquals(3, answer.get("result").get("ingress").asInt(), ok.body());
    assertTrue(answer.get("result").get("complete").asBoolean(), ok.body());
    assertEquals(
        r.clientAddress().getPort(),
        Integer.parseInt(answer.get("address").asText().replaceFirst(".*:", "")));
    assertTrue(answer.get("text").asText().startsWith("trace "), ok.body());

    HttpResponse<String> refused = postTrace(traceRequest(3, "{\"topic\":\"secret\"}", null));
    assertEquals(403, refused.statusCode(), refused.body());
    assertTrue(
        JSON.readTree(refused.body()).get("error").asText().contains("refused the trace"),
        refused.body());

    assertEquals(400, postTrace(traceRequest(3, "{not json", null)).statusCode());
    assertEquals(400, postTrace(traceRequest(3, "{\"topic\":\"ok\"}", "60000")).statusCode());
    assertEquals(400, postTrace(traceRequest(3, "{\"topic\":\"ok\"}", "0")).statusCode());
    assertEquals(400, postTrace("[1]").statusCode());
    HttpResponse<String> unknown = postTrace(traceRequest(9, "{\"topic\":\"ok\"}", null));
    assertEquals(404, unknown.statusCode());
    assertTrue(unknown.body().contains("router 9"), unknown.body());
    String big = "{\"topic\":\"" + "x".repeat(Tracer.MAX_REQUEST_BYTES) + "\"}";
    assertEquals(413, postTrace(traceRequest(3, big, null)).statusCode());
    assertEquals(405, get("/api/trace", "GET").statusCode());
    assertEquals(
        415,
        HTTP.send(
                HttpRequest.newBuilder(URI.create(console.url() + "api/trace"))
                    .header("Content-Type", "text/plain")
                    .POST(HttpRequest.BodyPublishers.ofString(traceRequest(3, "{}", null)))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .statusCode(),
        "a request another site's page could send without a preflight");

    // The router stops: the console still knows its client address, and says it cannot reach it.
    r.close();
    HttpResponse<String> gone = postTrace(traceRequest(3, "{\"topic\":\"ok\"}", null));
    assertEquals(502, gone.statusCode(), gone.body());
    assertTrue(
        JSON.readTree(gone.body()).get("error").asText().startsWith("cannot reach router 3 at "),
        gone.body());
  }
}
