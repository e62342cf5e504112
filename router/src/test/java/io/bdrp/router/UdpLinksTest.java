package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.topologies.Bundled;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
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

      byte[] body = new byte[3 * RouterConfig.Limits.DEFAULT.maxDatagramBytes()];
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
  void strangersAndMalformedDatagramsAreCountedAndDropped() throws Exception {
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    try (Router router =
            Router.start(
                new RouterConfig(
                    0,
                    1,
                    any,
                    any,
                    null,
                    List.of(new RouterConfig.Neighbour(1, null, 1, RouterConfig.LinkTransport.UDP)),
                    Federation.FAST,
                    BloomParameters.DEFAULT,
                    RouterConfig.Limits.DEFAULT,
                    "secret"));
        DatagramSocket neighbourUdp = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        DatagramSocket stranger = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        Socket neighbour = new Socket("127.0.0.1", router.routerAddress().getPort());
        BdrpClient client = BdrpClient.builder().router(router.clientAddress()).connect()) {
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      client.subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);

      // A peer that says it is router 1, with its DATA socket at neighbourUdp's port.
      ByteBuf hello =
          RouterFrameCodec.encode(
              Unpooled.buffer().alloc(),
              new RouterHello(
                  1,
                  5,
                  Federation.FAST.maxRouters(),
                  BloomParameters.DEFAULT,
                  neighbourUdp.getLocalPort(),
                  "secret".getBytes()));
      neighbour.getOutputStream().write(ByteBufUtil.getBytes(hello));
      hello.release();
      neighbour.getOutputStream().flush();
      DataInputStream in = new DataInputStream(neighbour.getInputStream());
      byte[] first = new byte[in.readInt()];
      in.readFully(first);
      assertEquals(0x20, first[1] & 0xff, "the router's ROUTER_HELLO");
      Federation.await("DATA to router 1 by UDP", () -> router.dataOverUdp(1));
      // DATA is taken only from a source the router has a route to.
      RawFrames.becomeReachable(neighbour, 1, 5);
      Federation.await("a route to router 1", () -> metric(router, "bdrp_unicast_routes") == 1);
      InetSocketAddress to = router.udpAddress();

      send(neighbourUdp, to, new byte[] {0, 0, 0, 9, 1, 0x26, 1, 2, 3}); // truncated header
      send(stranger, to, data(7)); // a valid frame, from an address that is no neighbour's
      send(neighbourUdp, to, data(8)); // a valid frame from router 1's UDP address
      Message m = inbox.poll(10, TimeUnit.SECONDS);
      assertNotNull(m, "the neighbour's datagram was delivered");
      assertEquals(8L, m.get("n").asLong());
      assertEquals(1, metric(router, "bdrp_data_malformed_total{transport=\"udp\"}"));
      assertEquals(
          1, metric(router, "bdrp_udp_datagrams_dropped_total{reason=\"unknown_sender\"}"));
      assertEquals(3, metric(router, "bdrp_udp_datagrams_received_total"));
      assertTrue(metric(router, "bdrp_udp_receive_overflows_total") >= 0, "overflows readable");
      assertTrue(inbox.isEmpty(), "the stranger's copy, which arrived first, was not delivered");
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
