package io.bdrp.router.hosts;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.codec.MessageView;
import io.bdrp.router.Handshakes;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.HostLimits;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.links.LinkOutput;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.router.security.ClientTls;
import io.bdrp.router.security.TlsFiles;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Reliable;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ClientFrameDecoder;
import io.bdrp.transport.ClientFrameEncoder;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolErrorHandler;
import io.bdrp.transport.ProtocolException;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
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
public final class ClientSessions {
  private static final Logger log = LoggerFactory.getLogger(ClientSessions.class);

  /** The most one read of a client session takes from its socket. */
  static final int CLIENT_READ_BYTES = 16 * 1024;

  /** Room for an OK or a PONG frame: a prefix and one long. */
  private static final int REPLY_BYTES = io.bdrp.transport.Frames.PREFIX_BYTES + 8;

  private final RouterCore core;
  private final Hosts hosts;
  private final OutputBatches batches;

  /** The SEND frame being handled: its message bytes, exposed while it is decoded and published. */
  private final MessageBytes sendBytes = new MessageBytes();

  /**
   * A SEND's attributes, read in place for its publication (every session's: its table of decoded
   * attributes is shared).
   */
  private final MessageView sendView = new MessageView();

  private final Handshakes handshakes;
  private final PredicateChanges changes;
  private final Metrics.Counter slowConsumers;
  private final Metrics.Counter refused;
  private final Metrics.Counter forbidden;
  private final Metrics.Counter reserved;

  private final DataPlane<MessageBytes> dataPlane;
  private final Reliable<MessageBytes> reliable;
  private final Runnable reliableTimer;
  private final java.util.function.Supplier<ClientTls> clientTls;

  /**
   * The session of each reliable publisher, by publisher id: where its confirmations go, the latest
   * session that sent a message under that id (an id is a random 64-bit number the client keeps to
   * itself); forgotten when that session ends.
   */
  private final java.util.Map<Long, ConfirmRuns> publishers = new java.util.HashMap<>();

  /** The publisher looked up last and its session (null: none), so that a run skips the table. */
  private long lastPublisher;

  private ConfirmRuns lastRuns;

  /** Sessions with confirmations gathered in this batch, written at its end. */
  private final java.util.ArrayList<ConfirmRuns> confirming = new java.util.ArrayList<>();

  private final Metrics.Counter retentionFull;
  private final Metrics.Counter notReady;

  /** Message tracing (null: this router answers TRACE with an error). */
  private io.bdrp.router.Traces traces;

  /**
   * @param clientTls TLS on the client port as now loaded (null: none)
   * @param signed whether routers sign their advertisements
   */
  public ClientSessions(
      RouterCore core,
      Hosts hosts,
      OutputBatches batches,
      DataPlane<MessageBytes> dataPlane,
      Reliable<MessageBytes> reliable,
      Runnable reliableTimer,
      java.util.function.Supplier<ClientTls> clientTls,
      boolean signed) {
    this.core = core;
    this.dataPlane = dataPlane;
    this.reliable = reliable;
    this.reliableTimer = reliableTimer;
    this.clientTls = clientTls;
    RouterMetrics metrics = core.metrics();
    this.hosts = hosts;
    this.batches = batches;
    this.handshakes = new Handshakes("clients", core.config().limits(), metrics);
    this.slowConsumers = metrics.connectionsClosed("clients", "slow_consumer");
    this.refused = metrics.connectionsClosed("clients", "not_authorized");
    this.forbidden = metrics.sendsRefused("publish_permission");
    this.reserved = metrics.sendsRefused("reserved_attribute");
    this.retentionFull = metrics.sendsRefused("reliable_retention_full");
    this.notReady = metrics.sendsRefused("reliable_not_ready");
    this.keptAlive = metrics.connectionsClosed("clients", "keepalive");
    this.refusedSessions = metrics.requestsRefused("user_sessions");
    this.changes = new PredicateChanges(core, signed);
    batches.beforeFlush(this::endConfirmations);
  }

  /** Sets what handles the clients' TRACE requests. */
  public void traces(io.bdrp.router.Traces traces) {
    this.traces = traces;
  }

  /** The end of a batch: each session's run of confirmations goes into its output. */
  private void endConfirmations() {
    for (int i = 0; i < confirming.size(); i++) {
      confirming.get(i).end(batches);
    }
    confirming.clear();
  }

  /** The session that takes {@code publisher}'s answers, or null. */
  private ConfirmRuns sessionOf(long publisher) {
    if (lastRuns != null && lastPublisher == publisher) {
      return lastRuns;
    }
    ConfirmRuns runs = publishers.get(publisher);
    if (runs != null) {
      lastPublisher = publisher;
      lastRuns = runs;
    }
    return runs;
  }

