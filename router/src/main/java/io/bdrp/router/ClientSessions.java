package io.bdrp.router;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.PredicateTable;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ClientFrameDecoder;
import io.bdrp.transport.ClientFrameEncoder;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's client sessions: the HELLO, SET_PREDICATE and SEND of each host, and the table of
 * hosts that deliveries go to. A SEND is published through the data plane with the message's bytes
 * as the host wrote them, never re-encoded.
 *
 * <p>Owned by the router's event loop.
 */
final class ClientSessions {
  private static final Logger log = LoggerFactory.getLogger(ClientSessions.class);

  /** A client session: a host that gets its deliveries as DELIVER frames. */
  static final class Host implements Hosts.Output {
    final int id;
    final Channel channel;
    final String name;
    final Metrics.Counter delivered;
    final Metrics.Counter dropped;
    final ClientAuth.Permissions permissions;

    /** The user whose sessions and filters are counted together, or null (anonymous). */
    final String user;

    /** Filters of the predicate now set, as counted against the limits (on the control thread). */
    long filters;

    /** Predicate changes the session may still make now (a token bucket). */
    double changeTokens;

    long changeTokensAt;

    private final OutputBatches batches;

    Host(
        int id,
        Channel channel,
        String name,
        ClientAuth.Permissions permissions,
        RouterMetrics metrics,
        OutputBatches batches) {
      this.id = id;
      this.batches = batches;
      this.channel = channel;
      this.name = name;
      this.permissions = permissions;
      this.user = userOf(permissions);
      this.delivered = metrics.hostDelivered(id, name);
      this.dropped = metrics.hostDropped(id, name);
    }

    @Override
    public boolean deliver(long messageId, MessageBytes message) {
      if (!channel.isActive() || !channel.isWritable()) {
        dropped.inc();
        return false;
      }
      ByteBuf b = batches.room(channel, Frames.PREFIX_BYTES, message);
      Frames.writePrefix(b, FrameType.DELIVER, message.length);
      batches.body(channel, b, message);
      delivered.inc();
      return true;
    }

    @Override
    public String toString() {
      return "client " + id + " (" + name + ") at " + channel.remoteAddress();
    }
  }

  private static final int SEND_MESSAGE_OFFSET = Frames.PREFIX_BYTES + 8; // after correlation id

  /** The most one read of a client session takes from its socket. */
  static final int CLIENT_READ_BYTES = 16 * 1024;

  private final Router router;
  private final Hosts hosts;
  private final OutputBatches batches;

  /** Sessions of each named user (on the loop). */
  private final java.util.Map<String, long[]> users = new java.util.HashMap<>();

  // On the control thread: the router's aggregate over its hosts' encodings, and the filters of
  // each named user's sessions together. Every change to either is made there, in the order the
  // loop handed them over, and the loop advertises the aggregate that comes back.
  private final io.bdrp.routing.LocalAggregate aggregate;
  private final java.util.Map<String, Long> userFilters = new java.util.HashMap<>();
  private final boolean signed; // routers sign their advertisements (a larger frame)

  private final Encoder encoder;

  /** The SEND frame being handled: its message bytes, exposed while it is decoded and published. */
  private final MessageBytes sendBytes = new MessageBytes();

  private final Handshakes handshakes;
  private final Metrics.Counter slowConsumers;
  private final Metrics.Counter refused;
  private final Metrics.Counter forbidden;

  ClientSessions(Router router, RouterMetrics metrics, Hosts hosts, OutputBatches batches) {
    this.router = router;
    this.hosts = hosts;
    this.batches = batches;
    this.handshakes = new Handshakes("clients", router.config().limits(), metrics);
    this.slowConsumers = metrics.connectionsClosed("clients", "slow_consumer");
    this.refused = metrics.connectionsClosed("clients", "not_authorized");
    this.forbidden = metrics.sendsRefused("publish_permission");
    this.keptAlive = metrics.connectionsClosed("clients", "keepalive");
    this.refusedRate = metrics.requestsRefused("predicate_rate");
    this.refusedHostFilters = metrics.requestsRefused("host_filters");
    this.refusedUserFilters = metrics.requestsRefused("user_filters");
    this.refusedAggregate = metrics.requestsRefused("router_aggregate");
    this.refusedBusy = metrics.requestsRefused("control_busy");
    this.refusedSessions = metrics.requestsRefused("user_sessions");
    this.encoder = new Encoder(router.config().bloom());
    this.aggregate = new io.bdrp.routing.LocalAggregate(router.config().bloom());
    this.signed = router.originKeys() != null;
  }

