package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.topologies.Bundled;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DATA over UDP: datagrams carry DATA frames between neighbours, a frame too large for one datagram
 * goes over TCP, and datagrams from strangers or with a malformed header are counted and dropped
 * while the router keeps delivering.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UdpLinksTest {
  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (-?\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void smallMessagesTravelInDatagramsAndLargeOnesOverTcp() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-2"), RouterConfig.LinkTransport.UDP)) {
      f.awaitRoutes().awaitUdp();
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      f.client(1, "sub")
          .subscribe(Predicate.parse("exists(n)"), inbox::add)
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      BdrpClient pub = f.client(0, "pub");
      Router r0 = f.routers.get(0);
      Router r1 = f.routers.get(1);

      pub.send(Message.builder().put("n", 1L).build()).get(10, TimeUnit.SECONDS);
      Message small = inbox.poll(10, TimeUnit.SECONDS);
      assertNotNull(small, "the small message arrived");
      assertEquals(1, metric(r0, "bdrp_udp_datagrams_sent_total"));
      assertEquals(1, metric(r1, "bdrp_udp_datagrams_received_total"));

      byte[] body = new byte[3 * RouterLimits.DEFAULT.maxDatagramBytes()];
      pub.send(Message.builder().put("n", 2L).body(body).build()).get(10, TimeUnit.SECONDS);
      Message large = inbox.poll(10, TimeUnit.SECONDS);
      assertNotNull(large, "the large message arrived");
      assertEquals(body.length, large.body().length);
      assertEquals(1, metric(r0, "bdrp_udp_datagrams_sent_total"), "the large one went by TCP");
      assertEquals(2, metric(r0, "bdrp_link_data_out_total{neighbour=\"1\"}"));
      assertEquals(2, metric(r1, "bdrp_link_data_in_total{neighbour=\"0\"}"));
      assertTrue(inbox.isEmpty(), "each message once");
    }
  }

  @Test
  void encryptedDatagramsCarryMessagesAndMismatchedProtectionIsRefused() throws Exception {
    try (Federation f =
        new Federation(
            Bundled.load("routers-2"),
            RouterConfig.LinkTransport.UDP,
            null,
            c -> c.withUdpProtection(UdpProtection.ENCRYPT))) {
      f.awaitRoutes().awaitUdp();
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      f.client(1, "sub")
          .subscribe(Predicate.parse("exists(n)"), inbox::add)
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      BdrpClient pub = f.client(0, "pub");
      for (long n = 1; n <= 3; n++) {
        pub.send(Message.builder().put("n", n).body(new byte[100]).build())
            .get(10, TimeUnit.SECONDS);
      }
      for (long n = 1; n <= 3; n++) {
        Message m = inbox.poll(10, TimeUnit.SECONDS);
        assertNotNull(m, "message " + n + " arrived");
        assertEquals(n, m.get("n").asLong());
      }
      assertEquals(3, metric(f.routers.get(0), "bdrp_udp_datagrams_sent_total"));
      assertEquals(3, metric(f.routers.get(1), "bdrp_udp_datagrams_received_total"));
    }
    // Routers that protect datagrams differently refuse each other's link, naming auth.udp.
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    try (Router a = Router.start(udpRouter(0, 1, any).withUdpProtection(UdpProtection.NONE));
        Router b = Router.start(udpRouter(1, 0, any))) {
      a.connect(1, b.routerAddress());
      Federation.await(
          "both routers to refuse the link over auth.udp",
          () ->
              metric(a, "bdrp_link_refused_total{parameter=\"auth.udp\"}") >= 1
                  && metric(b, "bdrp_link_refused_total{parameter=\"auth.udp\"}") >= 1);
    }
  }

  private static RouterConfig udpRouter(int self, int neighbour, InetSocketAddress any) {
    return new RouterConfig(
        self,
        1,
        any,
        any,
        null,
        List.of(new RouterConfig.Neighbour(neighbour, null, 1, RouterConfig.LinkTransport.UDP)),
        Federation.FAST,
        BloomParameters.DEFAULT,
        RouterLimits.DEFAULT,
        "secret");
  }

  @Test
  void strangersForgedReplayedAndMalformedDatagramsAreCountedAndDropped() throws Exception {
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    try (Router router = Router.start(udpRouter(0, 1, any));
        DatagramSocket neighbourUdp = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        DatagramSocket stranger = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        Socket neighbour = new Socket("127.0.0.1", router.routerAddress().getPort());
        BdrpClient client = BdrpClient.builder().router(router.clientAddress()).connect()) {
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      client.subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);

      // A peer that says it is router 1, with its DATA socket at neighbourUdp's port.
      byte[] nonce = DatagramAuth.newNonce();
      ByteBuf hello =
          RouterFrameCodec.encode(
              Unpooled.buffer().alloc(),
              new RouterHello(
                  1,
                  5,
                  Federation.FAST.maxRouters(),
                  BloomParameters.DEFAULT,
                  neighbourUdp.getLocalPort(),
                  "secret".getBytes(),
                  UdpProtection.MAC,
                  nonce));
      neighbour.getOutputStream().write(ByteBufUtil.getBytes(hello));
      hello.release();
      neighbour.getOutputStream().flush();
      ByteBuf first = RawFrames.readFrame(neighbour.getInputStream());
      RouterHello theirs = (RouterHello) RouterFrameCodec.decode(first);
      first.release();
      Federation.await("DATA to router 1 by UDP", () -> router.view().dataOverUdp(1));
      // DATA is taken only from a source the router has a route to.
      RawFrames.becomeReachable(neighbour, 1, 5);
      Federation.await("a route to router 1", () -> metric(router, "bdrp_unicast_routes") == 1);
      InetSocketAddress to = router.udpAddress();
      // Router 1's datagrams to router 0 on this session, and the same under another key.
      byte[] key = DatagramAuth.key("secret".getBytes(), 1, 0, nonce, theirs.udpNonce());
      DatagramAuth.Sealer sealer = new DatagramAuth.Sealer(UdpProtection.MAC, key);
      DatagramAuth.Sealer forger =
          new DatagramAuth.Sealer(
              UdpProtection.MAC,
              DatagramAuth.key("guess".getBytes(), 1, 0, nonce, theirs.udpNonce()));

      send(neighbourUdp, to, sealed(sealer, new byte[] {0, 0, 0, 9, 1, 0x26, 1, 2, 3}));
      send(stranger, to, sealed(sealer, data(6))); // from an address that is no neighbour's
      send(neighbourUdp, to, data(7)); // no protection
      send(neighbourUdp, to, sealed(forger, data(8))); // a tag under a key the router never made
      byte[] genuine = sealed(sealer, data(9));
      send(neighbourUdp, to, genuine);
      send(neighbourUdp, to, new byte[] {1, 2, 3});
      send(neighbourUdp, to, genuine); // the same datagram again
      Message m = inbox.poll(10, TimeUnit.SECONDS);
      assertNotNull(m, "the neighbour's datagram was delivered");
      assertEquals(9L, m.get("n").asLong());
      Federation.await(
          "the replay to be refused",
          () -> metric(router, "bdrp_udp_datagrams_dropped_total{reason=\"replay\"}") == 1);
      assertEquals(1, metric(router, "bdrp_data_malformed_total{transport=\"udp\"}"));
      assertEquals(
          1, metric(router, "bdrp_udp_datagrams_dropped_total{reason=\"unknown_sender\"}"));
      assertEquals(2, metric(router, "bdrp_udp_datagrams_dropped_total{reason=\"mac\"}"));
      assertEquals(1, metric(router, "bdrp_udp_datagrams_dropped_total{reason=\"short\"}"));
      assertEquals(7, metric(router, "bdrp_udp_datagrams_received_total"));
      assertTrue(metric(router, "bdrp_udp_receive_overflows_total") >= 0, "overflows readable");
      assertTrue(inbox.isEmpty(), "only the genuine datagram was delivered, once");
    }
  }

  /** {@code frame} as the datagram {@code sealer} makes of it. */
  private static byte[] sealed(DatagramAuth.Sealer sealer, byte[] frame) {
    ByteBuf d = sealer.seal(UnpooledByteBufAllocator.DEFAULT, Unpooled.wrappedBuffer(frame));
    try {
      return ByteBufUtil.getBytes(d);
    } finally {
      d.release();
    }
  }

  /** A DATA frame from router 1 for router 0 carrying x = 1 and n. */
  private static byte[] data(long n) {
    ByteBuf f =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT,
            5,
            false,
            1,
            n,
            new long[] {1L},
            Message.builder().put("x", 1L).put("n", n).build());
    try {
      return ByteBufUtil.getBytes(f);
    } finally {
      f.release();
    }
  }

  private static void send(DatagramSocket from, InetSocketAddress to, byte[] bytes)
      throws java.io.IOException {
    from.send(new DatagramPacket(bytes, bytes.length, to));
  }
}
