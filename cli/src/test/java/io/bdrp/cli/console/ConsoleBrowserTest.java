package io.bdrp.cli.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.Router;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.TraceReport;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (headless Chromium driven by Selenium) on a running federation
 * of 8 routers: the console, given router 0's admin address only, finds and draws every router and
 * link, marked by its DATA transport (one link goes by UDP); a router's panel lists its hosts; a
 * router that stops turns its links red and itself grey; a trace submitted from the page draws
 * exactly the copies, destinations and false positives that {@link BdrpClient#trace} reports for
 * the same message. Screenshots of each view go to {@code target/console/} (docs/console.md shows
 * them).
 *
 * <p>Skipped, with the reason, where Chromium or its driver is not installed (CI installs both).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConsoleBrowserTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path DRIVER = Path.of("/usr/bin/chromedriver");
  private static final Path SHOTS = Path.of("target", "console");

  private final List<Router> routers = new ArrayList<>();
  private final List<BdrpClient> clients = new ArrayList<>();
  private ConsoleServer console;
  private ChromeDriver browser;

  @AfterEach
  void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (console != null) {
      console.close();
    }
    clients.forEach(BdrpClient::close);
    routers.forEach(Router::close);
  }

  /**
   * Free loopback ports, to configure each router with its neighbours' admin addresses before it
   * binds them: taken below the kernel's ephemeral range (32768 up), whose ports any outgoing
   * connection may take as its local port in the meantime (a port the system handed out with bind
   * to port 0 was taken so once in CI). A port found busy is passed over for another.
   */
  static int[] freePorts(int n) {
    int[] ports = new int[n];
    java.util.SplittableRandom rnd = new java.util.SplittableRandom();
    int found = 0;
    while (found < n) {
      int p = 20_000 + rnd.nextInt(12_000);
      boolean taken = false;
      for (int i = 0; i < found; i++) {
        taken |= ports[i] == p;
      }
      if (taken) {
        continue;
      }
      try (ServerSocket s = new ServerSocket(p, 1, java.net.InetAddress.getLoopbackAddress())) {
        ports[found++] = s.getLocalPort();
      } catch (java.io.IOException busy) {
        // in use: another
      }
    }
    return ports;
  }

  /** The link whose DATA goes by UDP datagrams, drawn dotted: router 0's to router 5. */
  private static boolean isUdpLink(int a, int b) {
    return Math.min(a, b) == 0 && Math.max(a, b) == 5;
  }

  private void startFederation(Topology t) throws Exception {
    int n = t.nodeCount();
    int[] metrics = freePorts(n);
    RoutingConfig routing =
        RoutingConfig.builder()
            .helloIntervalMs(250)
            .deadIntervalMs(3_000)
            .updateIntervalMs(1_000)
            .routeExpiryMs(4_000)
            .maxRouters(64)
            .build();
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    for (int r = 0; r < n; r++) {
      List<RouterConfig.Neighbour> ns = new ArrayList<>();
      for (int x : t.neighbours(r)) {
        ns.add(
            new RouterConfig.Neighbour(
                x,
                null,
                1,
                isUdpLink(r, x) ? RouterConfig.LinkTransport.UDP : RouterConfig.LinkTransport.TCP,
                "http://127.0.0.1:" + metrics[x]));
      }
      RouterConfig c =
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
              .withMetrics(InetSocketAddress.createUnresolved("127.0.0.1", metrics[r]), null);
      routers.add(Router.start(c));
    }
    for (int a = 0; a < n; a++) {
      for (int b : t.neighbours(a)) {
        if (a < b) {
          routers.get(a).connect(b, routers.get(b).routerAddress());
        }
      }
    }
  }

  private ChromeDriver browser() {
    ChromeOptions o = new ChromeOptions();
    o.setBinary(CHROMIUM.toFile());
    o.addArguments(
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900");
    ChromeDriverService service =
        new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile()).build();
    return new ChromeDriver(service, o);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> summary() {
    return (Map<String, Object>)
        ((JavascriptExecutor) browser)
            .executeScript("return window.bdrpConsole ? window.bdrpConsole.summary() : null;");
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> s, String key) {
    return s == null ? List.of() : (List<Map<String, Object>>) s.get(key);
  }

  private void shot(String name) throws Exception {
    Files.createDirectories(SHOTS);
    Path png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
    Files.copy(png, SHOTS.resolve(name), StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void drawsTheWholeFederationItsHostsAndALinkThatGoesDown() throws Exception {
    chromiumOrSkip();
    Topology t = Bundled.load("routers-8");
    startFederation(t);
    // Hosts at router 0, and some traffic between routers.
    for (String name : List.of("sensor-a", "sensor-b", "dashboard")) {
      BdrpClient c =
          BdrpClient.builder().router(routers.get(0).clientAddress()).name(name).connect();
      clients.add(c);
    }
    BdrpClient far =
        BdrpClient.builder().router(routers.get(5).clientAddress()).name("far").connect();
    clients.add(far);
    clients.get(2).subscribe(Predicate.parse("exists(t)"), m -> {}).get(10, TimeUnit.SECONDS);
    far.subscribe(Predicate.parse("exists(t)"), m -> {}).get(10, TimeUnit.SECONDS);

    console =
        new ConsoleServer(
            new Federation(
                List.of("http://127.0.0.1:" + routers.get(0).metricsAddress().getPort()),
                Federation.httpClient(null),
                null),
            new InetSocketAddress("127.0.0.1", 0));
    browser = browser();
    browser.get(console.url());
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
    wait.pollingEvery(Duration.ofMillis(200));

    // Every router and every link, found from router 0 alone, all up.
    wait.withMessage("every router answering and every link up")
        .until(
            d -> {
              Map<String, Object> s = summary();
              List<Map<String, Object>> rs = list(s, "routers");
              List<Map<String, Object>> ls = list(s, "links");
              return rs.size() == t.nodeCount()
                  && rs.stream().allMatch(r -> Boolean.TRUE.equals(r.get("answering")))
                  && ls.size() == t.edgeCount()
                  && ls.stream().allMatch(l -> "up".equals(l.get("state")));
            });
    assertEquals(
        "udp",
        list(summary(), "links").stream()
            .filter(l -> "0-5".equals(l.get("id")))
            .findFirst()
            .orElseThrow()
            .get("transport"),
        "the link's DATA transport");
    // Messages of 2,000 bytes from router 0 for router 5's subscriber, 20 at each look (about
    // 200 kB/s), until their bytes show in a link's rate: once the subscriber's predicate has
    // reached router 0, far more than hellos and updates carry.
    byte[] body = new byte[2000];
    wait.withMessage("the messages' bytes in a link's rate")
        .until(
            d -> {
              for (int i = 0; i < 20; i++) {
                clients.get(0).send(Message.builder().put("t", (long) i).body(body).build());
              }
              return list(summary(), "links").stream()
                  .anyMatch(l -> ((Number) l.get("bytesPerSecond")).longValue() > 50_000);
            });
    shot("federation.png");

    // Router 0's panel: its hosts by name.
    ((JavascriptExecutor) browser).executeScript("window.bdrpConsole.select(0);");
    wait.withMessage("router 0's hosts in its panel")
        .until(
            d -> {
              List<String> names =
                  d.findElements(By.cssSelector("#panel-hosts .host-name")).stream()
                      .map(e -> e.getText())
                      .toList();
              return names.containsAll(List.of("sensor-a", "sensor-b", "dashboard"));
            });
    assertEquals("3", browser.findElement(By.id("panel-host-count")).getText());
    shot("router-panel.png");

    // Router 7 stops: its links turn red, it turns grey.
    int gone = 7;
    routers.get(gone).close();
    List<String> itsLinks = new ArrayList<>();
    for (int x : t.neighbours(gone)) {
      itsLinks.add(Math.min(x, gone) + "-" + Math.max(x, gone));
    }
    wait.withMessage("router " + gone + "'s links red and it grey")
        .until(
            d -> {
              Map<String, Object> s = summary();
              boolean linksRed =
                  list(s, "links").stream()
                      .filter(l -> itsLinks.contains(l.get("id")))
                      .allMatch(
                          l ->
                              "down".equals(l.get("state"))
                                  && "rgb(213,0,0)".equals(l.get("color")));
              boolean grey =
                  list(s, "routers").stream()
                      .anyMatch(
                          r ->
                              ((Number) r.get("router")).intValue() == gone
                                  && Boolean.FALSE.equals(r.get("answering")));
              return linksRed && grey;
            });
    long up = list(summary(), "links").stream().filter(l -> "up".equals(l.get("state"))).count();
    assertEquals(t.edgeCount() - itsLinks.size(), up, "the other links stay up");
    ((JavascriptExecutor) browser).executeScript("window.bdrpConsole.select(" + gone + ");");
    wait.withMessage("router " + gone + "'s panel says it does not answer")
        .until(d -> d.findElement(By.id("panel")).getText().contains("not answering"));
    shot("link-down.png");

    // The overlay a trace will use: routers and links marked on the graph.
    int next = t.neighbours(0)[0];
    ((JavascriptExecutor) browser)
        .executeScript("window.bdrpConsole.highlight([0, " + next + "], [[0, " + next + "]]);");
    Object marked =
        ((JavascriptExecutor) browser)
            .executeScript("return window.bdrpConsole.cy.elements('.highlight').length;");
    assertEquals(3L, ((Number) marked).longValue(), "two routers and their link marked");
    shot("highlight.png");
  }

  private void chromiumOrSkip() {
    assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
        "needs Chromium and its driver ("
            + CHROMIUM
            + ", "
            + DRIVER
            + "): apt-get install"
            + " chromium chromium-driver");
  }

  private BdrpClient subscriber(int router, String name, String predicate) throws Exception {
    BdrpClient c =
        BdrpClient.builder().router(routers.get(router).clientAddress()).name(name).connect();
    clients.add(c);
    c.subscribe(Predicate.parse(predicate), m -> {}).get(10, TimeUnit.SECONDS);
    return c;
  }

  /**
   * What the page must draw for {@code r}, in the form of {@code bdrpConsole.traceShown()}: the
   * ingress; each router of D that reported, with its matching hosts; the false positives; every
   * copy sent, as [from, to]; the routers that dropped; those that did not report.
   */
  private static Map<String, Object> expected(ClientFrame.TraceResult r) {
    Set<Integer> d = Arrays.stream(r.destinations()).boxed().collect(Collectors.toSet());
    Set<List<Long>> destinations = new HashSet<>();
    Set<List<Long>> copies = new HashSet<>();
    SortedSet<Long> drops = new TreeSet<>();
    for (TraceReport rep : r.reports()) {
      if (d.contains(rep.router())) {
        destinations.add(List.of((long) rep.router(), rep.matching()));
      }
      for (TraceReport.Copy c : rep.copies()) {
        if (c.sent()) {
          copies.add(List.of((long) rep.router(), (long) c.neighbour()));
        }
      }
      if (!rep.drops().isEmpty()) {
        drops.add((long) rep.router());
      }
    }
    return Map.of(
        "ingress", List.of((long) r.ingress()),
        "destinations", destinations,
        "falsePositives", sorted(r.falsePositives()),
        "copies", copies,
        "drops", List.copyOf(drops),
        "missing", sorted(r.missing()));
  }

  private static List<Long> sorted(int[] routers) {
    return Arrays.stream(routers).sorted().distinct().mapToObj(x -> (long) x).toList();
  }

  /**
   * {@code bdrpConsole.traceShown()} in the form of {@link #expected}, or null in the live view.
   */
  @SuppressWarnings("unchecked")
  private Map<String, Object> shown() {
    Map<String, Object> s =
        (Map<String, Object>)
            ((JavascriptExecutor) browser).executeScript("return window.bdrpConsole.traceShown();");
    if (s == null) {
      return null;
    }
    Set<List<Long>> destinations = new HashSet<>();
    for (Map<String, Object> x : (List<Map<String, Object>>) s.get("destinations")) {
      destinations.add(
          List.of(
              ((Number) x.get("router")).longValue(), ((Number) x.get("matching")).longValue()));
    }
    Set<List<Long>> copies = new HashSet<>();
    for (List<Number> c : (List<List<Number>>) s.get("copies")) {
      copies.add(List.of(c.get(0).longValue(), c.get(1).longValue()));
    }
    return Map.of(
        "ingress", s.get("ingress"),
        "destinations", destinations,
        "falsePositives", s.get("falsePositives"),
        "copies", copies,
        "drops", s.get("drops"),
        "missing", s.get("missing"));
  }

  private void submitTrace(String message, int router) {
    WebElement text = browser.findElement(By.id("trace-message"));
    text.clear();
    text.sendKeys(message);
    new Select(browser.findElement(By.id("trace-router"))).selectByValue(Integer.toString(router));
    browser.findElement(By.id("trace-run")).click();
  }

  @Test
  void drawsAMessagesTraceAsTheClientLibraryReportsIt() throws Exception {
    chromiumOrSkip();
    Topology t = Bundled.load("routers-8");
    startFederation(t);
    // Router 3: two hosts the message matches; router 6: one; router 7: one whose predicate the
    // message's Bloom filter covers (stock by value, price only as present) but does not match.
    subscriber(3, "alice", "stock = \"XYZ\" && price > 20");
    subscriber(3, "carol", "stock = \"XYZ\"");
    subscriber(6, "dave", "exists(stock)");
    subscriber(7, "bob", "stock = \"XYZ\" && price > 100");
    int ingress = 4;
    BdrpClient tracer =
        BdrpClient.builder()
            .router(routers.get(ingress).clientAddress())
            .name("direct-trace")
            .connect();
    clients.add(tracer);
    String json = "{\"stock\":\"XYZ\",\"price\":21.5}";
    Message message = Message.builder().put("stock", "XYZ").put("price", 21.5).build();

    console =
        new ConsoleServer(
            new Federation(
                List.of("http://127.0.0.1:" + routers.get(0).metricsAddress().getPort()),
                Federation.httpClient(null),
                null),
            new InetSocketAddress("127.0.0.1", 0));
    browser = browser();
    browser.get(console.url());
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
    wait.pollingEvery(Duration.ofMillis(300));
    // The subscriptions known at the ingress: the direct trace finds D = {3, 6, 7}, 7 false.
    ClientFrame.TraceResult[] direct = new ClientFrame.TraceResult[1];
    wait.withMessage("routers 3, 6 and 7 in the ingress's D, every router reporting")
        .until(
            d -> {
              try {
                direct[0] = tracer.trace(message).get(10, TimeUnit.SECONDS);
              } catch (Exception e) {
                throw new IllegalStateException("the direct trace failed", e);
              }
              return direct[0].complete()
                  && Arrays.equals(
                      new int[] {3, 6, 7},
                      sorted(direct[0].destinations()).stream().mapToInt(Long::intValue).toArray());
            });
    assertEquals(List.of(7L), sorted(direct[0].falsePositives()), "router 7's host does not match");
    wait.withMessage("every router in the page's list")
        .until(d -> d.findElements(By.cssSelector("#trace-router option")).size() == t.nodeCount());

    submitTrace(json, ingress);
    wait.withMessage("the trace drawn").until(d -> shown() != null);
    Map<String, Object> want = expected(direct[0]);
    assertEquals(want, shown(), "the page draws what BdrpClient.trace reports");
    assertEquals(
        Set.of(List.of(3L, 2L), List.of(6L, 1L), List.of(7L, 0L)),
        want.get("destinations"),
        "matching hosts per destination");
    String side = browser.findElement(By.id("trace-result")).getText();
    assertTrue(side.contains("false positive"), side);
    assertTrue(side.contains("alice #"), "the tree of bdrp trace, with host names: " + side);
    String polled = browser.findElement(By.id("status")).getText();
    wait.withMessage("the next poll drawn under the trace")
        .until(d -> !d.findElement(By.id("status")).getText().equals(polled));
    assertEquals(want, shown(), "the trace stays drawn while the page polls");
    shot("trace.png");

    // Drops, a copy not sent and routers that did not report, in a result of the same layout:
    // the ingress's copy to 6 not taken (a link drop), router 3 silent.
    ((JavascriptExecutor) browser)
        .executeScript(
            "window.bdrpConsole.showTrace({router: 4, address: 'x', text: '', result: {traceId:"
                + " '1', ingress: 4, complete: false, destinations: [3, 6], falsePositives: [],"
                + " missing: [3], matchingHosts: 0, reports: [{router: 4, from: null, hopLimit: 64,"
                + " broadcast: false, local: true, matching: 0, hosts: [], copies: [{neighbour: 2,"
                + " sent: true, fastPath: false, routers: [3]}, {neighbour: 6, sent: false,"
                + " fastPath: false, routers: [6]}], drops: [{reason: 'link', count: 1, routers:"
                + " [6]}]}, {router: 2, from: 4, hopLimit: 64, broadcast: false, local: false,"
                + " matching: 0, hosts: [], copies: [{neighbour: 3, sent: true, fastPath: false,"
                + " routers: [3]}], drops: []}]}});");
    @SuppressWarnings("unchecked")
    Map<String, Object> partial =
        (Map<String, Object>)
            ((JavascriptExecutor) browser).executeScript("return window.bdrpConsole.traceShown();");
    assertEquals(List.of(4L), partial.get("drops"), "the router that dropped");
    assertEquals(List.of(List.of(4L, 6L)), partial.get("unsent"), "the copy not sent");
    assertEquals(List.of(3L), partial.get("missing"), "the router that did not report");
    assertEquals(List.of(6L), partial.get("unreached"), "in D, reached by no copy");
    assertEquals(List.of(2L), partial.get("transit"));
    String table = browser.findElement(By.id("trace-routers")).getText();
    assertTrue(table.contains("link ×1 {6}") && table.contains("no report"), table);

    // A message that is not JSON: a clear error on the page, and the live view.
    submitTrace("{not json", ingress);
    wait.withMessage("the error shown").until(d -> !d.findElements(By.id("trace-error")).isEmpty());
    String error = browser.findElement(By.id("trace-error")).getText();
    assertTrue(error.contains("not JSON"), error);
    assertNull(shown(), "no trace drawn after an error");
    // A timeout above the console's bound: refused, saying so.
    WebElement timeout = browser.findElement(By.id("trace-timeout"));
    timeout.clear();
    timeout.sendKeys("60000");
    submitTrace(json, ingress);
    wait.withMessage("the timeout refused")
        .until(
            d ->
                d.findElements(By.id("trace-error")).stream()
                    .anyMatch(e -> e.getText().contains("timeout must be from 1 to 10000 ms")));
    timeout.clear();
    timeout.sendKeys("2000");

    // Clear returns to the live view.
    submitTrace(json, ingress);
    wait.withMessage("the trace drawn again").until(d -> shown() != null);
    browser.findElement(By.id("trace-clear")).click();
    assertNull(shown());
    Object faded =
        ((JavascriptExecutor) browser)
            .executeScript(
                "return window.bdrpConsole.cy.elements('.trace-faded, .trace-copy, .trace-node').length;");
    assertEquals(0L, ((Number) faded).longValue(), "nothing of the trace left on the graph");
  }
}
