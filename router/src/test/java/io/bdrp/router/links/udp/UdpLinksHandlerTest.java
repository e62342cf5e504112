package io.bdrp.router.links.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.EmbeddedCore;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.DataPath;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The UDP transport's socket handler on an {@link EmbeddedChannel} standing for the socket: only
 * the neighbour's address is heard, only datagrams sealed with the link session's key (derived from
 * both hellos' nonces) are taken, and DATA to the neighbour leaves sealed with the other
 * direction's key, to the port its hello announced. Nothing is heard once the link is down.
 */
class UdpLinksHandlerTest {
  private static final String TOKEN = "link-secret";
  private static final InetSocketAddress NEIGHBOUR_TCP = new InetSocketAddress("127.0.0.1", 7401);
  private static final int NEIGHBOUR_UDP_PORT = 7501;
  private static final InetSocketAddress NEIGHBOUR_UDP =
      new InetSocketAddress("127.0.0.1", NEIGHBOUR_UDP_PORT);

  private final List<String> received = new ArrayList<>();
  private final byte[] ownNonce = DatagramAuth.newNonce();
  private final byte[] theirNonce = DatagramAuth.newNonce();
  private RouterConfig config;
  private RouterMetrics metrics;
  private EmbeddedChannel socket;
  private UdpLinks udp;
  private Link link;

  @BeforeEach
  void setUp() {
    config =
        RouterConfig.parse(
            "router: 0\n"
                + "auth: {routerToken: "
                + TOKEN
                + "}\n"
                + "neighbours: [{router: 1, address: '127.0.0.1:7401', transport: udp}]\n",
            "test");
    socket = new EmbeddedChannel();
    RouterCore core = EmbeddedCore.of(config, socket);
    metrics = core.metrics();
    DataTransport.Receiver receiver =
        (from, frame, how) ->
            received.add(
                from.neighbour() + " " + how + " " + frame.toString(StandardCharsets.UTF_8));
    udp = new UdpLinks(core, new OutputBatches(socket.eventLoop()), receiver);
    udp.useSocket(socket);
    link =
        new Link(
            config.neighbours().get(0),
            metrics,
            1 << 20,
            config.limits().linkHighWaterBytes(),
            Runnable::run);
    link.attach(new EmbeddedChannel());
  }

  @AfterEach
  void tearDown() {
    socket.finishAndReleaseAll();
  }

  /** Brings the link up as its session would, the neighbour announcing its UDP port. */
  private DataPath up() {
    RouterHello theirs =
        new RouterHello(
            RouterHello.PROTOCOL,
            1,
            System.currentTimeMillis(),
            config.routing().maxRouters(),
            config.bloom(),
            NEIGHBOUR_UDP_PORT,
            TOKEN.getBytes(StandardCharsets.UTF_8),
            UdpProtection.MAC,
            theirNonce);
    return udp.linkUp(link, new DataTransport.Peer(NEIGHBOUR_TCP, theirs, ownNonce));
  }

  /** The key the neighbour seals its datagrams to this router with. */
  private byte[] neighbourKey() {
    return DatagramAuth.key(TOKEN.getBytes(StandardCharsets.UTF_8), 1, 0, theirNonce, ownNonce);
  }

  private ByteBuf sealedByNeighbour(String text) {
    return new DatagramAuth.Sealer(UdpProtection.MAC, neighbourKey())
        .seal(ByteBufAllocator.DEFAULT, Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
  }

  private long dropped(String reason) {
    return metrics.udpDropped(reason).get();
  }

  @Test
  void aSealedDatagramFromTheNeighboursPortIsTaken() {
    assertNotNull(up(), "a link configured for udp gets a path");
    socket.writeInbound(new DatagramPacket(sealedByNeighbour("a DATA frame"), null, NEIGHBOUR_UDP));
    assertEquals(List.of("1 udp a DATA frame"), received);
  }

  @Test
  void aDatagramFromAnotherAddressIsDroppedAndCounted() {
    up();
    socket.writeInbound(
        new DatagramPacket(
            sealedByNeighbour("a DATA frame"), null, new InetSocketAddress("127.0.0.1", 9999)));
    assertTrue(received.isEmpty());
    assertEquals(1, dropped("unknown_sender"));
  }

  @Test
  void aDatagramWithAWrongTagIsRefusedAndCounted() {
    up();
    byte[] wrong = DatagramAuth.key(new byte[0], 1, 0, theirNonce, ownNonce);
    ByteBuf forged =
        new DatagramAuth.Sealer(UdpProtection.MAC, wrong)
            .seal(
                ByteBufAllocator.DEFAULT,
                Unpooled.copiedBuffer("a DATA frame", StandardCharsets.UTF_8));
    socket.writeInbound(new DatagramPacket(forged, null, NEIGHBOUR_UDP));
    assertTrue(received.isEmpty());
    assertEquals(1, dropped("mac"));
  }

  @Test
  void dataToTheNeighbourLeavesSealedToItsAnnouncedPort() {
    DataPath path = up();
    MessageBytes message = new MessageBytes();
    ByteBuf body = Unpooled.copiedBuffer("message", StandardCharsets.UTF_8);
    message.set(body, 0, body.readableBytes());
    assertEquals(DataPath.Outcome.SENT, path.send(8, 0, 42, null, 0, message));
    socket.runPendingTasks(); // the batch's flush
    DatagramPacket out = assertInstanceOf(DatagramPacket.class, socket.readOutbound());
    assertEquals(NEIGHBOUR_UDP, out.recipient());
    byte[] keyOut =
        DatagramAuth.key(TOKEN.getBytes(StandardCharsets.UTF_8), 0, 1, ownNonce, theirNonce);
    ByteBuf frame =
        new DatagramAuth.Opener(UdpProtection.MAC, keyOut)
            .open(ByteBufAllocator.DEFAULT, out.content());
    assertNotNull(frame, "the neighbour opens it with the session's key");
    DataHeader h = new DataHeader().wrap(frame);
    assertEquals(42, h.messageId());
    assertTrue(h.isBroadcast());
    assertEquals(
        "message",
        frame.toString(
            frame.readerIndex() + h.messageOffset(), h.messageLength(), StandardCharsets.UTF_8));
    out.release();
    body.release();
  }

  @Test
  void nothingIsHeardFromTheNeighbourOnceTheLinkIsDown() {
    up();
    udp.linkDown(link);
    socket.writeInbound(
        new DatagramPacket(sealedByNeighbour("a late DATA frame"), null, NEIGHBOUR_UDP));
    assertTrue(received.isEmpty());
    assertEquals(1, dropped("unknown_sender"));
    assertNull(link.udpPeer);
  }
}
