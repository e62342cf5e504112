package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.ControlMessage;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.RouterHello;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a client or peer can make a router hold is bounded by its configuration, not by what the
 * peer sends: one test per way found to exhaust or confuse a router, each with a well-behaved
 * client or neighbour that must keep being served.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HardeningTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);
  private static final BloomParameters BLOOM = BloomParameters.DEFAULT;
  private final List<Router> routers = new ArrayList<>();
  private final List<BdrpClient> clients = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    clients.forEach(BdrpClient::close);
    routers.forEach(Router::close);
  }

  /** The default limits with small water marks and short timers. */
  private static RouterLimits limits(
      int hostHighWater, int slowConsumerMs, int helloTimeoutMs, int maxHandshakes, int inbound) {
    RouterLimits d = RouterLimits.DEFAULT;
    return new RouterLimits(
        64 * 1024,
        d.linkHighWaterBytes(),
        d.linkLowWaterBytes(),
        hostHighWater,
        hostHighWater / 2,
        d.maxClients(),
        d.maxDatagramBytes(),
        d.udpReceiveBufferBytes(),
        d.udpSendBufferBytes(),
        helloTimeoutMs,
        maxHandshakes,
        slowConsumerMs,
        inbound,
        d.linkControlPercent(),
        d.linkControlFramesPerSecond(),
        d.ringBytes(),
        d.ringWatermarkBytes(),
        d.hosts());
  }

  private Router start(int number, List<Integer> neighbours, RouterLimits limits)
      throws InterruptedException {
    List<RouterConfig.Neighbour> ns = new ArrayList<>();
    for (int n : neighbours) {
      ns.add(new RouterConfig.Neighbour(n, null, 1));
    }
    Router r =
        Router.start(
            new RouterConfig(
                number,
                System.currentTimeMillis() + number,
                ANY,
                ANY,
                null,
                ns,
                Federation.FAST,
                BLOOM,
                limits,
                "secret"));
    routers.add(r);
    return r;
  }

  private BdrpClient client(Router r, String name) throws Exception {
    BdrpClient c = BdrpClient.builder().router(r.clientAddress()).name(name).connect();
    clients.add(c);
    return c;
  }

  private Socket open(InetSocketAddress a) throws IOException {
    return open(a, 0);
  }

  /**
   * A socket to {@code a}; with {@code receiveBufferBytes > 0}, that receive buffer is set before
   * the connection is made, so the window offered in the handshake fits it (shrinking the buffer of
   * an established connection makes loopback TCP drop segments and back off for seconds).
   */
  private Socket open(InetSocketAddress a, int receiveBufferBytes) throws IOException {
    Socket s = new Socket();
    sockets.add(s);
    if (receiveBufferBytes > 0) {
      s.setReceiveBufferSize(receiveBufferBytes);
    }
    s.connect(a, 10_000);
    s.setSoTimeout(10_000);
    return s;
  }

  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (-?\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static void assertClosed(InputStream in) throws IOException {
    try {
      while (in.read() != -1) {
        // frames queued before the close
      }
    } catch (SocketException e) {
      // reset by the router: closed as well
    }
  }

  /** A subscriber on {@code r} gets a message published on {@code from}. */
  private void served(Router from, Router r, long n) throws Exception {
    LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
    BdrpClient sub = client(r, "sub-" + n);
    sub.subscribe(Predicate.parse("n = " + n), inbox::add).get(10, TimeUnit.SECONDS);
    BdrpClient pub = client(from, "pub-" + n);
    Federation.await(
        "message " + n + " delivered",
        () -> {
          try {
            pub.send(Message.builder().put("n", n).build()).get(10, TimeUnit.SECONDS);
            Message m = inbox.poll(200, TimeUnit.MILLISECONDS);
            return m != null && m.get("n").asLong() == n;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
  }

  /**
   * A client floods PINGs and reads nothing. The router's replies fill the socket buffers, then the
   * session's output passes its high water mark: the router stops reading the flooder (whose writes
   * then block), serves others meanwhile, and cuts it off as a slow consumer.
   *
   * <p>Paranoid leak detection records a stack trace at every byte the router reads, which makes
   * reading millions of 14-byte frames take minutes; the flood runs with sampled detection.
   */
  @Test
  void aClientThatSendsPingsAndNeverReadsIsCutOffWithBoundedOutput() throws Exception {
    ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    try {
      floodPingsWithoutReading();
    } finally {
      ResourceLeakDetector.setLevel(level);
    }
  }

  private void floodPingsWithoutReading() throws Exception {
    int highWater = 64 * 1024;
    Router r = start(0, List.of(), limits(highWater, 1_000, 5_000, 256, 64 << 20));
    Socket s = open(r.clientAddress(), 4096);
    OutputStream out = s.getOutputStream();
    out.write(RawFrames.client(new ClientFrame.Hello(Frames.VERSION, "never-reads", new byte[0])));
    byte[] ping = RawFrames.client(new ClientFrame.Ping(1));
    byte[] pings = new byte[4096 * ping.length];
    for (int i = 0; i + ping.length <= pings.length; i += ping.length) {
      System.arraycopy(ping, 0, pings, i, ping.length);
    }
    long limit = 512L << 20;

    CompletableFuture<Long> flood =
        CompletableFuture.supplyAsync(
            () -> {
              long written = 0;
              try {
                while (written < limit) {
                  out.write(pings);
                  written += pings.length;
                }
              } catch (IOException e) {
                // the router closed the session
              }
              return written;
            });
    // While the flood is on, the router serves others.
    served(r, r, 1);

    Federation.await(
        "the flooder cut off as a slow consumer",
        () ->
            metric(r, "bdrp_connections_closed_total{port=\"clients\",reason=\"slow_consumer\"}")
                == 1);
    long written = flood.get(30, TimeUnit.SECONDS);
    assertTrue(
        written < 64L << 20,
        "the router stopped reading the flooder: it took " + written + " bytes of PINGs");
    assertEquals(1, metric(r, "bdrp_protocol_errors_total{code=\"slow_consumer\"}"));
    served(r, r, 2);
  }

  @Test
  void connectionsThatNeverSayHelloAreCappedAndTimedOut() throws Exception {
    Router r = start(0, List.of(), limits(1 << 20, 10_000, 1_000, 4, 64 << 20));
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      idle.add(open(r.clientAddress()));
    }
    // The router counts a connection once it is active on its loop: wait for all four.
    Federation.await("four connections in their HELLO", () -> pending(r) == 4);
    for (int i = 0; i < 3; i++) {
      try (Socket extra = open(r.clientAddress())) {
        ClientFrame f = RawFrames.readClientFrame(extra.getInputStream());
        ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, f);
        assertEquals(ErrorCode.OVERLOADED.number(), e.code(), e.toString());
        assertClosed(extra.getInputStream());
      }
    }
    for (Socket s : idle) {
      ClientFrame f = RawFrames.readClientFrame(s.getInputStream());
      ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, f);
      assertEquals(ErrorCode.TIMEOUT.number(), e.code(), e.toString());
      assertClosed(s.getInputStream());
    }
    assertEquals(
        3, metric(r, "bdrp_connections_closed_total{port=\"clients\",reason=\"handshakes\"}"));
    assertEquals(
        4, metric(r, "bdrp_connections_closed_total{port=\"clients\",reason=\"hello_timeout\"}"));
    served(r, r, 3);
    // The router port has the same guard.
    try (Socket s = open(r.routerAddress())) {
      ClientFrame.Error e = RawFrames.firstError(s.getInputStream(), 3);
      assertNotNull(e, "an ERROR frame");
      assertEquals(ErrorCode.TIMEOUT.number(), e.code(), e.toString());
    }
  }

  private static long pending(Router r) {
    return r.view().clientHandshakesPending();
  }

  @Test
  void aHelloTooLargeForAHandshakeIsRefusedFromItsLength() throws Exception {
    Router r = start(0, List.of(), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    try (Socket s = open(r.clientAddress())) {
      ByteBuf b = Unpooled.buffer().writeInt(60_000).writeByte(Frames.VERSION).writeByte(1);
      s.getOutputStream().write(ByteBufUtil.getBytes(b));
      b.release();
      ClientFrame f = RawFrames.readClientFrame(s.getInputStream());
      ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, f);
      assertEquals(ErrorCode.FRAME_TOO_LARGE.number(), e.code(), e.toString());
    }
  }

  @Test
  void partialFramesOfAllClientsTogetherStayWithinTheBudget() throws Exception {
    int maxFrame = 64 * 1024;
    Router r = start(0, List.of(), limits(1 << 20, 10_000, 5_000, 256, 2 * maxFrame + 8));
    List<Socket> stalled = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Socket s = open(r.clientAddress());
      s.getOutputStream()
          .write(
              RawFrames.client(new ClientFrame.Hello(Frames.VERSION, "stalled-" + i, new byte[0])));
      assertInstanceOf(ClientFrame.HelloOk.class, RawFrames.readClientFrame(s.getInputStream()));
      // The start of a SEND of almost the largest frame, and then nothing.
      ByteBuf b = Unpooled.buffer().writeInt(maxFrame - 8).writeByte(Frames.VERSION).writeByte(5);
      b.writeZero(1000);
      s.getOutputStream().write(ByteBufUtil.getBytes(b));
      b.release();
      stalled.add(s);
      if (i < 2) {
        long want = (long) (i + 1) * (maxFrame - 4);
        Federation.await(
            "partial frames reserved",
            () -> metric(r, "bdrp_inbound_partial_bytes{port=\"clients\"}") == want);
      }
    }
    ClientFrame.Error e = RawFrames.firstError(stalled.get(2).getInputStream(), 2);
    assertNotNull(e, "the third partial frame is refused");
    assertEquals(ErrorCode.OVERLOADED.number(), e.code(), e.toString());
    assertClosed(stalled.get(2).getInputStream());
    assertEquals(1, metric(r, "bdrp_inbound_budget_refused_total{port=\"clients\"}"));
    served(r, r, 4);
    stalled.get(0).close();
    stalled.get(1).close();
    Federation.await(
        "reservations released when the connections end",
        () -> metric(r, "bdrp_inbound_partial_bytes{port=\"clients\"}") == 0);
  }

  /**
   * A neighbour (router 2 of router 0, with the token) forges router 1's advertisement with a later
   * epoch: far beyond the clock (refused at router 0) or within the bound (router 1 moves past it).
   * Either way the link between 0 and 1 carries no storm, and router 1's hosts are served. The link
   * runs through a {@link LinkTap}, which sees every frame on it: router 1's own hellos are the
   * clock, so the bound holds however slowly the machine runs.
   */
  @ParameterizedTest
  @ValueSource(longs = {1L << 62, 3_600_000L})
  void aForgedOwnAdvertisementCausesNoStormAndNoBlackout(long epochOrAhead) throws Exception {
    Router r0 = start(0, List.of(1, 2), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    Router r1 = start(1, List.of(0), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    try (LinkTap tap = LinkTap.start(r1.routerAddress())) {
      r0.connect(1, tap.address());
      Federation.await(
          "routes", () -> r0.view().reachable().length == 1 && r1.view().reachable().length == 1);
      long epoch =
          epochOrAhead == 1L << 62 ? epochOrAhead : System.currentTimeMillis() + epochOrAhead;
      Socket s = open(r0.routerAddress());
      OutputStream out = s.getOutputStream();
      out.write(RawFrames.router(new RouterHello(2, 7, 64, BLOOM, 0, "secret".getBytes())));
      out.write(
          RawFrames.router(
              new ControlMessage.PredicateAd(2, 1, epoch, 0, EncodedPredicate.empty(BLOOM))));
      out.flush();
      if (epochOrAhead == 1L << 62) {
        Federation.await(
            "the forged epoch refused", () -> metric(r0, "bdrp_control_refused_total") == 1);
      }
      served(r0, r1, 5);
      s.close();
      // No storm: over the next HELLOS of router 1's hello intervals, counted by its hellos on the
      // link, each side sends what its timers send for each hello of its own (a route update every
      // fourth interval, a paced advertisement), no more.
      int hello = FrameType.DV_HELLO.number();
      int first = tap.fromTarget(hello);
      Federation.await(
          "router 1's next " + HELLOS + " hellos", () -> tap.fromTarget(hello) >= first + HELLOS);
      Window w = controlBetweenHellos(tap.frames(), first, first + HELLOS);
      // A hello timer fires at most once an interval: measured by the tap, a slow machine only
      // lengthens the window. The slack covers the tap reading the window's first hello late.
      long interval = Federation.FAST.helloIntervalMs();
      long hellosAtMost = TimeUnit.NANOSECONDS.toMillis(w.nanos) / interval + 3;
      for (int r = 0; r < 2; r++) {
        int hellos = w.hellos[r];
        int others = w.others[r];
        int bound = 3 * (hellos + 1) + 10;
        assertTrue(
            hellos <= hellosAtMost,
            "router " + r + " sent " + hellos + " hellos in " + w.nanos / 1_000_000 + " ms");
        assertTrue(
            others <= bound,
            "router "
                + r
                + " sent "
                + others
                + " control messages besides "
                + hellos
                + " hellos over "
                + HELLOS
                + " of router 1's hello intervals (timers: "
                + bound
                + ")");
      }
      served(r0, r1, 6);
    }
  }

  /** Hello intervals of router 1 over which its link is watched for a storm. */
  private static final int HELLOS = 8;

  /**
   * The control frames on a tapped link after router 1's hello number {@code from} up to and with
   * its hello number {@code to} (counted from 1 from the start of the log; {@code from} 0 is the
   * start), by router (index 0 or 1): its hellos and its other control frames (DATA is not
   * counted); and the time from that first hello (or the first frame) to the last, as the tap saw
   * them.
   */
  private record Window(int[] hellos, int[] others, long nanos) {}

  private static Window controlBetweenHellos(List<LinkTap.Frame> frames, int from, int to) {
    int hello = FrameType.DV_HELLO.number();
    int data = FrameType.DATA.number();
    int seen = 0; // router 1's hellos so far
    int[] hellos = new int[2];
    int[] others = new int[2];
    long start = frames.isEmpty() ? 0 : frames.get(0).nanos();
    long end = start;
    for (LinkTap.Frame f : frames) {
      boolean fromR1 = f.fromTarget();
      if (fromR1 && f.type() == hello) {
        seen++;
        if (seen == from) {
          start = f.nanos();
        } else if (seen > from) {
          hellos[1]++;
        }
        if (seen == to) {
          end = f.nanos();
          break;
        }
      } else if (seen >= from && f.type() != data) {
        int r = fromR1 ? 1 : 0;
        if (f.type() == hello) {
          hellos[r]++;
        } else {
          others[r]++;
        }
      }
    }
    return new Window(hellos, others, end - start);
  }

  @Test
  void aSecondProcessWithALiveNeighboursNumberIsRefused() throws Exception {
    Router r0 = start(0, List.of(1), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    Router r1 = start(1, List.of(0), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    r0.connect(1, r1.routerAddress());
    Federation.await(
        "routes", () -> r0.view().reachable().length == 1 && r1.view().reachable().length == 1);
    try (Socket s = open(r1.routerAddress())) {
      s.getOutputStream()
          .write(RawFrames.router(new RouterHello(0, 99, 64, BLOOM, 0, "secret".getBytes())));
      ClientFrame.Error e = RawFrames.firstError(s.getInputStream(), 3);
      assertNotNull(e, "an ERROR frame");
      assertEquals(ErrorCode.DUPLICATE_ROUTER.number(), e.code(), e.toString());
      assertClosed(s.getInputStream());
    }
    assertEquals(1, metric(r1, "bdrp_link_refused_total{parameter=\"duplicate\"}"));
    assertEquals(1, r1.view().reachable().length, "the genuine link stays");
    served(r0, r1, 7);
    served(r1, r0, 8);
  }

  /**
   * A neighbour's session that carries nothing for a dead interval (here: a peer that says its
   * ROUTER_HELLO and then nothing) is closed, and a new incarnation of that neighbour is taken.
   */
  @Test
  void aSilentNeighbourSessionIsClosedAndANewIncarnationTakesItsPlace() throws Exception {
    Router r0 = start(0, List.of(2), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    try (Socket s = open(r0.routerAddress())) {
      s.getOutputStream()
          .write(RawFrames.router(new RouterHello(2, 7, 64, BLOOM, 0, "secret".getBytes())));
      s.setSoTimeout((int) (4 * Federation.FAST.deadIntervalMs()));
      assertNotNull(RawFrames.readFrame(s.getInputStream()), "the router's own hello");
      long t0 = System.nanoTime();
      assertClosed(s.getInputStream());
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(
          ms >= Federation.FAST.deadIntervalMs() - Federation.FAST.helloIntervalMs(),
          "closed after " + ms + " ms, not before a dead interval");
    }
    assertEquals(
        1, metric(r0, "bdrp_connections_closed_total{port=\"routers\",reason=\"silent\"}"));
    try (Socket s = open(r0.routerAddress())) {
      s.getOutputStream()
          .write(RawFrames.router(new RouterHello(2, 8, 64, BLOOM, 0, "secret".getBytes())));
      s.getOutputStream().write(RawFrames.router(new ControlMessage.Hello(2, 8, 0)));
      // Taken: the router answers the DV hello with its own, echoing epoch 8.
      Federation.await(
          "router 0 to hear the new incarnation",
          () -> metric(r0, "bdrp_link_control_received_total{neighbour=\"2\"}") >= 1);
      assertEquals(0, metric(r0, "bdrp_link_refused_total{parameter=\"duplicate\"}"));
    }
  }

  /**
   * DATA from a neighbour with D shorter than maxRouters needs (legal: D is sent up to its last
   * non-zero word), and with hop limit 1 on its last hop, is delivered.
   */
  @Test
  void shortDestinationSetsAndALastHopWithHopLimitOneAreDelivered() throws Exception {
    Router r0 = start(0, List.of(2), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
    client(r0, "sub").subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);
    try (Socket s = open(r0.routerAddress())) {
      OutputStream out = s.getOutputStream();
      out.write(RawFrames.router(new RouterHello(2, 7, 64, BLOOM, 0, "secret".getBytes())));
      // DATA is taken only from a source the router has a route to.
      RawFrames.becomeReachable(s, 2, 7);
      Federation.await("a route to router 2", () -> metric(r0, "bdrp_unicast_routes") == 1);
      for (int hopLimit : new int[] {5, 1}) {
        ByteBuf d =
            DataHeader.encode(
                Unpooled.buffer().alloc(),
                hopLimit,
                false,
                2,
                hopLimit,
                new long[] {1L}, // one word; maxRouters 64 needs one, 4096 would need 64
                Message.builder().put("x", 1L).put("h", (long) hopLimit).build());
        out.write(ByteBufUtil.getBytes(d));
        d.release();
        Message m = inbox.poll(10, TimeUnit.SECONDS);
        assertNotNull(m, "delivered with hop limit " + hopLimit);
        assertEquals(hopLimit, m.get("h").asLong());
      }
    }
    assertEquals(0, metric(r0, "bdrp_drops_total{reason=\"hop_limit\"}"));
  }

  @Test
  void endedSessionsLeaveNoSeriesAndResetsAreNotErrors() throws Exception {
    Router r = start(0, List.of(), limits(1 << 20, 10_000, 5_000, 256, 64 << 20));
    for (int i = 0; i < 20; i++) {
      try (Socket s = open(r.clientAddress())) {
        s.getOutputStream()
            .write(
                RawFrames.client(new ClientFrame.Hello(Frames.VERSION, "churn-" + i, new byte[0])));
        assertInstanceOf(ClientFrame.HelloOk.class, RawFrames.readClientFrame(s.getInputStream()));
        s.setSoLinger(true, 0); // close with a reset
      }
    }
    Federation.await("every session gone", () -> metric(r, "bdrp_clients") == 0);
    String text = r.metricsText();
    assertTrue(!text.contains("churn-"), "no series of ended sessions remain:\n" + text);
    assertEquals(0, metric(r, "bdrp_protocol_errors_total{code=\"internal\"}"));
  }
}
