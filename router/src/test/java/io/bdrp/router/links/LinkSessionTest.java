package io.bdrp.router.links;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.EmbeddedCore;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.AdminEndpoint;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolErrorCounters;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.TransportEndpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A router link's session handler on an {@link EmbeddedChannel}, fed decoded frames as the
 * pipeline's decoders hand them over: the hello checks (first frame, configured neighbour, token),
 * the link attached and every transport told on a valid hello and on the session's end, DATA handed
 * to the receiver as TCP's, control messages checked for their sender, PINGs answered.
 */
class LinkSessionTest {
  private static final String TOKEN = "link-secret";

  /** A transport that records the links it is told of and gives each a path of its own. */
  private static final class Recording implements DataTransport {
    final List<Peer> up = new ArrayList<>();
    final List<Link> down = new ArrayList<>();
    final DataPath path =
        new DataPath() {
          @Override
          public Outcome send(
              int hopLimit, int source, long messageId, long[] d, int words, MessageBytes m) {
            return Outcome.SENT;
          }

          @Override
          public RouterConfig.LinkTransport transport() {
            return RouterConfig.LinkTransport.UDP;
          }

          @Override
          public String describe() {
            return "a test's path";
          }
        };

    @Override
    public String name() {
      return "recording";
    }

    @Override
    public void start() {}

    @Override
    public DataPath linkUp(Link l, Peer peer) {
      up.add(peer);
      return path;
    }

    @Override
    public void linkDown(Link l) {
      down.add(l);
    }

    @Override
    public void close() {}
  }

  private final Recording transport = new Recording();
  private final List<String> received = new ArrayList<>();
  private RouterConfig config;
  private RouterMetrics metrics;
  private RouterLinks links;
  private Link neighbour;
  private EmbeddedChannel session;
  private InetSocketAddress adminListen; // this router's admin API, as its hellos tell it

  @BeforeEach
  void setUp() {
    setUp("");
  }

  /** A router 0 with {@code more} in its configuration, and the session of its neighbour 1. */
  private void setUp(String more) {
    config =
        RouterConfig.parse(
            "router: 0\n"
                + "auth: {routerToken: "
                + TOKEN
                + "}\n"
                + "neighbours: [{router: 1, address: '127.0.0.1:1'}]\n"
                + more,
            "test");
    // A TCP session's remote address, as the transports read it.
    session =
        new EmbeddedChannel() {
          @Override
          protected SocketAddress remoteAddress0() {
            return new InetSocketAddress("127.0.0.1", 7401);
          }

          @Override
          protected SocketAddress localAddress0() {
            return new InetSocketAddress("127.0.0.1", 7400);
          }
        };
    RouterCore core = EmbeddedCore.of(config, session);
    RoutingNode node = core.node();
    metrics = core.metrics();
    ProtocolErrorCounters errors = core.errors();
    links =
        new RouterLinks(
            core,
            List.of(transport),
            () -> 0,
            () -> adminListen,
            () -> null,
            null,
            (from, frame, how) ->
                received.add(
                    from.neighbour() + " " + how + " " + frame.toString(StandardCharsets.UTF_8)));
    neighbour =
        new Link(
            config.neighbours().get(0),
            metrics,
            RouterLinks.controlBudget(config.limits()),
            config.limits().linkHighWaterBytes(),
            Runnable::run);
    links.byNumber[1] = neighbour;
    node.addLink(neighbour, 1);
    // An accepted session: the neighbour dialled.
    session
        .pipeline()
        .addLast(new LinkSession(links, null))
        .addLast(new ProtocolErrorHandler(errors));
    session.pipeline().fireChannelActive();
  }

  @AfterEach
  void tearDown() {
    session.finishAndReleaseAll();
  }

  private RouterHello hello(int router, String token) {
    return new RouterHello(
        router,
        System.currentTimeMillis(),
        config.routing().maxRouters(),
        config.bloom(),
        0,
        token.getBytes(StandardCharsets.UTF_8));
  }

  /** The frames the session wrote since last asked. */
  private List<Object> written() {
    List<Object> out = new ArrayList<>();
    for (Object o; (o = session.readOutbound()) != null; ) {
      out.add(o);
    }
    return out;
  }

  private ClientFrame.Error refusal() {
    List<Object> out = written();
    return (ClientFrame.Error)
        out.stream()
            .filter(o -> o instanceof ClientFrame.Error)
            .findFirst()
            .orElseThrow(() -> new AssertionError("no ERROR written: " + out));
  }

  @Test
  void anAcceptedSessionAnswersOnlyAHelloThatPassesItsChecks() {
    assertNull(session.readOutbound(), "the dialler speaks first");
    session.writeInbound(hello(1, TOKEN));
    RouterHello own = assertInstanceOf(RouterHello.class, session.readOutbound());
    assertEquals(0, own.routerNumber());
    assertEquals(TOKEN, new String(own.authToken(), StandardCharsets.UTF_8));
  }

