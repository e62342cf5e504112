package io.bdrp.router.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.EmbeddedCore;
import io.bdrp.router.Federation;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.MessageIds;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bdrp client front end on {@link EmbeddedChannel}s, without sockets: the pipeline a client
 * session gets from {@link ClientSessions#initializer()}, the router's real data plane and routing
 * state behind it, and the control thread run in place. HELLO, SET_PREDICATE, SEND and DELIVER as a
 * client sees them, and the errors it is sent.
 */
class ClientSessionsTest {
  /** The reliable service's bounds here: a retention of 4 KiB, which one large message exceeds. */
  private static final io.bdrp.routing.Reliable.Config RETENTION =
      new io.bdrp.routing.Reliable.Config(200, 60_000, 60_000, 10_000, 4_096, 25, 1_024, 65_536);

  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private EmbeddedChannel first;
  private ClientSessions clients;
  private RoutingNode node;
  private RouterCore core;

  @BeforeEach
  void setUp() {
    first = new EmbeddedChannel();
    channels.add(first);
    RouterConfig config = Federation.loneRouter();
    core = EmbeddedCore.of(config, first);
    node = core.node();
    RouterMetrics metrics = core.metrics();
    Hosts hosts = new Hosts();
    OutputBatches batches = new OutputBatches(first.eventLoop());
    LinkOutput output = new LinkOutput(new Link[8], hosts, batches, metrics.matchSeconds);
    DataPlane<MessageBytes> dataPlane =
        new DataPlane<>(node, output, System::nanoTime, MessageIds.secure(0, 64));
    clients =
        new ClientSessions(
            core,
            hosts,
            batches,
            dataPlane,
            new io.bdrp.routing.Reliable<>(
                dataPlane, node, 1, System::currentTimeMillis, RETENTION, output),
            () -> {},
            () -> null,
            false);
    output.publishers(clients.publishers());
    first.pipeline().addLast(clients.initializer());
  }

  @AfterEach
  void tearDown() {
    for (EmbeddedChannel c : channels) {
      c.finishAndReleaseAll();
    }
  }

  /**
   * Another session (its own embedded loop; {@link #written} runs every channel's pending tasks, as
   * the router's one loop would).
   */
  private EmbeddedChannel session() {
    EmbeddedChannel c = new EmbeddedChannel();
    channels.add(c);
    c.pipeline().addLast(clients.initializer());
    return c;
  }

  private static void send(EmbeddedChannel c, ClientFrame f) {
    c.writeInbound(ClientFrameCodec.encode(ByteBufAllocator.DEFAULT, f));
    c.runPendingTasks();
  }

  /** The frames the session has written to its client so far, decoded. */
  private List<ClientFrame> written(EmbeddedChannel c) {
    for (EmbeddedChannel any : channels) {
      any.runPendingTasks(); // batches flush at the end of the loop's turn
    }
    List<ClientFrame> out = new ArrayList<>();
    for (Object o; (o = c.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      try {
        while (b.isReadable()) {
          int length = b.getInt(b.readerIndex());
          ByteBuf frame = b.readSlice(Frames.LENGTH_BYTES + length);
          out.add(ClientFrameCodec.decode(frame));
        }
      } finally {
        b.release();
      }
    }
    return out;
  }

  private static ClientFrame.Hello hello(String name) {
    return new ClientFrame.Hello(Frames.VERSION, name, new byte[0]);
  }

  @Test
  void aHelloIsAnsweredWithTheRoutersNumber() {
    send(first, hello("one"));
    ClientFrame.HelloOk ok = assertInstanceOf(ClientFrame.HelloOk.class, written(first).get(0));
    assertEquals(0, ok.routerNumber());
    assertTrue(first.isActive());
  }

  @Test
  void aRequestBeforeTheHelloIsRefusedAndTheSessionClosed() {
    send(first, new ClientFrame.Send(1, Message.builder().put("x", 1L).build()));
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, written(first).get(0));
    assertEquals(ErrorCode.PROTOCOL_VIOLATION.number(), e.code());
    assertFalse(first.isActive(), "closed after the error");
  }

  @Test
  void aPredicateIsAcknowledgedAndMatchingMessagesAreDeliveredOnce() {
    EmbeddedChannel publisher = session();
    send(first, hello("subscriber"));
    send(publisher, hello("publisher"));
    written(first);
    written(publisher);
    send(first, new ClientFrame.SetPredicate(7, Predicate.parse("x > 1")));
    assertEquals(List.of(new ClientFrame.Ok(7)), written(first));
    assertEquals(1, node.local().hostCount(), "the host's exact predicate is set on the loop");

    send(publisher, new ClientFrame.Send(8, Message.builder().put("x", 5L).build()));
    send(publisher, new ClientFrame.Send(9, Message.builder().put("x", 0L).build()));
    List<ClientFrame> got = written(first);
    assertEquals(1, got.size(), "the one that matches, once: " + got);
    ClientFrame.Deliver d = assertInstanceOf(ClientFrame.Deliver.class, got.get(0));
    assertEquals(Message.builder().put("x", 5L).build(), d.message());
    assertEquals(List.of(new ClientFrame.Ok(8), new ClientFrame.Ok(9)), written(publisher));
  }

  @Test
  void aReliableMessageIsDeliveredToLocalHostsConfirmedAndOneWithAReservedAttributeRefused() {
    EmbeddedChannel publisher = session();
    send(first, hello("subscriber"));
    send(publisher, new ClientFrame.Hello(Frames.SESSION_VERSION, "publisher", new byte[0]));
    written(first);
    written(publisher);
    send(first, new ClientFrame.SetPredicate(7, Predicate.parse("x > 1")));
    assertEquals(List.of(new ClientFrame.Ok(7)), written(first));

    long p = 0x33;
    sendInOneRead(
        publisher,
        new ClientFrame.SendReliable(11, p, 1, Message.builder().put("x", 5L).build()),
        new ClientFrame.SendReliable(12, p, 2, Message.builder().put("x", 0L).build()),
        new ClientFrame.SendReliable(13, p, 3, Message.builder().put("x", 9L).build()));
    List<ClientFrame> got = written(first);
    assertEquals(
        List.of(
            new ClientFrame.Deliver(Message.builder().put("x", 5L).build()),
            new ClientFrame.Deliver(Message.builder().put("x", 9L).build())),
        got,
        "the two that match, once each, in the publisher's order");
    assertEquals(List.of(new ClientFrame.ConfirmRange(p, 1, 3)), written(publisher));

    // A client may not set the retained store's attributes, reliable or not.
    Message forged =
        Message.builder()
            .put("x", 5L)
            .put(io.bdrp.encoding.mqtt.MqttRetained.RETAINED, true)
            .build();
    long refusedBefore = core.errors().count(ErrorCode.BAD_MESSAGE);
    sendInOneRead(publisher, new ClientFrame.SendReliable(14, p, 4, forged));
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, written(publisher).get(0));
    assertEquals(14, e.correlationId());
    assertEquals(ErrorCode.BAD_MESSAGE.number(), e.code());
    assertEquals(refusedBefore + 1, core.errors().count(ErrorCode.BAD_MESSAGE));
    assertEquals(List.of(), written(first), "nothing delivered");
    assertTrue(publisher.isActive(), "the session goes on");

    // A message larger than the retention: refused (the client waits and sends it again), and
    // the publisher's later messages with it until it comes again.
    Message large = Message.builder().put("x", 7L).put("pad", "p".repeat(5_000)).build();
    long overloadedBefore = core.errors().count(ErrorCode.OVERLOADED);
    sendInOneRead(
        publisher,
        new ClientFrame.SendReliable(15, p, 4, large),
        new ClientFrame.SendReliable(16, p, 5, Message.builder().put("x", 8L).build()));
    List<ClientFrame> answers = written(publisher);
    assertEquals(2, answers.size(), "two refusals: " + answers);
    for (int i = 0; i < 2; i++) {
      ClientFrame.Error refusal = assertInstanceOf(ClientFrame.Error.class, answers.get(i));
      assertEquals(15 + i, refusal.correlationId());
      assertEquals(ErrorCode.OVERLOADED.number(), refusal.code());
    }
    assertEquals(overloadedBefore + 2, core.errors().count(ErrorCode.OVERLOADED));
    assertEquals(List.of(), written(first), "nothing delivered");
    sendInOneRead(
        publisher,
        new ClientFrame.SendReliable(17, p, 4, Message.builder().put("x", 6L).build()),
        new ClientFrame.SendReliable(18, p, 5, Message.builder().put("x", 8L).build()));
    assertEquals(List.of(new ClientFrame.ConfirmRange(p, 4, 5)), written(publisher));
    assertEquals(
        List.of(
            new ClientFrame.Deliver(Message.builder().put("x", 6L).build()),
            new ClientFrame.Deliver(Message.builder().put("x", 8L).build())),
        written(first));
  }

  @Test
  void aBadPredicateIsRefusedWithItsCorrelationIdAndTheSessionGoesOn() {
    send(first, hello("one"));
    written(first);
    StringBuilder huge = new StringBuilder();
    for (int i = 0; i < 1024; i++) {
      huge.append(i == 0 ? "" : " || ").append("exists(a").append(i).append(") && exists(b");
      huge.append(i).append(")");
    }
    send(first, new ClientFrame.SetPredicate(3, Predicate.parse(huge.toString())));
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, written(first).get(0));
    assertEquals(3, e.correlationId());
    assertEquals(ErrorCode.BAD_PREDICATE.number(), e.code());
    assertTrue(first.isActive(), "the session goes on");
    assertNull(node.local().predicate(1), "no predicate was set");
  }

  /** One read of {@code frames}: a single buffer holding them all, handled in one turn. */
  private static void sendInOneRead(EmbeddedChannel c, ClientFrame... frames) {
    ByteBuf b = ByteBufAllocator.DEFAULT.buffer();
    for (ClientFrame f : frames) {
      ClientFrameCodec.encode(f, b);
    }
    c.writeInbound(b);
    c.runPendingTasks();
  }

  private static ClientFrame.SendReliable reliable(long publisher, long seq) {
    return new ClientFrame.SendReliable(
        seq | Long.MIN_VALUE, publisher, seq, Message.builder().put("n", seq).build());
  }

  @Test
  void aVersionTwoSessionIsConfirmedInRangesOfConsecutiveNumbersOfOnePublisher() {
    // A client offering a later version than the router's gets the router's.
    send(first, new ClientFrame.Hello(9, "publisher", new byte[0]));
    ClientFrame.HelloOk ok = assertInstanceOf(ClientFrame.HelloOk.class, written(first).get(0));
    assertEquals(Frames.SESSION_VERSION, ok.version());
    long p = 0x51;
    long q = -7;
    // No router wants these (D is empty): each is confirmed as it is read.
    sendInOneRead(first, reliable(p, 1), reliable(p, 2), reliable(p, 3), reliable(p, 4));
    assertEquals(List.of(new ClientFrame.ConfirmRange(p, 1, 4)), written(first));

    sendInOneRead(first, reliable(p, 6));
    assertEquals(List.of(new ClientFrame.Confirm(p, 6)), written(first), "a run of one");

    // A range holds only consecutive numbers of one publisher.
    sendInOneRead(
        first,
        reliable(p, 7),
        reliable(p, 8),
        reliable(q, 1),
        reliable(q, 2),
        reliable(p, 9),
        reliable(p, 11));
    assertEquals(
        List.of(
            new ClientFrame.ConfirmRange(p, 7, 8),
            new ClientFrame.ConfirmRange(q, 1, 2),
            new ClientFrame.Confirm(p, 9),
            new ClientFrame.Confirm(p, 11)),
        written(first));
  }

  @Test
  void aVersionOneSessionGetsAConfirmPerMessage() {
    send(first, hello("old publisher"));
    ClientFrame.HelloOk ok = assertInstanceOf(ClientFrame.HelloOk.class, written(first).get(0));
    assertEquals(1, ok.version());
    sendInOneRead(first, reliable(5, 1), reliable(5, 2), reliable(5, 3));
    assertEquals(
        List.of(
            new ClientFrame.Confirm(5, 1),
            new ClientFrame.Confirm(5, 2),
            new ClientFrame.Confirm(5, 3)),
        written(first));
  }

  @Test
  void aConfirmRangeFromAClientIsAProtocolViolation() {
    send(first, new ClientFrame.Hello(Frames.SESSION_VERSION, "confused", new byte[0]));
    written(first);
    long before = core.errors().count(ErrorCode.PROTOCOL_VIOLATION);
    send(first, new ClientFrame.ConfirmRange(5, 1, 2));
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, written(first).get(0));
    assertEquals(ErrorCode.PROTOCOL_VIOLATION.number(), e.code());
    assertEquals("a client may not send CONFIRM_RANGE", e.message());
    assertEquals(before + 1, core.errors().count(ErrorCode.PROTOCOL_VIOLATION));
    assertFalse(first.isActive(), "closed after the error");
  }
}