  private final Metrics.Counter keptAlive;
  private final Metrics.Counter refusedSessions;

  /**
   * The router's one path for predicate changes, which other front ends share (their hosts' changes
   * take the same checks and go into the same aggregate).
   */
  public PredicateChanges predicates() {
    return changes;
  }

  /**
   * Where the reliable service's answers go: to the session of the publisher, if it is still
   * connected (else it sends its unconfirmed messages again when it comes back, and the answer
   * comes then). Written in order with the session's other output, flushed at the batch's end;
   * confirmations gathered into runs ({@link ConfirmRuns}).
   */
  public LinkOutput.Publishers publishers() {
    return new LinkOutput.Publishers() {
      @Override
      public void confirmed(long publisher, long publisherSeq) {
        ConfirmRuns runs = sessionOf(publisher);
        if (runs != null
            && runs.channel.isActive()
            && runs.confirmed(batches, publisher, publisherSeq)) {
          confirming.add(runs);
        }
      }

      @Override
      public void unreached(long publisher, long publisherSeq, long[] unreached) {
        ConfirmRuns runs = sessionOf(publisher);
        if (runs != null && runs.channel.isActive()) {
          Channel c = runs.channel;
          runs.write(batches); // the confirmations before it, first
          int n = 0;
          for (long w : unreached) {
            n += Long.bitCount(w);
          }
          int[] routers = new int[n];
          int i = 0;
          for (int w = 0; w < unreached.length; w++) {
            for (long bits = unreached[w]; bits != 0; bits &= bits - 1) {
              routers[i++] = (w << 6) + Long.numberOfTrailingZeros(bits);
            }
          }
          batches.write(c, new ClientFrame.Unreached(publisher, publisherSeq, routers));
        }
      }
    };
  }

  /** Connections in their HELLO now. */
  public int handshakesPending() {
    return handshakes.pending();
  }

