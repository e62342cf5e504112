package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.links.RouterLinks;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * What an operator reads in the log about links, at WARN with the reason: a neighbour that cannot
 * be reached (once, not every redial), a neighbour refused for its token; and at DEBUG a line per
 * frame (client frames, control messages both ways, DATA).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OperationalLogTest {
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger links = (Logger) LoggerFactory.getLogger(RouterLinks.class);
  private final List<Router> routers = new ArrayList<>();

  private Level level;

  @BeforeEach
  void capture() {
    level = links.getLevel();
    links.setLevel(Level.DEBUG); // the redials' lines too
    log.start();
    links.addAppender(log);
  }

  @AfterEach
  void stop() {
    routers.forEach(Router::close);
    links.detachAppender(log);
    links.setLevel(level);
  }

  private List<String> lines(Level at, String containing) {
    // AppenderBase.doAppend holds the appender's lock while it adds to the list.
    synchronized (log) {
      return log.list.stream()
          .filter(e -> e.getLevel() == at)
          .map(ILoggingEvent::getFormattedMessage)
          .filter(m -> m.contains(containing))
          .toList();
    }
  }

  private List<String> warnings(String containing) {
    return lines(Level.WARN, containing);
  }

  private Router start(int number, int neighbour, InetSocketAddress address, String token)
      throws InterruptedException {
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    Router r =
        Router.start(
            new RouterConfig(
                number,
                System.currentTimeMillis(),
                any,
                any,
                null,
                List.of(new RouterConfig.Neighbour(neighbour, address, 1)),
                Federation.FAST,
                BloomParameters.DEFAULT,
                RouterLimits.DEFAULT,
                token));
    routers.add(r);
    return r;
  }

  @Test
  void aClientPortBeyondLoopbackWithoutAuthOrTlsIsWarnedOfAsConfiguredInAFile() throws Exception {
    Logger routerLog = (Logger) LoggerFactory.getLogger(Router.class);
    routerLog.addAppender(log);
    try {
      // Read from YAML, the listen address is unresolved until the router binds it.
      routers.add(
          Router.start(
              RouterConfig.parse(
                  "router: 0\nlisten: {clients: \"0.0.0.0:0\", routers: \"127.0.0.1:0\"}\n",
                  "test")));
      assertEquals(1, warnings("speaks plain TCP beyond loopback").size(), log.list::toString);
      assertEquals(1, warnings("the config has no auth.clients").size(), log.list::toString);
    } finally {
      routerLog.detachAppender(log);
    }
  }

  /**
   * A router port beyond loopback without a router token or mutual TLS lets any process claim any
   * router number: the router says so (it used to say nothing), and not when a token guards it.
   */
  @Test
  void aRouterPortWhereRouterNumbersAreUnauthenticatedIsWarnedOf() throws Exception {
    Logger routerLog = (Logger) LoggerFactory.getLogger(Router.class);
    routerLog.addAppender(log);
    try {
      routers.add(
          Router.start(
              RouterConfig.parse(
                  "router: 0\nlisten: {clients: \"127.0.0.1:0\", routers: \"0.0.0.0:0\"}\n",
                  "test")));
      assertEquals(1, warnings("under any router number it claims").size(), log.list::toString);
      routers.add(
          Router.start(
              RouterConfig.parse(
                  "router: 1\nlisten: {clients: \"127.0.0.1:0\", routers: \"0.0.0.0:0\"}\n"
                      + "auth: {routerToken: s3cret}\n",
                  "test")));
      assertEquals(1, warnings("under any router number it claims").size(), log.list::toString);
    } finally {
      routerLog.detachAppender(log);
    }
  }

  @Test
  void anUnreachableNeighbourIsReportedOnceWithTheReasonNotOnEveryRedial() throws Exception {
    // Unresolved, as a neighbour's address read from a configuration file is.
    start(0, 1, InetSocketAddress.createUnresolved("127.0.0.1", 1), null);
    // Redials follow every second, each a DEBUG line; after three of them, still one WARN.
    Federation.await(
        "three redials after the first failure",
        () -> lines(Level.DEBUG, "cannot reach router 1").size() >= 3);
    List<String> w = warnings("cannot reach router 1");
    assertEquals(1, w.size(), w::toString);
    assertTrue(w.get(0).contains("at 127.0.0.1:1: ") && w.get(0).contains("refused"), w.get(0));
  }

  @Test
  void aNeighbourRefusedForItsTokenIsReportedWithTheReason() throws Exception {
    Router a = start(0, 1, null, "secret");
    start(1, 0, a.routerAddress(), "other");
    Federation.await("the refusal reported", () -> !warnings("token").isEmpty());
    assertTrue(
        warnings("token").stream().anyMatch(m -> m.contains("router 1")),
        () -> warnings("token").toString());
  }

  @Test
  void debugAddsALineForEveryFrame() throws Exception {
    Logger routers = (Logger) LoggerFactory.getLogger("io.bdrp.router");
    Level was = routers.getLevel();
    ListAppender<ILoggingEvent> all = new ListAppender<>();
    all.start();
    routers.addAppender(all);
    routers.setLevel(Level.DEBUG);
    try (Federation f = new Federation(io.bdrp.topologies.Bundled.load("routers-2"))) {
      f.awaitRoutes();
      io.bdrp.client.BdrpClient sub = f.client(1, "watcher");
      io.bdrp.client.BdrpClient pub = f.client(0, "teller");
      java.util.List<io.bdrp.encoding.Message> got =
          new java.util.concurrent.CopyOnWriteArrayList<>();
      sub.subscribe(io.bdrp.encoding.Predicate.parse("x = 7"), got::add).get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      pub.send(io.bdrp.encoding.Message.builder().put("x", 7L).build()).get(10, TimeUnit.SECONDS);
      Federation.await("the message", () -> got.size() == 1);
    } finally {
      routers.detachAppender(all);
      routers.setLevel(was);
    }
    List<String> debug;
    synchronized (all.list) {
      debug =
          all.list.stream()
              .filter(e -> e.getLevel() == Level.DEBUG)
              .map(ILoggingEvent::getFormattedMessage)
              .toList();
    }
    // The client frames, the control messages both ways, and the DATA frame in transit.
    assertTrue(
        debug.stream()
            .anyMatch(
                l -> l.matches("router 1: client \\d+ \\(watcher\\) set its predicate to x = 7")),
        () -> String.join("\n", debug));
    assertTrue(
        debug.stream()
            .anyMatch(l -> l.startsWith("router 0: client ") && l.contains("(teller) published")),
        () -> String.join("\n", debug));
    assertTrue(
        debug.stream().anyMatch(l -> l.startsWith("router 0: from router 1: ")),
        () -> String.join("\n", debug));
    assertTrue(
        debug.stream().anyMatch(l -> l.startsWith("to router 1: ")),
        () -> String.join("\n", debug));
    assertTrue(
        debug.stream()
            .anyMatch(l -> l.startsWith("router 1: DATA from router 0 over tcp: source router 0")),
        () -> String.join("\n", debug));
  }
}
