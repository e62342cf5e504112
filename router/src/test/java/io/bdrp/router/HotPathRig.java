package io.bdrp.router;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.ClientSessions;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.DataReceiver;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Face;
import io.bdrp.routing.MessageIds;
import io.bdrp.routing.Reliable;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolErrorCounters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.DefaultChannelGroup;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One router's data path in process, without sockets, for measuring what it allocates per message:
 * router 0's real client sessions ({@link ClientSessions#initializer()} on {@link
 * EmbeddedChannel}s), data plane, {@link LinkOutput}, {@link DataReceiver}, hosts and link
 * sessions, over routing state converged with neighbours 1..n held in memory (their {@link
 * RoutingNode}s, joined by faces that hand control messages over on a stopped clock).
 *
 * <p>{@link #publish()} writes one SEND frame's bytes into the publishing host's session and runs
 * the loop's turn to its end (the batch's flush); {@link #receive()} hands one DATA frame from
 * neighbour 1 to the data receiver, as a link's TCP session does. Both then drop what the router
 * wrote (DELIVER frames to every matching host, DATA copies to neighbours) after counting its
 * bytes, as a socket would take it.
 *
 * <p>Single-threaded: every call runs on the caller's thread, which is the router's loop here.
 */
public final class HotPathRig implements AutoCloseable {
  /** The message every publish sends: ten attributes, strings and integers, a short body. */
  public static final Message MESSAGE =
      Message.builder()
          .put("symbol", "IBM")
          .put("exchange", "NYSE")
          .put("currency", "USD")
          .put("sector", "technology")
          .put("country", "US")
          .put("price", 142L)
          .put("volume", 5200L)
          .put("bid", 141L)
          .put("ask", 143L)
          .put("day", 27L)
          .body(new byte[64])
          .build();

  private final EmbeddedChannel publisher;
  private final List<EmbeddedChannel> hostChannels = new ArrayList<>();
  private final List<EmbeddedChannel> linkChannels = new ArrayList<>();
  private final ByteBuf send;
  private final ByteBuf data;
  private final DataReceiver receiver;
  private final Link from;
  private final DataPlane<MessageBytes> dataPlane;
  private long written;

  /**
   * @param neighbours routers 1..neighbours, each a link of router 0
   * @param matchingNeighbours how many of them (the first) advertise a predicate the message
   *     satisfies; the others advertise one it does not
   * @param hosts local hosts of router 0
   * @param matchingHosts how many of them (the first) subscribe to the message
   */
  public HotPathRig(int neighbours, int matchingNeighbours, int hosts, int matchingHosts) {
    long[] now = {0};
    RoutingConfig routing = RoutingConfig.builder().maxRouters(64).build();
    RouterConfig config = Federation.loneRouter().withRouting(routing);
    publisher = new EmbeddedChannel();
    RoutingNode node = new RoutingNode(0, 1, routing, config.bloom(), () -> now[0]);
    ProtocolErrorCounters errors = new ProtocolErrorCounters();
    RouterCore core =
        new RouterCore(
            config,
            publisher.eventLoop(),
            Runnable::run,
            Runnable::run,
            new RouterMetrics(new Metrics(), node, errors),
            errors,
            node,
            false,
            new DefaultChannelGroup(publisher.eventLoop()),
            () -> {},
            () -> false);
    RouterMetrics metrics = core.metrics();

    // The neighbours' routing state, converged with router 0's over in-memory faces.
    RoutingNode[] nodes = new RoutingNode[neighbours + 1];
    nodes[0] = node;
    ArrayDeque<Object[]> inFlight = new ArrayDeque<>();
    for (int n = 1; n <= neighbours; n++) {
      nodes[n] = new RoutingNode(n, 1, routing, config.bloom(), () -> now[0]);
      nodes[n].setHost(
          1, Predicate.parse(n <= matchingNeighbours ? "symbol = \"IBM\"" : "symbol = \"XYZ\""));
      node.addLink(face(0, n, inFlight), 1);
      nodes[n].addLink(face(n, 0, inFlight), 1);
    }
    for (int step = 0; step < 100_000 && !converged(node, neighbours); step++) {
      if (inFlight.isEmpty()) {
        long next = Long.MAX_VALUE;
        for (RoutingNode r : nodes) {
          next = Math.min(next, r.nextDeadlineMillis());
        }
        now[0] = Math.max(now[0], next);
        for (RoutingNode r : nodes) {
          if (r.nextDeadlineMillis() <= now[0]) {
            r.tick();
          }
        }
      } else {
        Object[] m = inFlight.poll();
        nodes[(Integer) m[0]].receive((ControlMessage) m[1]);
      }
    }
    if (!converged(node, neighbours)) {
      throw new IllegalStateException("the routing state did not converge");
    }

    // Router 0's data path, assembled as Router assembles it.
    OutputBatches batches = new OutputBatches(publisher.eventLoop());
    Hosts table = new Hosts();
    Link[] links = new Link[routing.maxRouters()];
    for (int n = 1; n <= neighbours; n++) {
      Link l =
          new Link(
              new RouterConfig.Neighbour(n, new InetSocketAddress("127.0.0.1", 1), 1),
              metrics,
              1 << 20,
              8 << 20,
              Runnable::run);
      EmbeddedChannel session = new EmbeddedChannel();
      linkChannels.add(session);
      l.attach(session);
      links[n] = l;
    }
    from = links[1];
    LinkOutput output = new LinkOutput(links, table, batches, metrics.matchSeconds);
    dataPlane = new DataPlane<>(node, output, System::nanoTime, MessageIds.secure(0, 64));
    Reliable<MessageBytes> reliable =
        new Reliable<>(dataPlane, node, 1, () -> now[0], Reliable.Config.DEFAULT, output);
    ClientSessions clients =
        new ClientSessions(core, table, batches, dataPlane, reliable, () -> {}, () -> null, false);
    output.publishers(clients.publishers());
    receiver =
        new DataReceiver(0, metrics, dataPlane, reliable, () -> false); // no kernel fast path

    publisher.pipeline().addLast(clients.initializer());
    hello(publisher, "publisher");
    for (int h = 0; h < hosts; h++) {
      EmbeddedChannel c = new EmbeddedChannel();
      hostChannels.add(c);
      c.pipeline().addLast(clients.initializer());
      hello(c, "host-" + h);
      inbound(
          c,
          new ClientFrame.SetPredicate(
              1, Predicate.parse(h < matchingHosts ? "price > 100" : "price < 100")));
    }
    drain();

    send = ClientFrameCodec.encode(ByteBufAllocator.DEFAULT, new ClientFrame.Send(0, MESSAGE));
    // A DATA frame from neighbour 1 whose D is router 0 and the other neighbours.
    byte[] m = MessageCodec.toBytes(MESSAGE);
    long[] d = new long[1];
    for (int n = 0; n <= neighbours; n++) {
      d[0] |= n == 1 ? 0 : 1L << n;
    }
    int layout = DataHeader.layoutOf(d);
    data = ByteBufAllocator.DEFAULT.directBuffer(DataHeader.frameLength(layout, m.length));
    DataHeader.writeHeader(data, 16, false, 1, 7, d, layout, m.length);
    data.writeBytes(m);
  }

  private static boolean converged(RoutingNode node, int neighbours) {
    for (int n = 1; n <= neighbours; n++) {
      if (node.predicates().get(n) == null) {
        return false;
      }
      if (node.routes().nextHop(n) != n) {
        return false;
      }
    }
    return node.predicates().indexReady();
  }

  private static Face face(int self, int to, ArrayDeque<Object[]> inFlight) {
    return new Face() {
      @Override
      public int neighbour() {
        return to;
      }

      @Override
      public void send(ControlMessage message) {
        inFlight.add(new Object[] {to, message});
      }
    };
  }

  private void hello(EmbeddedChannel c, String name) {
    inbound(c, new ClientFrame.Hello(Frames.VERSION, name, new byte[0]));
  }

  private static void inbound(EmbeddedChannel c, ClientFrame f) {
    c.writeInbound(ClientFrameCodec.encode(ByteBufAllocator.DEFAULT, f));
  }

  /**
   * One SEND from the publishing host: its frame's bytes read by the session, the loop's turn run
   * to its end, what the router wrote taken off its channels. Returns the bytes written.
   */
  public long publish() {
    return publish(1);
  }

  /**
   * {@code n} SENDs in one read, as a publisher that keeps its socket busy sends them: one turn of
   * the loop, and one output batch per channel for all of them.
   */
  public long publish(int n) {
    // As a socket read: the bytes in a buffer of the channel's allocator, which the pipeline frees.
    int length = send.readableBytes();
    ByteBuf read = publisher.alloc().directBuffer(n * length);
    for (int i = 0; i < n; i++) {
      read.writeBytes(send, send.readerIndex(), length);
    }
    publisher.pipeline().fireChannelRead(read);
    return drain();
  }

  /** One DATA frame from neighbour 1 taken by the data receiver, as {@link #publish()}. */
  public long receive() {
    return receive(1);
  }

  /** {@code n} DATA frames from neighbour 1 in one turn of the loop, as {@link #publish(int)}. */
  public long receive(int n) {
    for (int i = 0; i < n; i++) {
      receiver.receive(from, data, "tcp");
    }
    return drain();
  }

  /** Messages published through the data plane so far. */
  public long published() {
    return dataPlane.published();
  }

  /** Deliveries queued to local hosts so far. */
  public long delivered() {
    return dataPlane.delivered();
  }

  /** DATA copies queued to neighbours so far. */
  public long copies() {
    return dataPlane.copies();
  }

  /** Bytes the router has written to hosts and links, all told. */
  public long written() {
    return written;
  }

  /** Runs the loop's pending tasks (the batch's flush) and drops what was written, counted. */
  private long drain() {
    publisher.runPendingTasks();
    publisher.checkException();
    long n = take(publisher);
    for (int i = 0; i < hostChannels.size(); i++) {
      n += take(hostChannels.get(i));
    }
    for (int i = 0; i < linkChannels.size(); i++) {
      n += take(linkChannels.get(i));
    }
    written += n;
    return n;
  }

  private static long take(EmbeddedChannel c) {
    long n = 0;
    for (Object o; (o = c.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      n += b.readableBytes();
      b.release();
    }
    return n;
  }

  @Override
  public void close() {
    send.release();
    data.release();
    publisher.finishAndReleaseAll();
    for (EmbeddedChannel c : hostChannels) {
      c.finishAndReleaseAll();
    }
    for (EmbeddedChannel c : linkChannels) {
      c.finishAndReleaseAll();
    }
  }
}