  @Test
  void anIncompatibleDiallerIsAnsweredWithThisRoutersParametersThenRefused() {
    adminListen = new InetSocketAddress("127.0.0.1", 9400); // told to neighbours only
    RouterHello other =
        new RouterHello(
            1,
            System.currentTimeMillis(),
            config.routing().maxRouters() / 2,
            config.bloom(),
            0,
            TOKEN.getBytes(StandardCharsets.UTF_8));
    session.writeInbound(other);
    List<Object> out = written();
    RouterHello own =
        assertInstanceOf(
            RouterHello.class, out.get(0), "its parameters, for the dialler's own check");
    assertNull(AdminEndpoint.of(own), "nothing of its admin API to a router it refuses");
    assertEquals(
        ErrorCode.INCOMPATIBLE_PEER,
        assertInstanceOf(ClientFrame.Error.class, out.get(1)).knownCode().orElseThrow());
    assertEquals(1, metrics.linkRefused("routing.maxRouters").get());
    assertNull(neighbour.session);
  }

  @Test
  void aFirstFrameOtherThanAHelloIsAProtocolViolation() {
    session.writeInbound(new ClientFrame.Ping(7));
    assertEquals(ErrorCode.PROTOCOL_VIOLATION, refusal().knownCode().orElseThrow());
    assertFalse(session.isActive());
    assertNull(neighbour.session);
  }

  @Test
  void aRouterThatIsNotAConfiguredNeighbourIsRefusedAndCounted() {
    session.writeInbound(hello(5, TOKEN));
    assertEquals(ErrorCode.NOT_AUTHORIZED, refusal().knownCode().orElseThrow());
    assertEquals(1, metrics.linkRefused("neighbour").get());
    assertFalse(session.isActive());
    assertTrue(transport.up.isEmpty());
  }

  @Test
  void aWrongTokenIsRefusedAndCounted() {
    session.writeInbound(hello(1, "not-the-token"));
    assertEquals(ErrorCode.NOT_AUTHORIZED, refusal().knownCode().orElseThrow());
    assertEquals(1, metrics.linkRefused("token").get());
    assertNull(neighbour.session);
  }

  @Test
  void aValidHelloAttachesTheLinkAndTellsEveryTransport() {
    session.writeInbound(hello(1, TOKEN));
    List<Object> out = written();
    assertSame(session, neighbour.session, () -> "written: " + out);
    assertEquals(1, transport.up.size(), () -> "written: " + out);
    assertEquals(1, transport.up.get(0).hello().routerNumber());
    assertEquals(new InetSocketAddress("127.0.0.1", 7401), transport.up.get(0).remote());
    assertSame(transport.path, neighbour.path, "the transport's path is the link's way for DATA");
    assertTrue(session.isActive());

    session.close();
    assertNull(neighbour.session);
    assertEquals(List.of(neighbour), transport.down);
    assertNull(neighbour.path);
  }

  @Test
  void dataAfterTheHelloGoesToTheReceiverAsTcpAndIsReleased() {
    session.writeInbound(hello(1, TOKEN));
    ByteBuf frame = Unpooled.copiedBuffer("data", StandardCharsets.UTF_8);
    session.writeInbound(frame);
    assertEquals(List.of("1 tcp data"), received);
    assertEquals(0, frame.refCnt(), "the session releases the frame once the receiver is done");
  }

  @Test
  void aControlMessageNamingAnotherSenderIsAProtocolViolation() {
    session.writeInbound(hello(1, TOKEN));
    written();
    session.writeInbound(new ControlMessage.PredicateRequest(2, 0));
    assertEquals(ErrorCode.PROTOCOL_VIOLATION, refusal().knownCode().orElseThrow());
    assertFalse(session.isActive());
    assertNull(neighbour.session, "the link is detached when its session ends");
  }

  @Test
  void aPingIsAnsweredWithItsNonce() {
    session.writeInbound(hello(1, TOKEN));
    written();
    session.writeInbound(new ClientFrame.Ping(42));
    List<Object> out = written();
    assertEquals(List.of(new ClientFrame.Pong(42)), out);
  }

  @Test
  void aNeighbourOverItsControlRateIsReadNoFasterAndLosesNothing() {
    tearDown();
    setUp("limits: {linkControlFramesPerSecond: 100}\n"); // bursts of 10, then one per 10 ms
    session.freezeTime();
    session.writeInbound(hello(1, TOKEN));
    session.writeInbound(new ControlMessage.Hello(1, System.currentTimeMillis(), config.epoch()));
    written();
    advance(1000); // the bucket full again
    // One read's worth of frames: 250 PINGs with a TABLE_REQUEST after the 150th.
    List<Object> frames = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      frames.add(new ClientFrame.Ping(i));
      if (i == 149) {
        frames.add(new ControlMessage.TableRequest(1));
      }
    }
    session.writeInbound(frames.toArray());
    assertEquals(pongs(0, 10), pongsWritten(), "a burst is taken at once");
    assertFalse(session.config().isAutoRead(), "the link is not read while frames wait");
    assertEquals(241, metrics.linkControlThrottled("1").get());