  private final Metrics.Counter keptAlive;
  private final Metrics.Counter refusedRate;
  private final Metrics.Counter refusedHostFilters;
  private final Metrics.Counter refusedUserFilters;
  private final Metrics.Counter refusedAggregate;
  private final Metrics.Counter refusedBusy;
  private final Metrics.Counter refusedSessions;

  /** The user whose sessions and filters are counted together, or null for an open router's. */
  private static String userOf(ClientAuth.Permissions permissions) {
    return permissions == ClientAuth.Permissions.ALL ? null : permissions.user();
  }

  // ---- SET_PREDICATE, prepared off the loop ----
  //
  // A SET_PREDICATE costs in proportion to its predicate: decoding it, bounding it by the user's
  // permission, counting and encoding its filters. That work runs on the router's control thread,
  // so that no predicate holds up forwarding; the loop keeps the cheap checks (the rate, the bytes
  // waiting for the control thread) before, and the tables it owns after: the user's filter count,
  // LOCAL-PREDICATES and PREDICATES, and the reply.

  /** Most frames waiting for the control thread at once, and their bytes together. */
  static final int MAX_PREPARING = 256;

  private long preparingBytes; // on the loop
  private int preparing;

  /**
   * A SET_PREDICATE made ready on the control thread: the predicate, and the router's aggregate
   * with it when that changed (else null); or the error to send.
   */
  private record Prepared(
      ClientFrame.SetPredicate frame,
      Predicate allowed,
      EncodedPredicate aggregate,
      ProtocolException error) {}

  /**
   * The rate check, on the loop: a session may change its predicate {@link
   * RouterConfig.HostLimits#predicateChangesPerSecond()} times a second (a token bucket).
   */
  private void checkRate(Host host, long correlationId) {
    RouterConfig.HostLimits l = router.config().limits().hosts();
    long now = System.nanoTime();
    double rate = l.predicateChangesPerSecond();
    host.changeTokens =
        Math.min(rate, host.changeTokens + (now - host.changeTokensAt) * rate / 1e9);
    host.changeTokensAt = now;
    if (host.changeTokens < 1) {
      throw refusal(
          refusedRate,
          ErrorCode.OVERLOADED,
          "more than "
              + l.predicateChangesPerSecond()
              + " predicate changes per second (limits.predicateChangesPerSecond); try again later",
          correlationId);
    }
    host.changeTokens -= 1;
  }

  /**
   * On the control thread: decodes a SET_PREDICATE frame (released here), bounds its predicate by
   * the host's permission and {@link RouterConfig.HostLimits#maxFiltersPerHost()}, encodes it and
   * works it into the router's aggregate ({@link #take}). Touches nothing of the loop's: the host's
   * permissions are immutable, the encoder, the aggregate and the users' filters are this thread's.
   */
  private Prepared prepare(Host host, ByteBuf frame, long correlationId) {
    ClientFrame.SetPredicate s = null;
    try {
      ClientFrame f = ClientFrameCodec.decode(frame, router.config().limits().maxFrameBytes());
      if (!(f instanceof ClientFrame.SetPredicate sp)) {
        throw new ProtocolException(ErrorCode.INTERNAL, "not a SET_PREDICATE");
      }
      s = sp;
      Predicate allowed;
      try {
        allowed = host.permissions.restrict(s.predicate());
      } catch (IllegalArgumentException e) {
        throw new ProtocolException(
            ErrorCode.BAD_PREDICATE,
            "the predicate within user "
                + host.permissions.user()
                + "'s subscribe permission is too large: "
                + e.getMessage(),
            correlationId,
            0);
      }
      int max = router.config().limits().hosts().maxFiltersPerHost();
      long filters = encoder.filterCount(allowed, max);
      if (filters > max) {
        throw refusal(
            refusedHostFilters,
            ErrorCode.BAD_PREDICATE,
            "the predicate encodes to more than "
                + max
                + " Bloom filters (limits.maxFiltersPerHost); an exists without a type counts one"
                + " per type",
            correlationId);
      }
      EncodedPredicate encoded = allowed.equals(Predicate.NONE) ? null : encoder.encode(allowed);
      return new Prepared(s, allowed, take(host, filters, encoded, correlationId), null);
    } catch (ProtocolException e) {
      return new Prepared(s, null, null, e);
    } catch (RuntimeException e) {
      log.warn("router {}: preparing a predicate failed", router.config().router(), e);
      return new Prepared(
          s, null, null, new ProtocolException(ErrorCode.INTERNAL, "internal error"));
    } finally {
      frame.release();
    }
  }

