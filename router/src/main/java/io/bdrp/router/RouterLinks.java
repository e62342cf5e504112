package io.bdrp.router;

import io.bdrp.routing.ControlMessage;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.DatagramAuth;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.ProtocolException;
import io.bdrp.transport.RouterFrameDecoder;
import io.bdrp.transport.RouterFrameEncoder;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.SessionFrame;
import io.bdrp.transport.UdpProtection;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's TCP sessions with its neighbours: dialling and redialling, the hello exchange with
 * its checks, then control frames to the routing state and DATA frames to the data plane.
 *
 * <p><b>Hello.</b> Each side sends a {@link RouterHello} as soon as the session opens. A hello is
 * refused with {@code INCOMPATIBLE_PEER} when a network-wide parameter differs ({@link
 * RouterHello#incompatibility}; a WARN line and {@code bdrp_link_refused_total{parameter}}), and
 * with {@code NOT_AUTHORIZED} when the sender is not a configured neighbour or its token is wrong.
 * An ERROR frame from a neighbour is logged at WARN and counted in {@code
 * bdrp_link_errors_received_total{code}}. If both sides dial, the session dialled by the
 * lower-numbered router is kept. A session that breaks is redialled after a second by the side that
 * dialled it.
 *
 * <p>A DATA frame whose header is malformed is counted and dropped; the session goes on, since its
 * framing is intact.
 *
 * <p>Owned by the router's event loop.
 */
final class RouterLinks {
  private static final Logger log = LoggerFactory.getLogger(RouterLinks.class);
  private static final long REDIAL_MS = 1_000;
  private static final int CONNECT_TIMEOUT_MS = 2_000;

  private final RouterCore core;
  private final RouterConfig config;
  private final Handshakes handshakes;
  final Link[] byNumber;
  private long futureEpochsLogged;
  private long futureEpochsLoggedAt = Long.MIN_VALUE;

  private final java.util.List<DataTransport> transports;
  private final java.util.function.IntSupplier udpPort;
  private final java.util.function.Supplier<RouterTls> routerTls;
  private final OriginKeys originKeys; // null: claims are neither signed nor verified
  private final DataTransport.Receiver receiver;

  /**
   * @param transports the transports of DATA besides TCP, told of every link's session
   * @param udpPort the UDP port this router's hellos announce (0: none)
   * @param routerTls TLS on router links as now loaded (null: none)
   * @param receiver where DATA frames read from a link's TCP session go
   */
  RouterLinks(
      RouterCore core,
      java.util.List<DataTransport> transports,
      java.util.function.IntSupplier udpPort,
      java.util.function.Supplier<RouterTls> routerTls,
      OriginKeys originKeys,
      DataTransport.Receiver receiver) {
    this.core = core;
    this.transports = transports;
    this.udpPort = udpPort;
    this.routerTls = routerTls;
    this.originKeys = originKeys;
    this.receiver = receiver;
    this.config = core.config();
    this.handshakes = new Handshakes("routers", config.limits(), core.metrics());
    this.byNumber = new Link[config.routing().maxRouters()];
  }

  /** Bytes of control frames a link's output buffer may hold: its share of the high water mark. */
  static long controlBudget(RouterConfig.Limits limits) {
    return Math.max(1, (long) limits.linkHighWaterBytes() * limits.linkControlPercent() / 100);
  }

  /** Creates the configured links and dials those whose address is known. */
  void start() {
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l =
          new Link(
              n,
              core.metrics(),
              controlBudget(config.limits()),
              config.limits().linkHighWaterBytes(),
              core.linkControl());
      byNumber[n.router()] = l;
      core.node().addLink(l, n.cost());
      if (n.address() != null) {
        dial(l);
      }
    }
    long every = config.routing().helloIntervalMs();
    core.loop().scheduleWithFixedDelay(this::closeSilent, every, every, TimeUnit.MILLISECONDS);
  }

  /**
   * Whether nothing has arrived on {@code l}'s session for a dead interval. A live neighbour sends
   * a hello every hello interval, so its session is never silent that long; a silent one is broken
   * somewhere TCP has not noticed (a link that drops everything, a crashed host), and may stay so
   * for many minutes of retransmissions.
   */
  private boolean silent(Link l) {
    return System.nanoTime() - l.lastReadNanos
        > TimeUnit.MILLISECONDS.toNanos(config.routing().deadIntervalMs());
  }

  /**
   * Closes the sessions that are silent, so that they are redialled rather than waited for, and
   * those whose neighbour does not read its control frames (slow consumers).
   */
  private void closeSilent() {
    long now = System.nanoTime();
    long slow = TimeUnit.MILLISECONDS.toNanos(config.limits().slowConsumerMs());
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l = byNumber[n.router()];
      if (l != null && l.session != null && l.session.isActive()) {
        if (silent(l)) {
          closeSilent(l, l.session); // its close listener detaches it and redials
        } else {
          l.stalled(now, slow); // a neighbour that does not read its control frames is cut
        }
      }
    }
  }

  /**
   * The link has no session any more: the transports of DATA and the routing state are told. The
   * caller closes the session's channel, whose close listener then finds it detached already.
   */
  private void detach(Link l) {
    l.attach(null);
    for (DataTransport t : transports) {
      t.linkDown(l);
    }
    l.path = null;
    core.node().linkDown(l.neighbour());
  }

  /** A WARN when dialling a neighbour first fails, again once a minute while it goes on failing. */
  private static final long UNREACHABLE_REPORT_NANOS = TimeUnit.SECONDS.toNanos(60);

  private void unreachable(Link l, Throwable cause) {
    long now = System.nanoTime();
    if (l.unreachableSince == 0) {
      l.unreachableSince = now;
      l.unreachableReported = now;
      log.warn(
          "router {}: cannot reach router {} at {}: {}; redialling every second",
          config.router(),
          l.neighbour(),
          RouterMain.format(l.address),
          cause.getMessage());
    } else if (now - l.unreachableReported >= UNREACHABLE_REPORT_NANOS) {
      l.unreachableReported = now;
      log.warn(
          "router {}: still cannot reach router {} at {} after {} s: {}",
          config.router(),
          l.neighbour(),
          RouterMain.format(l.address),
          TimeUnit.NANOSECONDS.toSeconds(now - l.unreachableSince),
          cause.getMessage());
    } else {
      log.debug(
          "router {}: cannot reach router {}: {}",
          config.router(),
          l.neighbour(),
          cause.getMessage());
    }
  }

  private void closeSilent(Link l, Channel session) {
    core.metrics().connectionsClosed("routers", "silent").inc();
    log.info(
        "router {}: nothing heard from router {} for {} ms: closing its session{}",
        config.router(),
        l.neighbour(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - l.lastReadNanos),
        l.dialledByUs ? " (redialling)" : "");
    session.close();
  }

  Link get(int neighbour) {
    return neighbour >= 0 && neighbour < byNumber.length ? byNumber[neighbour] : null;
  }

  /** The hello this router sends on a session whose datagram keys come from {@code nonce}. */
  private RouterHello ownHello(byte[] nonce) {
    return new RouterHello(
        config.router(),
        config.epoch(),
        config.routing().maxRouters(),
        config.bloom(),
        udpPort.getAsInt(),
        token(),
        config.udpProtection(),
        nonce);
  }

  private byte[] token() {
    return config.routerTokenBytes();
  }

  ChannelInitializer<SocketChannel> initializer(Link dialling) {
    RouterConfig.Limits limits = config.limits();
    return new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.config()
            .setWriteBufferWaterMark(
                new WriteBufferWaterMark(limits.linkLowWaterBytes(), limits.linkHighWaterBytes()));
        RouterTls tls = routerTls.get();
        if (tls != null) {
          ch.pipeline()
              .addLast(
                  dialling == null
                      ? tls.server().newHandler(ch.alloc())
                      : tls.client().newHandler(ch.alloc()))
              .addLast(new TlsOutcome());
        }
        ch.pipeline()
            .addLast(handshakes.guard(dialling == null))
            .addLast(handshakes.frameDecoder())
            .addLast(
                new ControlOffload(
                    core.linkControl(),
                    limits.maxFrameBytes(),
                    config.bloom(),
                    limits.linkHighWaterBytes()))
            .addLast(new RouterFrameDecoder(limits.maxFrameBytes(), config.bloom()))
            .addLast(new RouterFrameEncoder())
            .addLast(new Session(dialling))
            .addLast(new ProtocolErrorHandler(core.errors()));
      }
    };
  }

  /**
   * Dials {@code l} now (if it has no session), and keeps redialling it when the session breaks.
   */
  void connect(Link l, InetSocketAddress address) {
    l.address = address;
    if (l.session == null) {
      dial(l);
    }
  }

  private void dial(Link l) {
    if (core.closed()) {
      return;
    }
    new Bootstrap()
        .group(core.loop())
        .channel(core.socketChannel())
        .option(ChannelOption.TCP_NODELAY, true)
        // Short: a dial that waits behind a dead link is given up and redialled a second later,
        // so a link that carries again is found within a few seconds, as a dead one is.
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MS)
        .handler(core.tracked(initializer(l)))
        .connect(RouterPorts.resolve(l.address))
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                unreachable(l, f.cause());
                redialLater(l);
              }
            });
  }

  private void redialLater(Link l) {
    core.loop().schedule(() -> redialIfIdle(l), REDIAL_MS, TimeUnit.MILLISECONDS);
  }

  private void redialIfIdle(Link l) {
    if (!core.closed() && l.session == null && l.address != null && get(l.neighbour()) == l) {
      dial(l);
    }
  }

  /** The router numbers the peer's TLS certificate names (none without a certificate). */
  private static List<Integer> peerRouterNumbers(ChannelHandlerContext ctx) {
    X509Certificate peer = TlsFiles.peer(ctx);
    return peer == null ? List.of() : RouterTls.routerNumbers(peer);
  }

  /** Counts and logs a TLS handshake that failed (wrong CA, no certificate, expired, ...). */
  private final class TlsOutcome extends ChannelInboundHandlerAdapter {
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof SslHandshakeCompletionEvent e && !e.isSuccess()) {
        core.metrics().linkRefused("tls").inc();
        log.warn(
            "router {}: TLS handshake with {} failed: {}",
            config.router(),
            ctx.channel().remoteAddress(),
            e.cause().getMessage());
      }
      super.userEventTriggered(ctx, evt);
    }
  }

  /** One router session: hello exchange, then control and DATA frames. */
  private final class Session extends SimpleChannelInboundHandler<Object> {
    private final Link dialling; // the link this session dials, or null if accepted
    private Link link; // after a valid hello
    // This session's hello nonce, from which its datagram keys are derived.
    private final byte[] nonce =
        config.udpProtection() == UdpProtection.NONE ? new byte[0] : DatagramAuth.newNonce();

    Session(Link dialling) {
      super(Object.class, false);
      this.dialling = dialling;
    }

    /** Whatever a read brought from the neighbour shows it alive: once per read, not per frame. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (link != null) {
        link.lastReadNanos = System.nanoTime();
        core.node().heard(link.neighbour());
      }
      ctx.fireChannelReadComplete();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.writeAndFlush(ownHello(nonce));
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof ClientFrame.Error e) {
          errorFromPeer(ctx, e);
        } else if (link == null) {
          if (!(msg instanceof RouterHello h)) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION,
                "the first frame of a router session must be ROUTER_HELLO");
          }
          hello(ctx, h);
        } else if (msg instanceof ByteBuf frame) {
          receiver.receive(link, frame, "tcp");
        } else if (msg instanceof ControlMessage m) {
          if (m.sender() != link.neighbour()) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION,
                "control message names sender "
                    + m.sender()
                    + " on the link to "
                    + link.neighbour());
          }
          link.controlIn.inc();
          if (log.isDebugEnabled()) {
            log.debug("router {}: from router {}: {}", config.router(), link.neighbour(), m);
          }
          OriginKeys keys = originKeys;
          if (keys != null && (deferred > 0 || OriginKeys.carriesClaims(m))) {
            prepareThenApply(ctx, keys, m);
          } else {
            apply(m);
          }
        } else if (msg instanceof SessionFrame s) {
          if (s instanceof ClientFrame.Ping p) {
            // A reply is not queued above the link's high water mark: a neighbour that sends
            // PINGs and does not read cannot make PONGs pile up.
            if (ctx.channel().isWritable()) {
              ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
            }
          } else if (s instanceof ClientFrame.Bye) {
            ctx.close();
          }
        } else {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, "unexpected frame " + msg.getClass().getSimpleName());
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    /** Control messages of this link handed to the control thread and not yet applied. */
    private int deferred;

    /**
     * Most control messages of one link waiting for the control thread: at this many the link is
     * not read until they are down to {@link #RESUME_DEFERRED}, so that a neighbour cannot queue
     * without bound behind a busy control thread (each message is at most one frame).
     */
    static final int MAX_DEFERRED = 64;

    static final int RESUME_DEFERRED = 16;

    private void apply(ControlMessage m) {
      if (!core.node().receive(m)) {
        futureEpoch(m);
      }
      core.rearm();
    }

    /**
     * Verifies the claims of {@code m} on the control thread, then applies it on the loop:
     * signature checks of a large flood stay off the loop. Every control message of the link that
     * comes while one is away takes the same way, so the link's messages are applied in the order
     * they came.
     */
    private void prepareThenApply(ChannelHandlerContext ctx, OriginKeys keys, ControlMessage m) {
      if (++deferred == MAX_DEFERRED) {
        ctx.channel().config().setAutoRead(false);
      }
      try {
        core.linkControl()
            .execute(
                () -> {
                  try {
                    keys.prepare(m);
                  } catch (RuntimeException e) {
                    log.warn("router {}: checking claims failed", config.router(), e);
                  }
                  try {
                    ctx.executor()
                        .execute(
                            () -> {
                              if (deferred-- == RESUME_DEFERRED + 1
                                  && !ctx.channel().config().isAutoRead()) {
                                ctx.channel().config().setAutoRead(true);
                              }
                              if (ctx.channel().isActive()) {
                                apply(m);
                              }
                            });
                  } catch (java.util.concurrent.RejectedExecutionException closed) {
                    // The router is stopping: nothing is applied any more.
                  }
                });
      } catch (java.util.concurrent.RejectedExecutionException closed) {
        deferred--; // the router is stopping
      }
    }

    /** A control message refused for its epoch: a WARN line at most every ten seconds. */
    private void futureEpoch(ControlMessage m) {
      long now = System.nanoTime();
      long refused = core.node().futureEpochs();
      if (now - futureEpochsLoggedAt >= TimeUnit.SECONDS.toNanos(10)
          || futureEpochsLoggedAt == Long.MIN_VALUE) {
        log.warn(
            "router {}: refused {} from router {}: it names an epoch more than"
                + " routing.maxEpochAheadMs ({} ms) ahead of this clock ({} such messages since the"
                + " last report)",
            config.router(),
            m,
            link.neighbour(),
            config.routing().maxEpochAheadMs(),
            refused - futureEpochsLogged);
        futureEpochsLogged = refused;
        futureEpochsLoggedAt = now;
      }
    }

    private void errorFromPeer(ChannelHandlerContext ctx, ClientFrame.Error e) {
      String code =
          e.knownCode()
              .map(c -> c.name().toLowerCase(java.util.Locale.ROOT))
              .orElse(Integer.toString(e.code()));
      core.metrics().linkErrorReceived(code).inc();
      log.warn(
          "router {}: neighbour {} at {} reports {}: {}",
          config.router(),
          link != null ? link.neighbour() : dialling != null ? dialling.neighbour() : "(unknown)",
          ctx.channel().remoteAddress(),
          code,
          e.message());
      if (link == null) {
        ctx.close(); // refused before the hello was accepted: nothing else can follow
      }
    }

    private void hello(ChannelHandlerContext ctx, RouterHello h) {
      RouterHello.Incompatibility why = ownHello(nonce).incompatibility(h);
      if (why != null) {
        core.metrics().linkRefused(why.parameter()).inc();
        log.warn(
            "router {}: refusing router {} at {}: {}",
            config.router(),
            h.routerNumber(),
            ctx.channel().remoteAddress(),
            why.reason());
        throw new ProtocolException(ErrorCode.INCOMPATIBLE_PEER, why.reason());
      }
      Link l = get(h.routerNumber());
      if (l == null) {
        core.metrics().linkRefused("neighbour").inc();
        log.warn(
            "router {}: refusing router {} at {}: not a configured neighbour",
            config.router(),
            h.routerNumber(),
            ctx.channel().remoteAddress());
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
      if (config.routerTls() != null) {
        List<Integer> named = peerRouterNumbers(ctx);
        if (!named.contains(h.routerNumber())) {
          core.metrics().linkRefused("certificate").inc();
          log.warn(
              "router {}: refusing router {} at {}: its certificate names {}",
              config.router(),
              h.routerNumber(),
              ctx.channel().remoteAddress(),
              named.isEmpty() ? "no router" : "router " + named);
          throw new ProtocolException(
              ErrorCode.NOT_AUTHORIZED,
              "the certificate names "
                  + (named.isEmpty() ? "no router" : "router " + named)
                  + ", the hello router "
                  + h.routerNumber());
        }
      }
      if (!MessageDigest.isEqual(token(), h.authToken())) {
        core.metrics().linkRefused("token").inc();
        log.warn(
            "router {}: refusing router {} at {}: wrong router token",
            config.router(),
            h.routerNumber(),
            ctx.channel().remoteAddress());
        throw new ProtocolException(ErrorCode.NOT_AUTHORIZED, "wrong router token");
      }
      boolean ours = dialling != null;
      if (l.session != null && l.session.isActive() && silent(l)) {
        // Nothing heard on the live session for a dead interval: it is dead, whatever TCP says.
        Channel old = l.session;
        detach(l);
        closeSilent(l, old);
      }
      if (l.session != null && l.session.isActive() && h.epoch() != l.peerEpoch) {
        // Another process claims the number of a neighbour that has a live session here (a
        // restarted router whose old session is not yet known dead, or a misconfigured twin): the
        // live session stays; once it ends, a redial gets in.
        core.metrics().linkRefused("duplicate").inc();
        log.warn(
            "router {}: refusing router {} at {} (epoch {}): router {} is connected from {} (epoch"
                + " {})",
            config.router(),
            h.routerNumber(),
            ctx.channel().remoteAddress(),
            h.epoch(),
            l.neighbour(),
            l.session.remoteAddress(),
            l.peerEpoch);
        throw new ProtocolException(
            ErrorCode.DUPLICATE_ROUTER,
            "router " + h.routerNumber() + " is already connected from another process");
      }
      if (l.session != null && l.session.isActive()) {
        // Both sides dialled: keep the session dialled by the lower-numbered core.
        int keepDialler = Math.min(config.router(), l.neighbour());
        boolean newIsKeeper = (ours ? config.router() : l.neighbour()) == keepDialler;
        if (!newIsKeeper) {
          ctx.close();
          return;
        }
        Channel old = l.session;
        detach(l);
        old.close();
      }
      link = l;
      l.attach(ctx.channel());
      l.lastReadNanos = System.nanoTime();
      l.peerEpoch = h.epoch();
      l.dialledByUs = ours;
      Handshakes.done(ctx);
      DataTransport.Peer peer =
          new DataTransport.Peer((InetSocketAddress) ctx.channel().remoteAddress(), h, nonce);
      for (DataTransport t : transports) {
        DataPath p = t.linkUp(l, peer);
        if (p != null) {
          l.path = p;
        }
      }
      ctx.channel()
          .closeFuture()
          .addListener(
              f -> {
                if (l.session == ctx.channel()) {
                  if (!core.closed()) { // not every link of a router that stops
                    log.info("router {}: link to router {} down", config.router(), l.neighbour());
                  }
                  detach(l);
                  core.rearm();
                  if (l.dialledByUs) {
                    redialLater(l);
                  }
                }
              });
      if (l.unreachableSince != 0) {
        log.info(
            "router {}: reached router {} after {} s",
            config.router(),
            l.neighbour(),
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - l.unreachableSince));
        l.unreachableSince = 0;
      }
      log.info(
          "router {}: link to router {} up ({}, DATA over {})",
          config.router(),
          l.neighbour(),
          ours ? "dialled" : "accepted",
          l.path != null ? l.path.describe() : "TCP");
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (dialling != null && link == null) {
        redialLater(dialling);
      }
      ctx.fireChannelInactive();
    }
  }
}
