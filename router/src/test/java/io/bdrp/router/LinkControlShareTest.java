package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.Link;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.Clock;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.FrameDecoder;
import io.bdrp.transport.ProtocolErrorCounters;
import io.bdrp.transport.RouterFrameDecoder;
import io.bdrp.transport.RouterFrameEncoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A link's control share, on a real loopback connection: control frames hold at most their share of
 * the session's output buffer, so the link stays writable for DATA however many control frames the
 * routing module sends at once; the rest wait in the router and all arrive, in order, as the buffer
 * drains.
 */
class LinkControlShareTest {
  private static final int HIGH_WATER = 64 * 1024;
  private static final long BUDGET = HIGH_WATER / 4;

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

  @AfterEach
  void tearDown() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** A server that reads nothing until asked, and a client connected to it. */
  private record Pair(Channel server, Channel client, Channel reader) {
    void close() {
      client.close().syncUninterruptibly();
      reader.close().syncUninterruptibly();
      server.close().syncUninterruptibly();
    }
  }

  private Pair connect(List<ControlMessage> received, CountDownLatch all) throws Exception {
    CompletableFuture<Channel> accepted = new CompletableFuture<>();
    Channel server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.SO_RCVBUF, 64 * 1024)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(new FrameDecoder())
                        .addLast(new RouterFrameDecoder(1 << 20, null))
                        .addLast(
                            new SimpleChannelInboundHandler<Object>() {
                              @Override
                              protected void channelRead0(ChannelHandlerContext ctx, Object m) {
                                received.add((ControlMessage) m);
                                all.countDown();
                              }
                            });
                    accepted.complete(ch);
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
    Channel client =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_SNDBUF, 64 * 1024)
            .option(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(HIGH_WATER / 2, HIGH_WATER))
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new RouterFrameEncoder());
                  }
                })
            .connect(server.localAddress())
            .sync()
            .channel();
    return new Pair(server, client, accepted.get(5, TimeUnit.SECONDS));
  }

  @Test
  void controlHoldsAtMostItsShareAndEverythingArrivesInOrder() throws Exception {
    int count = 400;
    List<ControlMessage> received = new ArrayList<>();
    CountDownLatch all = new CountDownLatch(count);
    Pair pair = connect(received, all);
    Channel client = pair.client();
    Channel reader = pair.reader();
    try {
      Link link = link();
      // Advertisements of a few kB each: 400 of them, sent in one go, are far more than the link's
      // high water mark.
      List<ControlMessage> sent = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        sent.add(new ControlMessage.PredicateAd(1, 2, 1, i + 1, aggregate(i)));
      }
      boolean writable =
          client
              .eventLoop()
              .submit(
                  () -> {
                    link.attach(client);
                    for (ControlMessage m : sent) {
                      link.send(m);
                    }
                    return client.isWritable();
                  })
              .get(5, TimeUnit.SECONDS);
      long inBuffer = client.eventLoop().submit(link::controlInBuffer).get();
      int waiting = client.eventLoop().submit(link::controlWaiting).get();
      assertTrue(writable, "control frames filled the link past its high water mark");
      assertTrue(inBuffer <= BUDGET, inBuffer + " bytes of control in the buffer");
      assertTrue(waiting > 0, "nothing waited: the test did not fill the link");
      assertTrue(link.controlDeferred.get() > 0);

      reader.config().setAutoRead(true);
      reader.read();
      assertTrue(all.await(20, TimeUnit.SECONDS), received.size() + " of " + count + " arrived");
      assertEquals(sent, received);
      assertEquals(0, (int) client.eventLoop().submit(link::controlWaiting).get());
    } finally {
      pair.close();
    }
  }

  /**
   * A neighbour that never reads (its hellos keep the link alive) cannot make its control queue
   * grow without end: past the bound the session is closed as a slow consumer. Before, the queue
   * grew for as long as the neighbour stayed.
   */
  @Test
  void aNeighbourThatDoesNotReadIsCutOnceItsControlQueueIsFull() throws Exception {
    Pair pair = connect(new ArrayList<>(), new CountDownLatch(1));
    try {
      Channel client = pair.client();
      Link link = link(256 * 1024);
      int sent =
          client
              .eventLoop()
              .submit(
                  () -> {
                    link.attach(client);
                    int n = 0;
                    while (client.isOpen() && n < 10_000) {
                      link.send(new ControlMessage.PredicateAd(1, 2, 1, n + 1, aggregate(n)));
                      n++;
                    }
                    return n;
                  })
              .get(20, TimeUnit.SECONDS);
      assertTrue(sent < 10_000, "the session was never closed");
      assertTrue(client.closeFuture().await(5, TimeUnit.SECONDS));
      assertEquals(0L, (long) client.eventLoop().submit(link::controlWaitingBytes).get());
      assertEquals(1, link.slowConsumersClosed());
    } finally {
      pair.close();
    }
  }

  /**
   * A neighbour that reads nothing is cut once its control frames have waited {@code
   * slowConsumerMs} without one reaching the socket, however few bytes wait (the routing module
   * holds back what can wait while the link is backlogged, so the byte bound alone would never cut
   * it); one whose frames all went is not.
   */
  @Test
  void aNeighbourWhoseControlFramesMakeNoProgressIsCutAfterTheSlowConsumerTime() throws Exception {
    Pair pair = connect(new ArrayList<>(), new CountDownLatch(1));
    try {
      Channel client = pair.client();
      Link link = link();
      long slow = TimeUnit.SECONDS.toNanos(10);
      boolean backlogged =
          client
              .eventLoop()
              .submit(
                  () -> {
                    link.attach(client);
                    for (int i = 0; i < 400; i++) { // far more than the sockets' buffers hold
                      link.send(new ControlMessage.PredicateAd(1, 2, 1, i + 1, aggregate(i)));
                    }
                    return link.backlogged();
                  })
              .get(5, TimeUnit.SECONDS);
      assertTrue(backlogged, "the link never said it held enough");
      long now = System.nanoTime();
      assertFalse(client.eventLoop().submit(() -> link.stalled(now, slow)).get());
      assertTrue(client.isActive(), "not cut before the slow consumer time");
      assertTrue(client.eventLoop().submit(() -> link.stalled(now + 2 * slow, slow)).get());
      assertTrue(client.closeFuture().await(5, TimeUnit.SECONDS));
      assertEquals(1, link.slowConsumersClosed());
    } finally {
      pair.close();
    }
  }

  /**
   * Frames of 16 KiB or more are encoded by the links' control thread, not the loop, and the link
   * keeps its order around them: while a large frame is away, the small ones queued behind it wait,
   * and everything arrives in the order sent. Before, every frame was encoded on the loop as it was
   * written, and a new neighbour's megabytes of advertisements held the loop for up to a second.
   */
  @Test
  void largeFramesAreEncodedOffTheLoopAndKeepTheirPlace() throws Exception {
    List<ControlMessage> received = new ArrayList<>();
    CountDownLatch all = new CountDownLatch(6);
    Pair pair = connect(received, all);
    Channel client = pair.client();
    pair.reader().config().setAutoRead(true);
    pair.reader().read();
    ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();
    try {
      Link link = link(64 << 20, held::add);
      List<ControlMessage> sent = new ArrayList<>();
      sent.add(new ControlMessage.PredicateAd(1, 2, 1, 1, aggregate(1))); // small
      sent.add(new ControlMessage.PredicateAd(1, 3, 1, 1, large(3))); // large: away
      sent.add(new ControlMessage.PredicateAd(1, 4, 1, 1, aggregate(4))); // waits behind it
      sent.add(new ControlMessage.PredicateAd(1, 5, 1, 1, large(5)));
      sent.add(new ControlMessage.PredicateAd(1, 6, 1, 1, aggregate(6)));
      sent.add(new ControlMessage.PredicateAd(1, 7, 1, 1, aggregate(7)));
      client
          .eventLoop()
          .submit(
              () -> {
                link.attach(client);
                sent.forEach(link::send);
              })
          .get(5, TimeUnit.SECONDS);
      assertEquals(2, held.size(), "the two large frames went to the encoder");
      assertEquals(5, (int) client.eventLoop().submit(link::controlWaiting).get());
      Thread encoder = new Thread(() -> held.forEach(Runnable::run), "encoder");
      encoder.start();
      encoder.join(5000);
      assertTrue(all.await(10, TimeUnit.SECONDS), received.size() + " of 6 arrived");
      assertEquals(sent, received);
      assertEquals(0, (int) client.eventLoop().submit(link::controlWaiting).get());
    } finally {
      pair.close();
    }
  }

  /** An aggregate of 1,000 conjunctions of eight equalities: more than 16 KiB encoded. */
  private static EncodedPredicate large(int i) {
    StringBuilder p = new StringBuilder();
    for (int j = 0; j < 1000; j++) {
      p.append(j == 0 ? "" : " || ");
      for (int c = 0; c < 8; c++) {
        p.append(c == 0 ? "" : " && ").append("y").append(j).append('_').append(c);
        p.append(" = ").append(i);
      }
    }
    EncodedPredicate e = ENCODER.encode(Predicate.parse(p.toString()));
    assertTrue(EncodedPredicateCodec.encodedLength(e) >= Link.OFFLOAD_BYTES);
    return e;
  }

  private static final Encoder ENCODER = new Encoder(BloomParameters.DEFAULT);

  /** An aggregate of 200 one-constraint conjunctions, different for each i. */
  private static EncodedPredicate aggregate(int i) {
    StringBuilder p = new StringBuilder();
    for (int j = 0; j < 200; j++) {
      p.append(j == 0 ? "" : " || ").append("x").append(j).append(" = ").append(i);
    }
    return ENCODER.encode(Predicate.parse(p.toString()));
  }

  private static Link link() {
    return link(64 << 20, Runnable::run);
  }

  private static Link link(long maxWaitingBytes) {
    return link(maxWaitingBytes, Runnable::run);
  }

  private static Link link(long maxWaitingBytes, Executor encoder) {
    RoutingConfig routing = RoutingConfig.builder().maxRouters(8).build();
    Clock clock = System::currentTimeMillis;
    RoutingNode node = new RoutingNode(0, 1, routing, BloomParameters.DEFAULT, clock);
    RouterMetrics metrics = new RouterMetrics(new Metrics(), node, new ProtocolErrorCounters());
    return new Link(
        new RouterConfig.Neighbour(1, new InetSocketAddress("127.0.0.1", 1), 1),
        metrics,
        BUDGET,
        maxWaitingBytes,
        encoder);
  }
}
