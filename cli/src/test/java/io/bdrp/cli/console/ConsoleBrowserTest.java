package io.bdrp.cli.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (headless Chromium driven by Selenium) on a running federation
 * of 8 routers: the console, given router 0's admin address only, finds and draws every router and
 * link, marked by its DATA transport (one link goes by UDP); a router's panel lists its hosts; a
 * router that stops turns its links red and itself grey. Screenshots of each view go to {@code
 * target/console/} (docs/console.md shows them).
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

  /** Free loopback ports, to configure each router with its neighbours' admin addresses. */
  private static int[] freePorts(int n) throws Exception {
    int[] ports = new int[n];
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
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
    assumeTrue(
        Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
        "needs Chromium and its driver ("
            + CHROMIUM
            + ", "
            + DRIVER
            + "): apt-get install"
            + " chromium chromium-driver");
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
}
