package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.RouterHello;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A neighbour whose hello differs in a network-wide parameter is refused with INCOMPATIBLE_PEER, a
 * reason that names the parameter and both values, and a counter by parameter. One test per
 * parameter: a raw peer reads the ERROR frame; where two real routers can differ in it, both are
 * started and both count the refusal.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HelloChecksTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);
  private static final BloomParameters BLOOM = BloomParameters.DEFAULT;
  private final List<Router> routers = new ArrayList<>();

  @AfterEach
  void stop() {
    routers.forEach(Router::close);
  }

  private Router start(int number, int neighbour, int maxRouters, BloomParameters bloom)
      throws InterruptedException {
    RoutingConfig routing = RoutingConfig.builder().maxRouters(maxRouters).build();
    Router r =
        Router.start(
            new RouterConfig(
                number,
                1,
                ANY,
                ANY,
                null,
                List.of(new RouterConfig.Neighbour(neighbour, null, 1)),
                routing,
                bloom,
                RouterLimits.DEFAULT,
                "secret"));
    routers.add(r);
    return r;
  }

  private static long refused(Router r, String parameter) {
    return Federation.linkRefused(r, parameter);
  }

  private static long incompatibleErrors(Router r) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_protocol_errors_total\\{code=\"incompatible_peer\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** Sends {@code hello} to router 0 of a 64-router network and returns the ERROR it answers. */
  private ClientFrame.Error refusalOf(RouterHello hello) throws Exception {
    Router r = start(0, 1, 64, BLOOM);
    ClientFrame.Error e = null;
    try (Socket s = new Socket("127.0.0.1", r.routerAddress().getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(RawFrames.router(hello));
      s.getOutputStream().flush();
      // The router greets first with its own hello; then comes the refusal, then the close.
      e = RawFrames.firstError(s.getInputStream(), 3);
      assertNotNull(e, "an ERROR frame for " + hello);
      assertEquals(-1, s.getInputStream().read(), "the router closed the session");
    }
    return e;
  }

  private void expectRefusal(RouterHello hello, String parameter, String... mentions)
      throws Exception {
    ClientFrame.Error e = refusalOf(hello);
    assertEquals(ErrorCode.INCOMPATIBLE_PEER.number(), e.code(), e.toString());
    for (String s : mentions) {
      assertTrue(e.message().contains(s), "'" + e.message() + "' mentions " + s);
    }
    Router r = routers.get(0);
    assertEquals(1, refused(r, parameter), r.metricsText());
    assertEquals(1, incompatibleErrors(r));
  }

  private static RouterHello hello(int protocol, int router, int maxRouters, BloomParameters b) {
    return new RouterHello(
        protocol,
        router,
        5,
        maxRouters,
        b,
        0,
        "secret".getBytes(),
        io.bdrp.transport.UdpProtection.NONE,
        new byte[0]);
  }

  /** Starts two routers that differ as given and waits until each has refused the other. */
  private void bothRefuse(
      int a, int b, int maxA, int maxB, BloomParameters bloomA, BloomParameters bloomB, String p)
      throws Exception {
    Router ra = start(a, b, maxA, bloomA);
    Router rb = start(b, a, maxB, bloomB);
    ra.connect(b, rb.routerAddress());
    rb.connect(a, ra.routerAddress());
    Federation.await(
        "both routers to refuse the other over " + p,
        () -> refused(ra, p) >= 1 && refused(rb, p) >= 1);
    assertEquals(0, ra.view().reachable().length, "no route over a refused link");
    assertEquals(0, rb.view().reachable().length, "no route over a refused link");
  }

  @Test
  void otherProtocolRevision() throws Exception {
    expectRefusal(
        hello(RouterHello.PROTOCOL + 1, 1, 64, BLOOM),
        "protocol",
        "protocol",
        Integer.toString(RouterHello.PROTOCOL + 1),
        Integer.toString(RouterHello.PROTOCOL));
  }

  @Test
  void ownRouterNumber() throws Exception {
    expectRefusal(hello(RouterHello.PROTOCOL, 0, 64, BLOOM), "router", "number 0", "own");
  }

  @Test
  void twoRoutersWithOneNumber() throws Exception {
    // Each is router 3 and expects neighbour 4 at the other's address: each sees its own number.
    Router ra = start(3, 4, 64, BLOOM);
    Router rb = start(3, 4, 64, BLOOM);
    ra.connect(4, rb.routerAddress());
    rb.connect(4, ra.routerAddress());
    Federation.await(
        "both routers to refuse the other's number",
        () -> refused(ra, "router") >= 1 && refused(rb, "router") >= 1);
  }

  @Test
  void routerNumberOutOfRange() throws Exception {
    expectRefusal(hello(RouterHello.PROTOCOL, 64, 64, BLOOM), "router", "router 64", "0..63");
  }

  @Test
  void otherMaxRouters() throws Exception {
    expectRefusal(
        hello(RouterHello.PROTOCOL, 1, 128, BLOOM),
        "routing.maxRouters",
        "maxRouters",
        "128",
        "64");
  }

  @Test
  void twoRoutersWithOtherMaxRouters() throws Exception {
    bothRefuse(1, 2, 64, 128, BLOOM, BLOOM, "routing.maxRouters");
  }

  @Test
  void otherBloomBits() throws Exception {
    BloomParameters other = new BloomParameters(BLOOM.bits() / 2, BLOOM.hashes());
    expectRefusal(
        hello(RouterHello.PROTOCOL, 1, 64, other),
        "bloom.bits",
        "bloom.bits",
        Integer.toString(other.bits()),
        Integer.toString(BLOOM.bits()));
  }

  @Test
  void twoRoutersWithOtherBloomBits() throws Exception {
    BloomParameters other = new BloomParameters(BLOOM.bits() / 2, BLOOM.hashes());
    bothRefuse(1, 2, 64, 64, BLOOM, other, "bloom.bits");
  }

  @Test
  void otherCategories() throws Exception {
    BloomParameters other = BLOOM.withCategories(CategoryScheme.PAPER);
    expectRefusal(
        hello(RouterHello.PROTOCOL, 1, 64, other),
        "bloom.categories",
        "bloom.categories differs: the neighbour has paper, this router sharp");
  }

  @Test
  void otherBloomHashes() throws Exception {
    BloomParameters other = new BloomParameters(BLOOM.bits(), BLOOM.hashes() + 1);
    expectRefusal(
        hello(RouterHello.PROTOCOL, 1, 64, other),
        "bloom.hashes",
        "bloom.hashes",
        Integer.toString(other.hashes()),
        Integer.toString(BLOOM.hashes()));
  }

  @Test
  void twoRoutersWithOtherBloomHashes() throws Exception {
    BloomParameters other = new BloomParameters(BLOOM.bits(), BLOOM.hashes() + 1);
    bothRefuse(1, 2, 64, 64, BLOOM, other, "bloom.hashes");
  }
}
