package io.bdrp.router;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.wire.RouterFrameDecoder;
import io.bdrp.router.wire.RouterFrameEncoder;
import io.bdrp.router.wire.RouterHello;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.Face;
import io.bdrp.routing.Forwarder;
import io.bdrp.routing.ForwardingTable;
import io.bdrp.routing.Partition;
import io.bdrp.routing.RouteSnapshot;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameDecoder;
import io.bdrp.transport.ClientFrameEncoder;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.FrameDecoder;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolErrorCounters;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.ProtocolException;
import io.bdrp.transport.SessionFrame;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router daemon: a client port for hosts, a router port for neighbouring routers, an optional
 * HTTP metrics port, and the routing state machines ({@link RoutingNode}) driving it.
 *
 * <p><b>Threads.</b> Everything runs on one event loop: every session's I/O, the routing state, the
 * forwarding decisions and the timers. No state is shared across threads, so nothing is locked;
 * {@link #close()} and the accessors hand their work to that loop. The native epoll transport is
 * used when available, NIO otherwise.
 *
 * <p><b>Forwarding.</b> A message sent by a host is matched once here: exactly against the local
 * hosts, and against every other router's encoded predicate for D, which is split by next hop into
 * one DATA frame per hop around the message's bytes as the host sent them (never re-encoded). A
 * DATA frame from a neighbour is only split (its D rewritten per hop); if this router is in D, the
 * message is decoded and matched against the local hosts. A copy for a link or host that is not
 * writable (above its high water mark) is dropped and counted, never queued without bound.
 *
 * <p><b>Links.</b> A router dials every configured neighbour whose address it knows and accepts
 * sessions from any configured neighbour; each side sends a ROUTER_HELLO, checked for the router
 * number, the Bloom parameters and the token. If both sides dial, the session dialled by the
 * lower-numbered router is kept. A lost session is redialled after a second.
 */
public final class Router implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  private static final long REDIAL_MS = 1_000;

  private final RouterConfig config;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final boolean epoll;
  private final RoutingNode node;
  private final Forwarder forwarder;
  private final Partition partition;
  private final Map<Integer, Link> links = new HashMap<>();
  private final Map<Integer, Host> hosts = new HashMap<>();
  private int nextHost = 1;
  private long nextMessageId;
  private final ProtocolErrorCounters errors = new ProtocolErrorCounters();
  private final RouterMetrics metrics;
  private Channel clientServer;
  private Channel routerServer;
  private Channel metricsServer;
  private ScheduledFuture<?> timer;
  private long timerAt = Long.MAX_VALUE;
  private volatile boolean closed;

  /** A client session. */
  private final class Host {
    final int id;
    final Channel channel;
    final String name;
    final Metrics.Counter delivered;
    final Metrics.Counter dropped;

    Host(int id, Channel channel, String name) {
      this.id = id;
      this.channel = channel;
      this.name = name;
      this.delivered = metrics.hostDelivered(id, name);
      this.dropped = metrics.hostDropped(id, name);
    }
  }

  /** A configured neighbour and its current session, if any. */
  private final class Link implements Face {
    final RouterConfig.Neighbour neighbour;
    InetSocketAddress address; // where to dial it, or null to wait for it
    Channel session; // after the hello exchange
    boolean dialledByUs;
    final Metrics.Counter in;
    final Metrics.Counter out;
    final Metrics.Counter dropped;

    Link(RouterConfig.Neighbour neighbour) {
      this.neighbour = neighbour;
      this.address = neighbour.address();
      String n = Integer.toString(neighbour.router());
      this.in = metrics.linkIn(n);
      this.out = metrics.linkOut(n);
      this.dropped = metrics.linkDropped(n);
    }

    @Override
    public int neighbour() {
      return neighbour.router();
    }

    @Override
    public void send(ControlMessage message) {
      Channel c = session;
      if (c != null && c.isActive()) {
        c.writeAndFlush(message, c.voidPromise());
      }
    }
  }

  private Router(RouterConfig config) {
    this.config = config;
    this.epoll = Epoll.isAvailable();
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    this.loop = group.next();
    this.node =
        new RoutingNode(
            config.router(),
            config.epoch(),
            config.routing(),
            config.bloom(),
            () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime()));
    this.forwarder = new Forwarder(config.routing(), config.bloom());
    this.partition = forwarder.newPartition();
    this.metrics = new RouterMetrics(new Metrics(), node, errors, hosts::size);
  }

  /**
   * Starts a router: binds its ports, dials its neighbours, and returns once it listens.
   *
   * @throws IllegalStateException if a port cannot be bound (the message says which)
   */
  public static Router start(RouterConfig config) throws InterruptedException {
    Router r = new Router(config);
    try {
      r.bind();
    } catch (RuntimeException | InterruptedException e) {
      r.close();
      throw e;
    }
    return r;
  }

  private Class<? extends ServerSocketChannel> serverChannel() {
    return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  private Class<? extends SocketChannel> socketChannel() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  private static InetSocketAddress resolve(InetSocketAddress a) {
    return a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a;
  }

  private void bind() throws InterruptedException {
    RouterConfig.Limits limits = config.limits();
    clientServer =
        bindOn(
            "listen.clients",
            config.clientListen(),
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                ch.config()
                    .setWriteBufferWaterMark(
                        new WriteBufferWaterMark(
                            limits.hostLowWaterBytes(), limits.hostHighWaterBytes()));
                ch.pipeline()
                    .addLast(new FrameDecoder(limits.maxFrameBytes()))
                    .addLast(new SendBytes())
                    .addLast(new ClientFrameDecoder(limits.maxFrameBytes()))
                    .addLast(new ClientFrameEncoder())
                    .addLast(new ClientHandler())
                    .addLast(new ProtocolErrorHandler(errors));
              }
            });
    routerServer = bindOn("listen.routers", config.routerListen(), routerInitializer(null));
    if (config.metricsListen() != null) {
      metricsServer =
          bindOn(
              "listen.metrics",
              config.metricsListen(),
              MetricsHttp.initializer(() -> metrics.registry().render()));
    }
    loop.execute(
        () -> {
          for (RouterConfig.Neighbour n : config.neighbours()) {
            Link l = new Link(n);
            links.put(n.router(), l);
            node.addLink(l, n.cost());
            if (n.address() != null) {
              dial(l);
            }
          }
          rearm();
        });
    log.info(
        "router {} (epoch {}) listening: clients {}, routers {}{}; {} neighbours; {} transport",
        config.router(),
        config.epoch(),
        clientServer.localAddress(),
        routerServer.localAddress(),
        metricsServer == null ? "" : ", metrics " + metricsServer.localAddress(),
        config.neighbours().size(),
        epoll ? "epoll" : "NIO");
  }

  private Channel bindOn(
      String field, InetSocketAddress address, ChannelInitializer<? extends Channel> init)
      throws InterruptedException {
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(serverChannel())
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(init);
    var f = b.bind(resolve(address)).await();
    if (!f.isSuccess()) {
      throw new IllegalStateException(
          field + ": cannot listen on " + address + ": " + f.cause().getMessage(), f.cause());
    }
    return f.channel();
  }

  private ChannelInitializer<SocketChannel> routerInitializer(Link dialling) {
    RouterConfig.Limits limits = config.limits();
    return new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.config()
            .setWriteBufferWaterMark(
                new WriteBufferWaterMark(limits.linkLowWaterBytes(), limits.linkHighWaterBytes()));
        ch.pipeline()
            .addLast(new FrameDecoder(limits.maxFrameBytes()))
            .addLast(new RouterFrameDecoder(limits.maxFrameBytes(), config.bloom()))
            .addLast(new RouterFrameEncoder())
            .addLast(new RouterHandler(dialling))
            .addLast(new ProtocolErrorHandler(errors));
      }
    };
  }

  // ---- addresses ----

  /** The bound client address. */
  public InetSocketAddress clientAddress() {
    return (InetSocketAddress) clientServer.localAddress();
  }

  /** The bound router address. */
  public InetSocketAddress routerAddress() {
    return (InetSocketAddress) routerServer.localAddress();
  }

  /** The bound metrics address, or null. */
  public InetSocketAddress metricsAddress() {
    return metricsServer == null ? null : (InetSocketAddress) metricsServer.localAddress();
  }

  /** This router's number. */
  public int number() {
    return config.router();
  }

  /** The metrics, rendered (runs on the router's loop). */
  public String metricsText() {
    return loop.submit(() -> metrics.registry().render()).syncUninterruptibly().getNow();
  }

  /** Routers this router has a route to (runs on the router's loop). */
  public int[] reachable() {
    return loop.submit(() -> node.unicast().reachable()).syncUninterruptibly().getNow();
  }

  /** How many origins PREDICATES holds, this router included (runs on the router's loop). */
  public int predicateOrigins() {
    return loop.submit(() -> node.predicates().size()).syncUninterruptibly().getNow();
  }

  /**
   * Dials configured neighbour {@code neighbour} at {@code address} (for neighbours whose address
   * is learnt after start, such as routers bound to port 0), and keeps redialling it when the
   * session breaks.
   */
  public void connect(int neighbour, InetSocketAddress address) {
    loop.submit(
            () -> {
              Link l = links.get(neighbour);
              if (l == null) {
                throw new IllegalArgumentException(
                    "router " + neighbour + " is not a configured neighbour of " + config.router());
              }
              l.address = address;
              if (l.session == null) {
                dial(l);
              }
            })
        .syncUninterruptibly();
  }

  /** The encoded predicate this router holds for {@code origin}, or null (on the router's loop). */
  public io.bdrp.encoding.bloom.EncodedPredicate predicateOf(int origin) {
    return loop.submit(() -> node.predicates().get(origin)).syncUninterruptibly().getNow();
  }

  /** This router's own aggregate, the OR of its hosts' predicates, encoded (on its loop). */
  public io.bdrp.encoding.bloom.EncodedPredicate aggregate() {
    return loop.submit(() -> node.local().aggregate()).syncUninterruptibly().getNow();
  }

  /**
   * Whether every router of an in-process federation holds every other one's current aggregate:
   * predicates have propagated, and D computed anywhere is exact but for false positives.
   */
  public static boolean predicatesAgree(java.util.Collection<Router> routers) {
    for (Router origin : routers) {
      io.bdrp.encoding.bloom.EncodedPredicate p = origin.aggregate();
      for (Router r : routers) {
        if (r != origin && !p.equals(r.predicateOf(origin.number()))) {
          return false;
        }
      }
    }
    return true;
  }

  // ---- timers ----

  private void rearm() {
    long deadline = node.nextDeadlineMillis();
    if (deadline == Long.MAX_VALUE || closed) {
      return;
    }
    if (timer != null && deadline >= timerAt && !timer.isDone()) {
      return;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    long now = TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    timerAt = deadline;
    timer =
        loop.schedule(
            () -> {
              timerAt = Long.MAX_VALUE;
              node.tick();
              rearm();
            },
            Math.max(0, deadline - now),
            TimeUnit.MILLISECONDS);
  }

  // ---- router links ----

  private void dial(Link l) {
    if (closed) {
      return;
    }
    new Bootstrap()
        .group(loop)
        .channel(socketChannel())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5_000)
        .handler(routerInitializer(l))
        .connect(resolve(l.address))
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                log.debug(
                    "router {}: cannot reach {}: {}",
                    config.router(),
                    l.neighbour,
                    f.cause().getMessage());
                loop.schedule(() -> redialIfIdle(l), REDIAL_MS, TimeUnit.MILLISECONDS);
              }
            });
  }

  private void redialIfIdle(Link l) {
    if (!closed && l.session == null && l.address != null && links.get(l.neighbour()) == l) {
      dial(l);
    }
  }

  /** One router session: hello exchange, then control and DATA frames. */
  private final class RouterHandler extends SimpleChannelInboundHandler<Object> {
    private final Link dialling; // the link this session dials, or null if accepted
    private Link link; // after a valid hello

    RouterHandler(Link dialling) {
      super(Object.class, false);
      this.dialling = dialling;
    }

    /** Whatever a read brought from the neighbour shows it alive: once per read, not per frame. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (link != null) {
        node.heard(link.neighbour());
      }
      ctx.fireChannelReadComplete();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      byte[] token =
          config.routerToken() == null
              ? new byte[0]
              : config.routerToken().getBytes(StandardCharsets.UTF_8);
      ctx.writeAndFlush(new RouterHello(config.router(), config.epoch(), config.bloom(), token));
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      try {
        if (link == null) {
          if (!(msg instanceof RouterHello h)) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION,
                "the first frame of a router session must be ROUTER_HELLO");
          }
          hello(ctx, h);
          return;
        }
        if (msg instanceof ByteBuf data) {
          link.in.inc();
          data(link, data);
        } else if (msg instanceof ControlMessage m) {
          if (m.sender() != link.neighbour()) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION,
                "control message names sender "
                    + m.sender()
                    + " on the link to "
                    + link.neighbour());
          }
          node.receive(m);
          rearm();
        } else if (msg instanceof SessionFrame s) {
          if (s instanceof ClientFrame.Ping p) {
            ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
          } else if (s instanceof ClientFrame.Bye) {
            ctx.close();
          }
        } else if (msg instanceof ClientFrame.Error e) {
          log.warn(
              "router {}: neighbour {} reports error {}: {}",
              config.router(),
              link.neighbour(),
              e.code(),
              e.message());
        } else {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, "unexpected frame " + msg.getClass().getSimpleName());
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    private void hello(ChannelHandlerContext ctx, RouterHello h) {
      Link l = links.get(h.routerNumber());
      if (l == null) {
        throw new ProtocolException(
            ErrorCode.NOT_AUTHORIZED,
            "router " + h.routerNumber() + " is not a configured neighbour");
      }
      if (dialling != null && dialling != l) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_VIOLATION,
            "dialled router "
                + dialling.neighbour()
                + " but router "
                + h.routerNumber()
                + " answered");
      }
      if (!h.bloom().equals(config.bloom())) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_VIOLATION,
            "Bloom parameters " + h.bloom() + " differ from this network's " + config.bloom());
      }
      byte[] want =
          config.routerToken() == null
              ? new byte[0]
              : config.routerToken().getBytes(StandardCharsets.UTF_8);
      if (!java.security.MessageDigest.isEqual(want, h.authToken())) {
        throw new ProtocolException(ErrorCode.NOT_AUTHORIZED, "wrong router token");
      }
      boolean ours = dialling != null;
      if (l.session != null && l.session.isActive()) {
        // Both sides dialled: keep the session dialled by the lower-numbered router.
        int keepDialler = Math.min(config.router(), l.neighbour());
        boolean newIsKeeper = (ours ? config.router() : l.neighbour()) == keepDialler;
        if (!newIsKeeper) {
          ctx.close();
          return;
        }
        Channel old = l.session;
        l.session = null;
        old.close();
        node.linkDown(l.neighbour());
      }
      link = l;
      l.session = ctx.channel();
      l.dialledByUs = ours;
      ctx.channel()
          .closeFuture()
          .addListener(
              f -> {
                if (l.session == ctx.channel()) {
                  l.session = null;
                  node.linkDown(l.neighbour());
                  rearm();
                  if (l.dialledByUs) {
                    loop.schedule(() -> redialIfIdle(l), REDIAL_MS, TimeUnit.MILLISECONDS);
                  }
                }
              });
      log.info(
          "router {}: link to router {} up ({})",
          config.router(),
          l.neighbour(),
          ours ? "dialled" : "accepted");
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (dialling != null && link == null) {
        loop.schedule(() -> redialIfIdle(dialling), REDIAL_MS, TimeUnit.MILLISECONDS);
      }
      ctx.fireChannelInactive();
    }
  }

  // ---- clients ----

  /** One client session. */
  private final class ClientHandler extends SimpleChannelInboundHandler<ClientFrame> {
    private Host host;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
      if (host == null) {
        if (!(f instanceof ClientFrame.Hello h)) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, "the first frame of a client session must be HELLO");
        }
        if (hosts.size() >= config.limits().maxClients()) {
          throw new ProtocolException(
              ErrorCode.OVERLOADED,
              "this router serves at most " + config.limits().maxClients() + " clients");
        }
        host = new Host(nextHost++, ctx.channel(), h.clientName());
        hosts.put(host.id, host);
        ctx.writeAndFlush(new ClientFrame.HelloOk(Frames.VERSION, config.router(), "bdrp-router"));
        return;
      }
      switch (f) {
        case ClientFrame.SetPredicate s -> {
          node.setHost(host.id, s.predicate());
          metrics.predicateChanges.inc();
          ctx.writeAndFlush(new ClientFrame.Ok(s.correlationId()));
          rearm();
        }
        case ClientFrame.Send s -> {
          publish(host, s.message());
          if (s.correlationId() != 0) {
            ctx.writeAndFlush(new ClientFrame.Ok(s.correlationId()));
          }
        }
        case ClientFrame.Ping p -> ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
        case ClientFrame.Pong p -> {}
        case ClientFrame.Bye b -> ctx.close();
        case ClientFrame.Hello h ->
            throw new ProtocolException(ErrorCode.PROTOCOL_VIOLATION, "HELLO sent twice");
        default ->
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION, "a client may not send " + f.type());
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (host != null) {
        hosts.remove(host.id);
        node.removeHost(host.id);
        rearm();
      }
      ctx.fireChannelInactive();
    }
  }

  // ---- forwarding ----

  /**
   * The encoded message of the SEND frame being handled, or null. A message is forwarded and
   * delivered as the bytes its sender wrote, not re-encoded from its decoded form: DATA and DELIVER
   * frames only wrap them in a new header.
   */
  private ByteBuf sendBytes;

  private static final int SEND_MESSAGE_OFFSET =
      Frames.PREFIX_BYTES + 8; // after the correlation id

  /** Sits before the client frame decoder and exposes a SEND frame's message bytes meanwhile. */
  private final class SendBytes extends io.netty.channel.ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf f
          && f.readableBytes() > SEND_MESSAGE_OFFSET
          && f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET)
              == io.bdrp.transport.FrameType.SEND.number()) {
        // Retained: the decoder releases the frame before it passes the decoded SEND on.
        ByteBuf raw =
            f.retainedSlice(
                f.readerIndex() + SEND_MESSAGE_OFFSET, f.readableBytes() - SEND_MESSAGE_OFFSET);
        sendBytes = raw;
        try {
          ctx.fireChannelRead(msg); // decoded and published before this returns
        } finally {
          sendBytes = null;
          raw.release();
        }
      } else {
        ctx.fireChannelRead(msg);
      }
    }
  }

  private void publish(Host from, Message m) {
    metrics.published.inc();
    long t0 = System.nanoTime();
    RouteSnapshot s = node.snapshot();
    int inD = forwarder.ingress(s, m, partition);
    metrics.matchSeconds.observeNanos(System.nanoTime() - t0);
    metrics.destinations.add(inD);
    // The SEND's own message bytes, exposed by SendBytes while the frame is handled.
    ByteBuf body = java.util.Objects.requireNonNull(sendBytes, "SEND bytes").retainedDuplicate();
    try {
      deliverLocal(m, body);
      if (partition.count() == 0) {
        countDrops(partition);
        return;
      }
      ByteBufAllocator alloc = from.channel.alloc();
      long id = ((long) config.router() << 48) | (nextMessageId++ & 0xFFFF_FFFF_FFFFL);
      for (int i = 0; i < partition.count(); i++) {
        ByteBuf frame =
            DataHeader.compose(
                alloc,
                forwarder.initialHopLimit(),
                partition.broadcast(),
                config.router(),
                id,
                partition.broadcast() ? null : partition.set(i),
                body.retainedDuplicate());
        sendData(partition.hop(i), frame);
      }
    } finally {
      body.release();
    }
    countDrops(partition);
  }

  // Reused by every DATA frame: the loop handles one at a time.
  private final DataHeader header = new DataHeader();
  private long[] transitD = new long[0];

  private void data(Link from, ByteBuf frame) {
    DataHeader h = header.wrap(frame);
    ForwardingTable routes = node.routes();
    if (h.isBroadcast()) {
      forwarder.broadcast(routes, h.sourceRouter(), from.neighbour(), h.hopLimit(), partition);
    } else {
      if (transitD.length != partition.words()) {
        transitD = new long[partition.words()];
      }
      long[] d =
          h.destinationWords() < transitD.length
              ? h.destinations() // too short for these routes: refused as before
              : h.destinationsInto(transitD);
      forwarder.transit(routes, d, h.hopLimit(), partition);
    }
    if (partition.local()) {
      deliverLocal(h.decodeMessage(), h.messageBytes());
    }
    for (int i = 0; i < partition.count(); i++) {
      sendData(partition.hop(i), h.copyWith(frame.alloc(), h.hopLimit() - 1, partition.set(i)));
    }
    countDrops(partition);
  }

  private void countDrops(Partition p) {
    switch (p.drop()) {
      case HOP_LIMIT -> metrics.hopLimitDrops.inc();
      case NOT_ON_TREE -> metrics.notOnTreeDrops.inc();
      case NONE -> {}
    }
    if (p.unreachable() > 0) {
      metrics.unreachable.add(p.unreachable());
    }
  }

  /** Queues {@code frame} (which it releases) on the link to {@code neighbour}, or drops it. */
  private void sendData(int neighbour, ByteBuf frame) {
    Link l = links.get(neighbour);
    Channel c = l == null ? null : l.session;
    try {
      if (c == null || !c.isActive() || !c.isWritable()) {
        if (l != null) {
          l.dropped.inc();
        } else {
          metrics.unreachable.inc();
        }
        return;
      }
      l.out.inc();
      writeLater(c, frame);
    } finally {
      frame.release();
    }
  }

  // Output made while handling a batch of input is gathered per socket: small frames are copied
  // into one buffer per socket, and everything is written and flushed once the batch is done (a
  // task queued on the loop runs after the I/O it is handling). One system call per socket per
  // batch, and no per-frame bookkeeping in the channel, rather than both per message. The
  // gathered bytes are bounded by one batch of input.
  private static final int BATCH_BYTES = 64 * 1024;
  private static final int COPY_BELOW = 4 * 1024;
  private final java.util.IdentityHashMap<Channel, ByteBuf> pendingOut =
      new java.util.IdentityHashMap<>();
  private boolean flushQueued;

  /** Queues a copy of {@code frame}'s readable bytes on {@code c}; the caller keeps the frame. */
  private void writeLater(Channel c, ByteBuf frame) {
    int n = frame.readableBytes();
    ByteBuf batch = pendingOut.get(c);
    if (batch != null && (batch.writableBytes() < n || n >= COPY_BELOW)) {
      c.write(batch, c.voidPromise());
      pendingOut.put(c, null);
      batch = null;
    }
    if (n >= COPY_BELOW) {
      c.write(frame.retainedDuplicate(), c.voidPromise());
      if (!pendingOut.containsKey(c)) {
        pendingOut.put(c, null);
      }
    } else {
      if (batch == null) {
        batch = c.alloc().directBuffer(BATCH_BYTES, BATCH_BYTES);
        pendingOut.put(c, batch);
      }
      batch.writeBytes(frame, frame.readerIndex(), n);
    }
    if (!flushQueued) {
      flushQueued = true;
      loop.execute(this::flushAll);
    }
  }

  private void flushAll() {
    flushQueued = false;
    for (Map.Entry<Channel, ByteBuf> e : pendingOut.entrySet()) {
      Channel c = e.getKey();
      ByteBuf batch = e.getValue();
      if (batch != null) {
        if (batch.isReadable()) {
          c.write(batch, c.voidPromise());
        } else {
          batch.release();
        }
      }
      c.flush();
    }
    pendingOut.clear();
  }

  private final List<Host> matched = new ArrayList<>();

  /** Delivers {@code m}, whose encoding is {@code encoded}, to every local host it matches. */
  private void deliverLocal(Message m, ByteBuf encoded) {
    matched.clear();
    node.local().match(m, id -> matched.add(hosts.get(id)));
    if (matched.isEmpty()) {
      return;
    }
    metrics.localMatches.inc();
    // One DELIVER frame, built once around the message's bytes, copied to every matching host.
    int n = encoded.readableBytes();
    ByteBuf frame = ByteBufAllocator.DEFAULT.buffer(Frames.PREFIX_BYTES + n);
    try {
      int start = Frames.beginFrame(frame, io.bdrp.transport.FrameType.DELIVER);
      frame.writeBytes(encoded, encoded.readerIndex(), n);
      Frames.endFrame(frame, start);
      for (Host h : matched) {
        if (h == null) {
          continue;
        }
        if (h.channel.isWritable()) {
          h.delivered.inc();
          writeLater(h.channel, frame);
        } else {
          h.dropped.inc();
        }
      }
    } finally {
      frame.release();
    }
    matched.clear();
  }

  /** Stops the router: closes every session and port, and ends its thread. */
  @Override
  public void close() {
    closed = true;
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** For tests: the predicate the router holds for a host id (runs on the router's loop). */
  Predicate hostPredicate(int host) {
    return loop.submit(() -> node.local().predicate(host)).syncUninterruptibly().getNow();
  }

  @Override
  public String toString() {
    return "router " + config.router();
  }
}