  /**
   * On the control thread: the host's filters and encoding taken into its user's count and the
   * router's aggregate, unless the user's sessions would then hold more than {@link
   * RouterConfig.HostLimits#maxFiltersPerUser()} filters, or the aggregate would break a bound of
   * the routing module (its filters or bytes, or one advertisement frame): then the host keeps the
   * predicate it had, and the refusal is thrown. Returns the new aggregate, or null if it did not
   * change.
   */
  private EncodedPredicate take(Host host, long filters, EncodedPredicate encoded, long cid) {
    RouterConfig.HostLimits l = router.config().limits().hosts();
    long userHeld = host.user == null ? 0 : userFilters.getOrDefault(host.user, 0L);
    if (host.user != null && userHeld - host.filters + filters > l.maxFiltersPerUser()) {
      throw refusal(
          refusedUserFilters,
          ErrorCode.BAD_PREDICATE,
          "user "
              + host.user
              + "'s sessions would hold "
              + (userHeld - host.filters + filters)
              + " Bloom filters, more than limits.maxFiltersPerUser ("
              + l.maxFiltersPerUser()
              + ")",
          cid);
    }
    EncodedPredicate previous = aggregate.encoding(host.id);
    EncodedPredicate next = null;
    if (aggregate.set(host.id, encoded)) {
      next = aggregate.aggregate();
      PredicateTable.Refusal r =
          encoded == null
              ? null // a removal goes whatever it exposes: the advertised aggregate then stays
              : PredicateTable.aggregateRefusal(
                  router.config().router(), router.config().routing(), signed, next);
      if (r != null) {
        aggregate.set(host.id, previous);
        throw refusal(
            refusedAggregate,
            ErrorCode.BAD_PREDICATE,
            "this router's aggregate predicate, which every router holds, would break a bound: "
                + r.message(),
            cid);
      }
    }
    if (host.user != null) {
      userFilters.put(host.user, userHeld - host.filters + filters);
    }
    host.filters = filters;
    return next;
  }

  /**
   * On the control thread: a host that is gone leaves its user's count and the router's aggregate;
   * the loop advertises the aggregate without it.
   */
  private void leave(Host host) {
    if (host.user != null) {
      long left = userFilters.getOrDefault(host.user, 0L) - host.filters;
      if (left <= 0) {
        userFilters.remove(host.user);
      } else {
        userFilters.put(host.user, left);
      }
    }
    host.filters = 0;
    if (aggregate.remove(host.id)) {
      EncodedPredicate a = aggregate.aggregate();
      router
          .loop()
          .execute(
              () -> {
                router.node().setAggregate(a);
                router.rearm();
              });
    }
  }

  /**
   * On the loop: sets a prepared predicate: the host is matched with it at once, and the router
   * advertises the aggregate made with it. Answers OK or the ERROR.
   */
  private void apply(ChannelHandlerContext ctx, Host host, Prepared p) {
    if (p.error != null) {
      ctx.fireExceptionCaught(p.error);
      return;
    }
    long cid = p.frame.correlationId();
    router.node().setHostMatch(host.id, p.allowed);
    if (p.aggregate != null) {
      router.node().setAggregate(p.aggregate); // within the bounds: checked where it was made
    }
    router.metrics().predicateChanges.inc();
    if (log.isDebugEnabled()) {
      log.debug(
          "router {}: client {} ({}) set its predicate to {}{}",
          router.config().router(),
          host.id,
          host.name,
          p.allowed,
          p.allowed.equals(p.frame.predicate())
              ? ""
              : " (" + p.frame.predicate() + " within its permission)");
    }
    // From the channel, not this handler's context: the encoder sits after the handler.
    ctx.channel().writeAndFlush(new ClientFrame.Ok(cid));
    router.rearm();
  }

  private ProtocolException refusal(
      Metrics.Counter counted, ErrorCode code, String message, long correlationId) {
    counted.inc();
    return new ProtocolException(code, message, correlationId, 0);
  }

  /**
   * Sits before the client frame decoder and hands a session's SET_PREDICATE frames to the control
   * thread ({@link #prepare}); their result comes back to the loop ({@link #apply}) in the order
   * they were sent. Frames before the HELLO go on to the session handler, which refuses them.
   */
  private final class PredicateOffload extends ChannelInboundHandlerAdapter {
    private final ClientHandler session;