    advance(500);
    assertEquals(pongs(10, 60), pongsWritten(), "then at the rate, in order");
    advance(900);
    assertEquals(pongs(60, 150), pongsWritten());
    assertEquals(0, links.core.node().unicast().tablesRequested());
    advance(10);
    assertEquals(1, links.core.node().unicast().tablesRequested(), "control messages wait too");
    assertFalse(session.config().isAutoRead());

    advance(1000);
    assertEquals(pongs(150, 250), pongsWritten(), "nothing lost");
    assertTrue(session.config().isAutoRead(), "read again once none wait");
    assertTrue(session.isActive());
    assertEquals(241, metrics.linkControlThrottled("1").get());

    advance(1000);
    session.writeInbound(new ClientFrame.Ping(7));
    assertEquals(List.of(new ClientFrame.Pong(7)), pongsWritten(), "taken at once again");
  }

  /** Moves the session's clock on by {@code ms}, a millisecond at a time, running what is due. */
  private void advance(int ms) {
    for (int i = 0; i < ms; i++) {
      session.advanceTimeBy(1, TimeUnit.MILLISECONDS);
      session.runScheduledPendingTasks();
    }
  }

  /** The PONGs among the frames written since last asked. */
  private List<Object> pongsWritten() {
    return written().stream().filter(o -> o instanceof ClientFrame.Pong).toList();
  }

  private static List<Object> pongs(int from, int to) {
    List<Object> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(new ClientFrame.Pong(i));
    }
    return out;
  }

  @Test
  void aHelloThatTellsItsAdminPortGivesTheNeighboursAdminUrlAtTheSessionsAddress() {
    session.writeInbound(
        hello(1, TOKEN).withEndpoints(List.of(new AdminEndpoint(9401, false).toEndpoint())));
    assertSame(session, neighbour.session);
    assertEquals("http://127.0.0.1:9401", neighbour.advertisedAdmin);
    session.close();
    assertEquals(
        "http://127.0.0.1:9401",
        neighbour.advertisedAdmin,
        "kept from the last session while down");
  }

  @Test
  void aHelloWithoutAnAdminEndpointTellsNone() {
    neighbour.advertisedAdmin = "http://127.0.0.1:9401"; // from an earlier session
    session.writeInbound(hello(1, TOKEN));
    assertSame(session, neighbour.session);
    assertNull(neighbour.advertisedAdmin, "the live session's hello is the one that counts");
    assertEquals(0, metrics.helloIgnored("admin").get());
  }

  @Test
  void aMalformedAdminEndpointIsIgnoredAndCountedAndTheLinkComesUp() {
    byte[][] bad = {{0, 0, 0}, {0x24, (byte) 0xb9, 2}, {0x24, (byte) 0xb9}};
    for (int i = 0; i < bad.length; i++) {
      if (i > 0) {
        setUp(); // a fresh session and router for each
      }
      session.writeInbound(
          hello(1, TOKEN).withEndpoints(List.of(new TransportEndpoint("admin", bad[i]))));
      assertSame(session, neighbour.session, "case " + i);
      assertTrue(session.isActive(), "case " + i);
      assertEquals(1, transport.up.size() - i, "case " + i);
      assertNull(neighbour.advertisedAdmin, "case " + i);
      assertEquals(1, metrics.helloIgnored("admin").get(), "case " + i);
      tearDown();
    }
  }

  @Test
  void theOwnHelloTellsTheAdminPortOnlyWhereTheNeighbourCanReachIt() throws Exception {
    assertNull(links.adminEndpoint(new InetSocketAddress("127.0.0.1", 7400)), "no metrics port");
    session.writeInbound(hello(1, TOKEN));
    assertNull(AdminEndpoint.of((RouterHello) written().get(0)));
    tearDown();

    setUp();
    adminListen = new InetSocketAddress("127.0.0.1", 9400);
    session.writeInbound(hello(1, TOKEN));
    RouterHello own = assertInstanceOf(RouterHello.class, written().get(0));
    assertEquals(new AdminEndpoint(9400, false), AdminEndpoint.of(own));

    InetSocketAddress v4 = new InetSocketAddress("10.0.0.1", 7400);
    InetSocketAddress v6 = new InetSocketAddress("2001:db8::1", 7400);
    assertNull(links.adminEndpoint(v4), "metrics on loopback, the session on another address");
    adminListen = new InetSocketAddress("10.0.0.1", 9400);
    assertEquals(new AdminEndpoint(9400, false).toEndpoint(), links.adminEndpoint(v4));
    assertNull(links.adminEndpoint(v6));
    adminListen = new InetSocketAddress("0.0.0.0", 9400);
    assertEquals(new AdminEndpoint(9400, false).toEndpoint(), links.adminEndpoint(v4));
    assertNull(links.adminEndpoint(v6), "an IPv4 wildcard is not reached over IPv6");
    adminListen = new InetSocketAddress("::", 9400);
    assertEquals(new AdminEndpoint(9400, false).toEndpoint(), links.adminEndpoint(v6));
    assertEquals(new AdminEndpoint(9400, false).toEndpoint(), links.adminEndpoint(v4));
    assertNull(links.adminEndpoint(null), "a session whose local end is not known");
  }
}