  public ChannelInitializer<Channel> initializer() {
    RouterLimits limits = core.config().limits();
    // A read that filled its buffer: the session has more input waiting (OutputBatches).
    io.netty.channel.ChannelHandler fullReads = new FullReads(batches);
    return new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
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
        ClientTls tls = clientTls.get();
        if (tls != null) {
          ch.pipeline().addLast(tls.context().newHandler(ch.alloc()));
        }
        io.bdrp.transport.FrameDecoder frames = handshakes.frameDecoder();
        SendBytes sends =
            new SendBytes(sendBytes, session::publishInPlace, session::publishReliableInPlace);
        frames.inPlace(sends::take); // a SEND published from the read's bytes, without a slice
        ch.pipeline()
            // Replies to a read's requests (a burst of PINGs, of acknowledged SENDs) leave in
            // one flush at the end of the read, not one system call each.
            .addLast(new FlushConsolidationHandler(256, false))
            .addLast(
                new IdleStateHandler(limits.hosts().keepAliveMs(), 0, 0, TimeUnit.MILLISECONDS))
            .addLast(handshakes.guard(true))
            .addLast(fullReads)
            .addLast(frames)
            .addLast(sends)
            .addLast(changes.offload(() -> session.host))
            .addLast(new ClientFrameDecoder(limits.maxFrameBytes()))
            .addLast(new ClientFrameEncoder())
            .addLast(session)
            .addLast(new ProtocolErrorHandler(core.errors()));
      }
    };
  }

  /**
   * Tells the output batches when a client session's read filled its buffer ({@link
   * OutputBatches#inputContinues}): the session has more input waiting for the loop's next turn.
   */
  @io.netty.channel.ChannelHandler.Sharable
  private static final class FullReads extends io.netty.channel.ChannelInboundHandlerAdapter {
    private final OutputBatches batches;

    FullReads(OutputBatches batches) {
      this.batches = batches;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof io.netty.buffer.ByteBuf b && b.readableBytes() >= CLIENT_READ_BYTES) {
        batches.inputContinues();
      }
      ctx.fireChannelRead(msg);
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
   * RouterLimits#slowConsumerMs()} is disconnected as a slow consumer (WARN, {@code
   * bdrp_connections_closed_total{port="clients",reason="slow_consumer"}}).
   */
  private final class ClientHandler extends SimpleChannelInboundHandler<ClientFrame> {
    private ClientHost host;

    /** Where this session's confirmations gather, from its HELLO on. */
    private ConfirmRuns confirms;

    private final SlowConsumerCheck slowCheck =
        new SlowConsumerCheck(core.config().limits().slowConsumerMs(), this::cutIfSlow);

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
      RouterConfig config = core.config();
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
        String user = AttachedHost.userOf(permissions);
        long sessions = hosts.sessions(user);
        int max = config.limits().hosts().maxSessionsPerUser();
        if (user != null && sessions >= max) {
          refusedSessions.inc();
          throw new ProtocolException(
              ErrorCode.OVERLOADED,
              "user "
                  + user
                  + " has "
                  + sessions
                  + " sessions, at most limits.maxSessionsPerUser ("
                  + max
                  + ")",
              true);
        }
        host =
            new ClientHost(
                hosts.number(),
                ctx.channel(),
                h.clientName(),
                permissions,
                core.metrics(),
                batches,
                config.limits().hosts().predicateChangesPerSecond());
        hosts.attach(host);
        Handshakes.done(ctx);
        // The session speaks the lower of the two sides' versions (a client of version 1 is never
        // sent CONFIRM_RANGE).
        int version = Math.clamp(h.maxVersion(), 1, Frames.SESSION_VERSION);
        confirms = new ConfirmRuns(ctx.channel(), version);
        ctx.writeAndFlush(new ClientFrame.HelloOk(version, config.router(), "bdrp-router"));
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
          if (refused(ctx, s.correlationId(), s.message())) {
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
          dataPlane.publish(s.message(), sendBytes);
          host.published();
          if (s.correlationId() != 0) {
            reply(ctx.channel(), new ClientFrame.Ok(s.correlationId()));
          }
        }
        case ClientFrame.SendReliable s -> sendReliable(ctx, s);
        case ClientFrame.Trace t -> trace(ctx, t);
        case ClientFrame.Ping p -> {
          // Not queued above the session's high water mark: a client that sends PINGs and does
          // not read cannot make PONGs pile up (it is cut as a slow consumer meanwhile).
          if (ctx.channel().isWritable()) {
            reply(ctx.channel(), new ClientFrame.Pong(p.nonce()));
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
     * A SEND published from its bytes ({@link SendBytes}), its frame not decoded: the message's
     * attributes read in place ({@link MessageView}), matched and forwarded as {@link
     * ClientFrame.Send} is below, with no object made for it. Done only where the outcome is that
     * of the SEND decoded: the session past its HELLO, its user free to publish anything, a message
     * the view takes (one that decodes, its attributes in order) and that carries no attribute only
     * routers set; false otherwise, and the frame is decoded and handled below, answered or refused
     * as ever. Not done while the debug log is on, which logs the message.
     */
    boolean publishInPlace(ChannelHandlerContext ctx, long correlationId, MessageBytes message) {
      if (!viewInPlace(message)) {
        return false;
      }
      dataPlane.publish(sendView, message);
      host.published();
      if (correlationId != 0) {
        reply(ctx.channel(), new ClientFrame.Ok(correlationId));
      }
      return true;
    }

    /**
     * A short reply (OK, PONG) written into the session's output batch, where its DELIVER frames
     * go, and flushed with them at the end of the batch: a frame's bytes copied, rather than a
     * write through the pipeline each. A read of requests (a burst of PINGs, of acknowledged SENDs)
     * then costs the loop little more than reading them.
     */
    private void reply(Channel ch, ClientFrame f) {
      ClientFrameCodec.encode(f, batches.room(ch, REPLY_BYTES));
    }

    /**
     * A SEND_RELIABLE published from its bytes ({@link SendBytes}), its frame not decoded: under
     * the conditions of {@link #publishInPlace}, handled as the frame decoded is ({@link
     * #sendReliable}), refusals included.
     */
    boolean publishReliableInPlace(
        ChannelHandlerContext ctx,
        long correlationId,
        long publisher,
        long publisherSeq,
        MessageBytes message) {
      if (!viewInPlace(message)) {
        return false;
      }
      publishReliable(ctx, correlationId, sendView, publisher, publisherSeq);
      return true;
    }

    /**
     * Whether a message's bytes may be published without its frame decoded, read into {@link
     * #sendView} if so: the session past its HELLO, its user free to publish anything, the debug
     * log off, a message the view takes and that carries no attribute only routers set.
     */
    private boolean viewInPlace(MessageBytes message) {
      if (host == null || host.permissions.publish() != null || log.isDebugEnabled()) {
        return false;
      }
      return LinkOutput.readInto(sendView, message)
          && sendView.indexOf(io.bdrp.encoding.mqtt.MqttRetained.RETAINED) < 0
          && sendView.indexOf(io.bdrp.encoding.mqtt.MqttRetained.FOR) < 0;
    }

    /**
     * Keep-alive: a session that has sent nothing for {@link HostLimits#keepAliveMs()} is sent a
     * PING (which every client answers with a PONG); one that stays silent for as long again is
     * closed ({@code TIMEOUT}, counted as {@code reason="keepalive"}).
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent e && e.state() == IdleState.READER_IDLE && host != null) {
        if (e.isFirst()) {
          ctx.writeAndFlush(new ClientFrame.Ping(System.nanoTime()));
        } else {
          keptAlive.inc();
          long ms = core.config().limits().hosts().keepAliveMs();
          log.info(
              "router {}: {} sent nothing for {} ms, not even a PONG: closed",
              core.config().router(),
              host,
              2 * ms);
          core.errors().increment(ErrorCode.TIMEOUT);
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
      slowCheck.writabilityChanged(ctx);
      ctx.fireChannelWritabilityChanged();
    }

    private void cutIfSlow(ChannelHandlerContext ctx) {
      Channel c = ctx.channel();
      slowConsumers.inc();
      long ms = core.config().limits().slowConsumerMs();
      log.warn(
          "router {}: {} left {} bytes unread for {} ms (high water mark {}): disconnected as a"
              + " slow consumer",
          core.config().router(),
          host != null ? host : "client at " + c.remoteAddress(),
          c.unsafe().outboundBuffer() == null
              ? 0
              : c.unsafe().outboundBuffer().totalPendingWriteBytes(),
          ms,
          core.config().limits().hostHighWaterBytes());
      // The reason goes out first if the socket takes it; the output queued behind is discarded.
      core.errors().increment(ErrorCode.SLOW_CONSUMER);
      ctx.writeAndFlush(
          new ClientFrame.Error(
              0,
              ErrorCode.SLOW_CONSUMER.number(),
              "output above "
                  + core.config().limits().hostHighWaterBytes()
                  + " bytes for "
                  + ms
                  + " ms: disconnected as a slow consumer",
              0));
      c.close();
    }

    /**
     * Whether a message a client publishes (SEND or SEND_RELIABLE with {@code correlationId}) is
     * refused, answered and counted: it carries an attribute only routers set, or it is outside its
     * user's publish permission.
     */
    private boolean refused(ChannelHandlerContext ctx, long correlationId, Message m) {
      if (io.bdrp.encoding.mqtt.MqttRetained.reserved(m)) {
        // The store of retained messages trusts these two: a client may not forge them.
        refuse(
            ctx,
            correlationId,
            reserved,
            ErrorCode.BAD_MESSAGE,
            "the attributes "
                + io.bdrp.encoding.mqtt.MqttRetained.RETAINED
                + " and "
                + io.bdrp.encoding.mqtt.MqttRetained.FOR
                + " are set by routers only (docs/mqtt.md, \"Retained messages\")");
        return true;
      }
      if (!host.permissions.mayPublish(m)) {
        refuse(
            ctx,
            correlationId,
            forbidden,
            ErrorCode.NOT_AUTHORIZED,
            "the message is outside user "
                + host.permissions.user()
                + "'s publish permission: "
                + host.permissions.publish());
        return true;
      }
      return false;
    }

    /**
     * A SEND_RELIABLE: the checks of SEND, then room in the retention (without it, ERROR
     * OVERLOADED: the client waits for confirmations and sends it again); its publisher's answers
     * go to this session from now on.
     */
    private void sendReliable(ChannelHandlerContext ctx, ClientFrame.SendReliable s) {
      if (sendBytes.buf == null) {
        throw new ProtocolException(ErrorCode.INTERNAL, "SEND_RELIABLE without its bytes");
      }
      if (refused(ctx, s.correlationId(), s.message())) {
        return;
      }
      publishReliable(ctx, s.correlationId(), s.message(), s.publisher(), s.publisherSeq());
    }

    /**
     * A SEND_RELIABLE past the checks of SEND ({@code m} its message, {@code id} its correlation
     * id): room in the retention, then published.
     */
    private void publishReliable(
        ChannelHandlerContext ctx, long id, Attributes m, long publisher, long publisherSeq) {
      // After refusing a publisher's message n for want of room, its later messages on this
      // session are refused too until n comes again: taking n+1 first would deliver it before n,
      // and destinations would then drop n as older than what they delivered.
      Long refusedFrom = waitingFor.isEmpty() ? null : waitingFor.get(publisher);
      if (refusedFrom != null && publisherSeq <= refusedFrom) {
        waitingFor.remove(publisher);
        refusedFrom = null;
      }
      if (refusedFrom != null || !reliable.hasRoom(sendBytes.length)) {
        if (refusedFrom == null) {
          waitingFor.put(publisher, publisherSeq);
        }
        boolean ready = reliable.ready();
        refuse(
            ctx,
            id,
            ready ? retentionFull : notReady,
            ErrorCode.OVERLOADED,
            ready
                ? "the reliable retention of router "
                    + core.config().router()
                    + " is full: send again once earlier messages are confirmed"
                : "router "
                    + core.config().router()
                    + " has just started and cannot yet compute the destinations of reliable"
                    + " messages: send again shortly");
        return;
      }
      // The latest session of a publisher takes its answers: a client that reconnects sends
      // its unconfirmed messages again before its old connection may have been seen to end.
      if (confirms.taken != publisher) {
        ConfirmRuns before = publishers.put(publisher, confirms);
        if (before != confirms) {
          ownIds.add(publisher);
          if (before != null && before.taken == publisher) {
            before.taken = 0; // it sends under this id again: it takes the answers back then
          }
        }
        confirms.taken = publisher;
        lastRuns = null;
      }
      reliable.publish(m, sendBytes, publisher, publisherSeq);
      host.published();
      reliableTimer.run();
    }

    /** This session's traces a second ({@link io.bdrp.router.Traces#PER_HOST_PER_SECOND}). */
    private final io.bdrp.router.Traces.Bucket traceBucket =
        new io.bdrp.router.Traces.Bucket(io.bdrp.router.Traces.PER_HOST_PER_SECOND);

    /**
     * A TRACE: refused as a SEND of its message would be (outside the user's publish permission, or
     * carrying an attribute only routers set), or beyond the session's rate or the router's table
     * of traces; else traced. Host names go into the reports only for a user whose permissions are
     * unrestricted (it may publish and subscribe to anything).
     */
    private void trace(ChannelHandlerContext ctx, ClientFrame.Trace t) {
      long id = t.correlationId();
      if (traces == null) {
        refuse(
            ctx,
            id,
            core.metrics().tracesRefused("not_offered"),
            ErrorCode.PROTOCOL_VIOLATION,
            "router " + core.config().router() + " does not trace messages");
        return;
      }
      if (!host.permissions.mayPublish(t.message())) {
        refuse(
            ctx,
            id,
            traces.refused("publish_permission"),
            ErrorCode.NOT_AUTHORIZED,
            "the message is outside user "
                + host.permissions.user()
                + "'s publish permission ("
                + host.permissions.publish()
                + "): it may not be traced");
        return;
      }
      if (refused(ctx, id, t.message())) {
        return;
      }
      if (!traceBucket.take(System.nanoTime())) {
        refuse(
            ctx,
            id,
            traces.refused("host_rate"),
            ErrorCode.OVERLOADED,
            "more than "
                + io.bdrp.router.Traces.PER_HOST_PER_SECOND
                + " traces a second from this session: trace again shortly");
        return;
      }
      boolean named = host.permissions.publish() == null && host.permissions.subscribe() == null;
      if (!traces.start(t, named, ctx.channel())) {
        refuse(
            ctx,
            id,
            traces.refused("pending_full"),
            ErrorCode.OVERLOADED,
            "router "
                + core.config().router()
                + " has "
                + io.bdrp.router.Traces.MAX_PENDING
                + " traces waiting for reports: trace again shortly");
      }
    }

    /** Per publisher of this session, the first message refused for want of room, if any. */
    private final java.util.Map<Long, Long> waitingFor = new java.util.HashMap<>();

    /** The publisher ids this session holds. */
    private final java.util.Set<Long> ownIds = new java.util.HashSet<>();

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      for (Long p : ownIds) {
        publishers.remove(p, confirms);
      }
      lastRuns = null;
      slowCheck.cancel();
      if (host != null) {
        hosts.detach(host);
        core.metrics().removeHost(host.id, host.name);
        core.node().setHostMatch(host.id, Predicate.NONE); // no more deliveries from now
        changes.left(host);
        core.rearm();
      }
      ctx.fireChannelInactive();
    }
  }

  /** A request refused: counted by {@code counter} and its code, and answered with an ERROR. */
  private void refuse(
      ChannelHandlerContext ctx,
      long correlationId,
      Metrics.Counter counter,
      ErrorCode code,
      String why) {
    counter.inc();
    core.errors().increment(code);
    // From the pipeline's end, through the frame encoder: ctx may be SendBytes', before it.
    ctx.channel().writeAndFlush(new ClientFrame.Error(correlationId, code.number(), why, 0));
  }
}