    PredicateOffload(ClientHandler session) {
      this.session = session;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Host host = session.host;
      if (host == null
          || !(msg instanceof ByteBuf f)
          || f.readableBytes() < Frames.PREFIX_BYTES + 8
          || f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET)
              != FrameType.SET_PREDICATE.number()) {
        ctx.fireChannelRead(msg);
        return;
      }
      long cid = f.getLong(f.readerIndex() + Frames.PREFIX_BYTES);
      int bytes = f.readableBytes();
      long maxBytes = Math.max(16L << 20, 2L * router.config().limits().maxFrameBytes());
      try {
        checkRate(host, cid);
        if (preparing >= MAX_PREPARING || preparingBytes + bytes > maxBytes) {
          throw refusal(
              refusedBusy,
              ErrorCode.OVERLOADED,
              "the router's control thread has "
                  + preparing
                  + " predicates to prepare; try again later",
              cid);
        }
      } catch (ProtocolException e) {
        f.release();
        ctx.fireExceptionCaught(e);
        return;
      }
      preparing++;
      preparingBytes += bytes;
      try {
        router
            .control()
            .execute(
                () -> {
                  Prepared p = prepare(host, f, cid);
                  try {
                    ctx.executor()
                        .execute(
                            () -> {
                              preparing--;
                              preparingBytes -= bytes;
                              if (ctx.channel().isActive() && session.host == host) {
                                apply(ctx, host, p);
                              }
                            });
                  } catch (java.util.concurrent.RejectedExecutionException closed) {
                    // The router has stopped: no one is left to answer.
                  }
                });
      } catch (java.util.concurrent.RejectedExecutionException closing) {
        preparing--;
        preparingBytes -= bytes;
        f.release(); // the router is closing
      }
    }
  }

  /** Connections in their HELLO now. */
  int handshakesPending() {
    return handshakes.pending();
  }

  ChannelInitializer<SocketChannel> initializer() {
    RouterConfig.Limits limits = router.config().limits();
    return new ChannelInitializer<SocketChannel>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ClientHandler session = new ClientHandler();
        // One read of a session per turn of the loop, not Netty's 16, of at most 16 KiB: a
        // client that floods requests (a thousand PINGs in 16 KiB) then holds the loop for one
        // read's worth of work before every other session gets its turn.
        ch.config()
            .setRecvByteBufAllocator(
                new AdaptiveRecvByteBufAllocator(64, 2048, CLIENT_READ_BYTES)
                    .maxMessagesPerRead(1));
        ch.config()
            .setWriteBufferWaterMark(
                new WriteBufferWaterMark(limits.hostLowWaterBytes(), limits.hostHighWaterBytes()));
        ClientTls tls = router.clientTls();
        if (tls != null) {
          ch.pipeline().addLast(tls.context().newHandler(ch.alloc()));
        }
        ch.pipeline()
            // Replies to a read's requests (a burst of PINGs, of acknowledged SENDs) leave in
            // one flush at the end of the read, not one system call each.
            .addLast(new FlushConsolidationHandler(256, false))
            .addLast(
                new IdleStateHandler(limits.hosts().keepAliveMs(), 0, 0, TimeUnit.MILLISECONDS))
            .addLast(handshakes.guard(true))
            .addLast(handshakes.frameDecoder())
            .addLast(new SendBytes())
            .addLast(new PredicateOffload(session))
            .addLast(new ClientFrameDecoder(limits.maxFrameBytes()))
            .addLast(new ClientFrameEncoder())
            .addLast(session)
            .addLast(new ProtocolErrorHandler(router.errors()));
      }
    };
  }

  /** Sits before the client frame decoder and exposes a SEND frame's message bytes meanwhile. */
  private final class SendBytes extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf f
          && f.readableBytes() > SEND_MESSAGE_OFFSET
          && f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET) == FrameType.SEND.number()) {
        // Held: the decoder releases the frame before it passes the decoded SEND on.
        f.retain();
        sendBytes.set(
            f, f.readerIndex() + SEND_MESSAGE_OFFSET, f.readableBytes() - SEND_MESSAGE_OFFSET);
        try {
          ctx.fireChannelRead(msg); // decoded and published before this returns
        } finally {
          sendBytes.set(null, 0, 0);
          f.release();
        }
      } else {
        ctx.fireChannelRead(msg);
      }
    }
  }

  /** The user a verified client certificate names ({@code urn:bdrp:user:NAME}), or null. */
  private static String certificateUser(ChannelHandlerContext ctx) {
    java.security.cert.X509Certificate peer = TlsFiles.peer(ctx);
    java.util.List<String> users =
        peer == null ? java.util.List.of() : TlsFiles.uris(peer, ClientAuth.USER_URN);
    return users.isEmpty() ? null : users.get(0);
  }

  /**
   * One client session.
   *
   * <p><b>Output.</b> Every frame to the client — deliveries and replies alike (HELLO_OK, OK, PONG,
   * ERROR) — counts against the session's water marks. Deliveries to a session above its high water
   * mark are dropped and counted; while it is above it, the session's input is not read, so a
   * client that sends requests and never reads the replies cannot make them pile up: its own socket
   * buffers fill and its writes block. A session that stays above its high water mark for {@link
   * RouterConfig.Limits#slowConsumerMs()} is disconnected as a slow consumer (WARN, {@code
   * bdrp_connections_closed_total{port="clients",reason="slow_consumer"}}).
   */
  private final class ClientHandler extends SimpleChannelInboundHandler<ClientFrame> {
    private Host host;
    private ScheduledFuture<?> slowCheck;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
      RouterConfig config = router.config();
      if (host == null) {
        if (!(f instanceof ClientFrame.Hello h)) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_VIOLATION, "the first frame of a client session must be HELLO");
        }
        if (hosts.size() >= config.limits().maxClients()) {
          throw new ProtocolException(
              ErrorCode.OVERLOADED,
              "this router serves at most " + config.limits().maxClients() + " clients",
              true);
        }
        String certUser = certificateUser(ctx);
        ClientAuth.Permissions permissions =
            config.clientAuth().authenticate(h.authToken(), certUser);
        if (permissions == null) {
          refused.inc();
          log.info(
              "router {}: refusing client {} ({}) at {}: {}",
              config.router(),
              h.clientName(),
              certUser != null
                  ? "a certificate for user '" + certUser + "', not a user here"
                  : h.authToken().length == 0 ? "no token" : "a token of no user",
              ctx.channel().remoteAddress(),
              "not authorized");
          throw new ProtocolException(
              ErrorCode.NOT_AUTHORIZED,
              certUser != null
                  ? "the certificate names user '" + certUser + "', not a user of this router"
                  : h.authToken().length == 0
                      ? "this router serves only clients with a token"
                      : "the token is not that of a user of this router");
        }
        String user = userOf(permissions);
        if (user != null) {
          long[] u = users.computeIfAbsent(user, k -> new long[1]);
          int max = config.limits().hosts().maxSessionsPerUser();
          if (u[0] >= max) {
            refusedSessions.inc();
            throw new ProtocolException(
                ErrorCode.OVERLOADED,
                "user "
                    + user
                    + " has "
                    + u[0]
                    + " sessions, at most limits.maxSessionsPerUser ("
                    + max
                    + ")",
                true);
          }
          u[0]++;
        }
        host =
            new Host(
                hosts.number(),
                ctx.channel(),
                h.clientName(),
                permissions,
                router.metrics(),
                batches);
        host.changeTokens = config.limits().hosts().predicateChangesPerSecond();
        host.changeTokensAt = System.nanoTime();
        hosts.put(host.id, host);
        Handshakes.done(ctx);
        ctx.writeAndFlush(new ClientFrame.HelloOk(Frames.VERSION, config.router(), "bdrp-router"));
        return;
      }
      switch (f) {
        case ClientFrame.SetPredicate s ->
            // PredicateOffload takes every SET_PREDICATE of a session past its HELLO.
            throw new ProtocolException(ErrorCode.INTERNAL, "SET_PREDICATE not handed over");
        case ClientFrame.Send s -> {
          if (sendBytes.buf == null) {
            throw new ProtocolException(ErrorCode.INTERNAL, "SEND without its bytes");
          }
          if (!host.permissions.mayPublish(s.message())) {
            forbidden.inc();
            router.errors().increment(ErrorCode.NOT_AUTHORIZED);
            ctx.writeAndFlush(
                new ClientFrame.Error(
                    s.correlationId(),
                    ErrorCode.NOT_AUTHORIZED.number(),
                    "the message is outside user "
                        + host.permissions.user()
                        + "'s publish permission: "
                        + host.permissions.publish(),
                    0));
            return;
          }
          if (log.isDebugEnabled()) {
            log.debug(
                "router {}: client {} ({}) published {}",
                config.router(),
                host.id,
                host.name,
                s.message());
          }
          router.dataPlane().publish(s.message(), sendBytes);
          if (s.correlationId() != 0) {
            ctx.writeAndFlush(new ClientFrame.Ok(s.correlationId()));
          }
        }
        case ClientFrame.Ping p -> {
          // Not queued above the session's high water mark: a client that sends PINGs and does
          // not read cannot make PONGs pile up (it is cut as a slow consumer meanwhile).
          if (ctx.channel().isWritable()) {
            ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
          }
        }
        case ClientFrame.Pong p -> {}
        case ClientFrame.Bye b -> ctx.close();
        case ClientFrame.Hello h ->
            throw new ProtocolException(ErrorCode.PROTOCOL_VIOLATION, "HELLO sent twice");
        default ->
            throw new ProtocolException(
                ErrorCode.PROTOCOL_VIOLATION, "a client may not send " + f.type());
      }
    }

    /**
     * Keep-alive: a session that has sent nothing for {@link RouterConfig.HostLimits#keepAliveMs()}
     * is sent a PING (which every client answers with a PONG); one that stays silent for as long
     * again is closed ({@code TIMEOUT}, counted as {@code reason="keepalive"}).
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent e && e.state() == IdleState.READER_IDLE && host != null) {
        if (e.isFirst()) {
          ctx.writeAndFlush(new ClientFrame.Ping(System.nanoTime()));
        } else {
          keptAlive.inc();
          long ms = router.config().limits().hosts().keepAliveMs();
          log.info(
              "router {}: {} sent nothing for {} ms, not even a PONG: closed",
              router.config().router(),
              host,
              2 * ms);
          router.errors().increment(ErrorCode.TIMEOUT);
          ctx.writeAndFlush(
                  new ClientFrame.Error(
                      0,
                      ErrorCode.TIMEOUT.number(),
                      "nothing received for "
                          + 2 * ms
                          + " ms, not even a PONG to the router's PING (limits.keepAliveMs)",
                      0))
              .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
        }
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      Channel c = ctx.channel();
      if (c.isWritable()) {
        c.config().setAutoRead(true);
        if (slowCheck != null) {
          slowCheck.cancel(false);
          slowCheck = null;
        }
      } else {
        c.config().setAutoRead(false);
        if (slowCheck == null) {
          slowCheck =
              ctx.executor()
                  .schedule(
                      () -> cutIfSlow(ctx),
                      router.config().limits().slowConsumerMs(),
                      TimeUnit.MILLISECONDS);
        }
      }
      ctx.fireChannelWritabilityChanged();
    }

    private void cutIfSlow(ChannelHandlerContext ctx) {
      slowCheck = null;
      Channel c = ctx.channel();
      if (!c.isActive() || c.isWritable()) {
        return;
      }
      slowConsumers.inc();
      long ms = router.config().limits().slowConsumerMs();
      log.warn(
          "router {}: {} left {} bytes unread for {} ms (high water mark {}): disconnected as a"
              + " slow consumer",
          router.config().router(),
          host != null ? host : "client at " + c.remoteAddress(),
          c.unsafe().outboundBuffer() == null
              ? 0
              : c.unsafe().outboundBuffer().totalPendingWriteBytes(),
          ms,
          router.config().limits().hostHighWaterBytes());
      // The reason goes out first if the socket takes it; the output queued behind is discarded.
      router.errors().increment(ErrorCode.SLOW_CONSUMER);
      ctx.writeAndFlush(
          new ClientFrame.Error(
              0,
              ErrorCode.SLOW_CONSUMER.number(),
              "output above "
                  + router.config().limits().hostHighWaterBytes()
                  + " bytes for "
                  + ms
                  + " ms: disconnected as a slow consumer",
              0));
      c.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (slowCheck != null) {
        slowCheck.cancel(false);
        slowCheck = null;
      }
      if (host != null) {
        hosts.remove(host.id);
        if (host.user != null) {
          long[] u = users.get(host.user);
          u[0]--;
          if (u[0] == 0) {
            users.remove(host.user);
          }
        }
        router.metrics().removeHost(host.id, host.name);
        router.node().setHostMatch(host.id, Predicate.NONE); // no more deliveries from now
        Host gone = host;
        try {
          router.control().execute(() -> leave(gone));
        } catch (java.util.concurrent.RejectedExecutionException closing) {
          // The router is stopping: nothing is advertised any more.
        }
        router.rearm();
      }
      ctx.fireChannelInactive();
    }
  }
}
