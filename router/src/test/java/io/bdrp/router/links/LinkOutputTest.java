package io.bdrp.router.links;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.Clock;
import io.bdrp.routing.Reliable;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ProtocolErrorCounters;
import io.bdrp.transport.ReliableFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The router's output of DATA copies, on an {@link EmbeddedChannel} for the link's TCP session:
 * each copy is offered to the link's {@link DataPath} if it has one, goes over TCP only when the
 * path does not take frames that large, and is dropped and counted when the path is full or the
 * session gone. The output names no transport: a path here is a test's own.
 */
class LinkOutputTest {
  /** A path that records what it is offered and answers as told. */
  private static final class Recording implements DataPath {
    final List<Long> offered = new ArrayList<>();
    Outcome answer = Outcome.SENT;

    @Override
    public Outcome send(
        int hopLimit, int source, long messageId, long[] d, int words, MessageBytes message) {
      offered.add(messageId);
      return answer;
    }

    @Override
    public RouterConfig.LinkTransport transport() {
      return RouterConfig.LinkTransport.UDP;
    }

    @Override
    public String describe() {
      return "a test's path";
    }
  }

  private EmbeddedChannel session;
  private Link link;
  private LinkOutput output;
  private final Recording path = new Recording();
  private final MessageBytes message = new MessageBytes();
  private final Hosts hosts = new Hosts();

  @BeforeEach
  void setUp() {
    RoutingConfig routing = RoutingConfig.builder().maxRouters(8).build();
    Clock clock = System::currentTimeMillis;
    RoutingNode node = new RoutingNode(0, 1, routing, BloomParameters.DEFAULT, clock);
    RouterMetrics metrics = new RouterMetrics(new Metrics(), node, new ProtocolErrorCounters());
    link =
        new Link(
            new RouterConfig.Neighbour(1, new InetSocketAddress("127.0.0.1", 1), 1),
            metrics,
            1 << 20,
            8 << 20,
            Runnable::run);
    session = new EmbeddedChannel();
    link.attach(session);
    Link[] links = new Link[8];
    links[1] = link;
    output =
        new LinkOutput(links, hosts, new OutputBatches(session.eventLoop()), metrics.matchSeconds);
    byte[] body = "a message".getBytes(StandardCharsets.UTF_8);
    message.set(Unpooled.wrappedBuffer(body), 0, body.length);
  }

  @AfterEach
  void tearDown() {
    session.finishAndReleaseAll();
  }

  private boolean send(long id) {
    boolean sent = output.send(1, 16, 3, id, new long[] {0b1010}, message);
    session.runPendingTasks(); // the batch's flush
    return sent;
  }

  @Test
  void aCopyTheLinksPathTakesDoesNotGoOverTcp() {
    link.path = path;
    assertTrue(send(7));
    assertEquals(List.of(7L), path.offered);
    assertNull(session.readOutbound(), "nothing on the TCP session");
    assertEquals(1, link.out.get());
    assertEquals(
        DataHeader.frameLength(DataHeader.layoutOf(new long[] {0b1010}), message.length),
        link.bytesOut(),
        "the path's frame bytes");
  }

  @Test
  void aCopyTooLargeForThePathGoesOverTcp() {
    path.answer = DataPath.Outcome.TOO_LARGE;
    link.path = path;
    assertTrue(send(8));
    assertEquals(List.of(8L), path.offered);
    ByteBuf frame = session.readOutbound();
    try {
      DataHeader h = new DataHeader().wrap(frame);
      assertEquals(3, h.sourceRouter());
      assertEquals(8, h.messageId());
      assertEquals(message.length, h.messageLength());
    } finally {
      frame.release();
    }
    assertEquals(1, link.out.get());
  }

  @Test
  void aCopyForAFullPathIsDroppedAndCounted() {
    path.answer = DataPath.Outcome.FULL;
    link.path = path;
    assertFalse(send(9));
    assertNull(session.readOutbound(), "not sent over TCP instead");
    assertEquals(1, link.dropped.get());
    assertEquals(1, link.droppedPathFull());
    assertEquals(0, link.droppedDown() + link.droppedHighWater());
    assertEquals(0, link.out.get());
  }

  @Test
  void aCopyAboveTheHighWaterMarkIsDroppedAsSuch() {
    session.config().setWriteBufferWaterMark(new io.netty.channel.WriteBufferWaterMark(1, 2));
    session.write(Unpooled.wrappedBuffer(new byte[16])); // unflushed: above the mark
    assertFalse(session.isWritable());
    assertFalse(send(12));
    assertEquals(1, link.droppedHighWater());
    assertEquals(0, link.droppedDown() + link.droppedPathFull());
    assertEquals(1, link.dropped.get());
  }

  @Test
  void withoutAPathCopiesGoOverTcpAndWithoutASessionNowhere() {
    assertTrue(send(10));
    ByteBuf frame = session.readOutbound();
    frame.release();
    link.path = path;
    session.close();
    assertFalse(send(11));
    assertTrue(path.offered.isEmpty(), "a link without a session offers nothing to its path");
    assertEquals(1, link.dropped.get());
    assertEquals(1, link.droppedDown());
  }

  /**
   * The positions a reliable copy's resend is weighed with: past the copy once it is queued, and
   * drained up to it only once what was written before it and it itself left the session's output
   * queue, or the session is gone.
   */
  @Test
  void aReliableCopyIsQueuedUntilTheSessionsOutputHasDrainedPastIt() {
    EmbeddedChannel counted = new EmbeddedChannel(new LinkBytes());
    try {
      link.attach(counted);
      counted.write(Unpooled.wrappedBuffer(new byte[1_000])); // unflushed: still queued
      assertEquals(1_000, output.written(1));
      assertTrue(output.drained(1) <= 0, "none of it left");
      Reliable.Header h =
          new Reliable.Header(1, 0, 0, new int[] {3}, new long[] {1}, new long[] {1});
      assertTrue(output.send(1, 16, 0, 20, new long[] {0b1000}, h, message));
      long mark = output.written(1);
      assertEquals(
          1_000 + ReliableFrames.frameLength(new long[] {0b1000}, h, message.length), mark);
      assertTrue(output.drained(1) < mark, "behind the 1,000 bytes, in the batch");
      session.runPendingTasks(); // the output's loop: the batch is written and flushed, drained
      assertEquals(mark, output.drained(1));
      assertEquals(mark, output.written(1));
      counted.write(Unpooled.wrappedBuffer(new byte[500]));
      assertTrue(output.drained(1) <= mark, "what follows the copy is queued, not the copy");
      assertTrue(output.drained(1) > mark - 500);
      link.attach(null); // the session went down: what it held counts as gone
      assertEquals(mark + 500, output.drained(1));
    } finally {
      counted.finishAndReleaseAll();
    }
  }

  /** A delivery goes to its host by number, which writes it in its own protocol. */
  @Test
  void aDeliveryGoesToItsHostWhateverItsProtocol() {
    List<Long> delivered = new ArrayList<>();
    int n = hosts.number();
    hosts.put(n, (id, m) -> delivered.add(id));
    assertTrue(output.deliver(n, 12, message));
    assertEquals(List.of(12L), delivered);
    hosts.remove(n);
    assertFalse(output.deliver(n, 13, message), "a host that is gone gets nothing");
    assertEquals(List.of(12L), delivered);
  }
}
