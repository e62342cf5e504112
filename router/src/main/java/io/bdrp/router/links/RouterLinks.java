package io.bdrp.router.links;

import io.bdrp.router.Handshakes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.RouterMain;
import io.bdrp.router.RouterPorts;
import io.bdrp.router.WarnEvery;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.metrics.MetricsAccess;
import io.bdrp.router.security.OriginKeys;
import io.bdrp.router.security.RouterTls;
import io.bdrp.router.security.TlsFiles;
import io.bdrp.transport.AdminEndpoint;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.RouterFrameDecoder;
import io.bdrp.transport.RouterFrameEncoder;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.TransportEndpoint;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
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
public final class RouterLinks {
  private static final Logger log = LoggerFactory.getLogger(RouterLinks.class);
  private static final long REDIAL_MS = 1_000;
  private static final int CONNECT_TIMEOUT_MS = 2_000;

  final RouterCore core;
  final RouterConfig config;
  private final Handshakes handshakes;
  public final Link[] byNumber;
  final WarnEvery futureEpochLog = new WarnEvery(); // the sessions' refusals of future epochs

  final java.util.List<DataTransport> transports;
  private final java.util.function.IntSupplier udpPort;
  private final java.util.function.Supplier<InetSocketAddress> adminListen;
  final java.util.function.Supplier<RouterTls> routerTls;
  final OriginKeys originKeys; // null: claims are neither signed nor verified
  final DataTransport.Receiver receiver;

  /**
   * @param transports the transports of DATA besides TCP, told of every link's session
   * @param udpPort the UDP port this router's hellos announce (0: none)
   * @param adminListen the bound address of the admin API (the metrics port), whose port this
   *     router's hellos tell, or null for none
   * @param routerTls TLS on router links as now loaded (null: none)
   * @param receiver where DATA frames read from a link's TCP session go
   */
  public RouterLinks(
      RouterCore core,
      java.util.List<DataTransport> transports,
      java.util.function.IntSupplier udpPort,
      java.util.function.Supplier<InetSocketAddress> adminListen,
      java.util.function.Supplier<RouterTls> routerTls,
      OriginKeys originKeys,
      DataTransport.Receiver receiver) {
    this.core = core;
    this.transports = transports;
    this.udpPort = udpPort;
    this.adminListen = adminListen;
    this.routerTls = routerTls;
    this.originKeys = originKeys;
    this.receiver = receiver;
    this.config = core.config();
    this.handshakes = new Handshakes("routers", config.limits(), core.metrics());
    this.byNumber = new Link[config.routing().maxRouters()];
  }

  /** Bytes of control frames a link's output buffer may hold: its share of the high water mark. */
  static long controlBudget(RouterLimits limits) {
    return Math.max(1, (long) limits.linkHighWaterBytes() * limits.linkControlPercent() / 100);
  }

  /** Creates the configured links and dials those whose address is known. */
  public void start() {
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
  boolean silent(Link l) {
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
  void detach(Link l) {
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

  void closeSilent(Link l, Channel session) {
    core.metrics().connectionsClosed("routers", "silent").inc();
    log.info(
        "router {}: nothing heard from router {} for {} ms: closing its session{}",
        config.router(),
        l.neighbour(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - l.lastReadNanos),
        l.dialledByUs ? " (redialling)" : "");
    session.close();
  }

  public Link get(int neighbour) {
    return neighbour >= 0 && neighbour < byNumber.length ? byNumber[neighbour] : null;
  }

  /**
   * The hello this router sends on a session to {@code to} (null: not known yet) whose datagram
   * keys come from {@code nonce}, with every transport's endpoint for that link and the port of its
   * admin API ({@link #adminEndpoint}) for a session whose local end is {@code local}.
   */
  RouterHello ownHello(byte[] nonce, Link to, SocketAddress local) {
    RouterHello h =
        new RouterHello(
            config.router(),
            config.epoch(),
            config.routing().maxRouters(),
            config.bloom(),
            udpPort.getAsInt(),
            token(),
            config.udpProtection(),
            nonce);
    java.util.List<TransportEndpoint> endpoints = new java.util.ArrayList<>();
    if (to != null) {
      for (DataTransport t : transports) {
        TransportEndpoint e = t.endpoint(to);
        if (e != null) {
          endpoints.add(e);
        }
      }
    }
    TransportEndpoint admin = adminEndpoint(local);
    if (admin != null) {
      endpoints.add(admin);
    }
    endpoints.add(new TransportEndpoint(RouterHello.ROUTE_DIGESTS, new byte[0]));
    return h.withEndpoints(endpoints);
  }

  /**
   * The admin endpoint of this router's hello on a session whose local end is {@code local}: the
   * port of its admin API and whether it speaks https ({@code listen.metrics}, {@code
   * tls.metrics}), or null without a metrics listener. The neighbour makes the URL from the address
   * it sees this router at, so the port is told only where the admin API listens there too: on
   * every interface (of the session's address family), or on the session's local address; a metrics
   * port on another address (loopback only, a management network) is not told, and a neighbour's
   * {@code neighbours[].admin} names it.
   */
  TransportEndpoint adminEndpoint(SocketAddress local) {
    InetSocketAddress listen = adminListen.get();
    if (listen == null || !(local instanceof InetSocketAddress session)) {
      return null;
    }
    InetAddress at = listen.getAddress();
    InetAddress via = session.getAddress();
    boolean reachable =
        at == null
            || via == null
            || (at.isAnyLocalAddress()
                ? !(at instanceof Inet4Address && via instanceof Inet6Address)
                : at.equals(via));
    if (!reachable) {
      return null;
    }
    MetricsAccess access = config.metricsAccess();
    return new AdminEndpoint(listen.getPort(), access != null && access.tls()).toEndpoint();
  }

  byte[] token() {
    return config.routerTokenBytes();
  }

  public ChannelInitializer<SocketChannel> initializer(Link dialling) {
    RouterLimits limits = config.limits();
    return new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.config()
            .setWriteBufferWaterMark(
                new WriteBufferWaterMark(limits.linkLowWaterBytes(), limits.linkHighWaterBytes()));
        ch.pipeline().addLast(new LinkBytes()); // first: the bytes as the socket carries them
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
            .addLast(new LinkSession(RouterLinks.this, dialling))
            .addLast(new ProtocolErrorHandler(core.errors()));
      }
    };
  }

  /**
   * Dials {@code l} now (if it has no session), and keeps redialling it when the session breaks.
   */
  public void connect(Link l, InetSocketAddress address) {
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

  void redialLater(Link l) {
    core.loop().schedule(() -> redialIfIdle(l), REDIAL_MS, TimeUnit.MILLISECONDS);
  }

  private void redialIfIdle(Link l) {
    if (!core.closed() && l.session == null && l.address != null && get(l.neighbour()) == l) {
      dial(l);
    }
  }

  /** The router numbers the peer's TLS certificate names (none without a certificate). */
  static List<Integer> peerRouterNumbers(ChannelHandlerContext ctx) {
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
}
