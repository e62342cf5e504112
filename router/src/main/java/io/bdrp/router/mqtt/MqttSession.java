package io.bdrp.router.mqtt;

import io.bdrp.router.config.HostLimits;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.hosts.SlowConsumerCheck;
import io.bdrp.router.security.ClientAuth;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectVariableHeader;
import io.netty.handler.codec.mqtt.MqttIdentifierRejectedException;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttUnacceptableProtocolVersionException;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MQTT connection: its CONNECT, then its packets until it ends. The PUBLISH flow is {@link
 * MqttInbound}'s, subscriptions are {@link MqttSubscriptions}', deliveries {@link MqttHost}'s, the
 * will {@link MqttWill}'s (published when the connection ends without a DISCONNECT).
 *
 * <p><b>Sessions.</b> The CONNECT's Clean Start (Clean Session in 3.1.1) and Session Expiry
 * Interval (in 3.1.1: {@link HostLimits#mqttSessionExpiryMaxSeconds()} without a clean session,
 * else 0) say whether the session outlives the connection ({@link MqttSessions}), for at most
 * {@link HostLimits#mqttSessionExpiryMaxSeconds()}. Clean Start 0 resumes the session of the client
 * identifier, kept or still connected (a takeover), if the CONNECT is of the same protocol version
 * and user: Session Present 1 (MQTT-3.2.2-2), then what was in flight and queued. Clean Start 1, or
 * another protocol version or user, discards it (MQTT-3.1.2-4). An MQTT 5 DISCONNECT may change the
 * Session Expiry Interval, but not from a CONNECT's 0 (MQTT-3.14.2-2: a protocol error).
 *
 * <p><b>Limits.</b> As on the client port: at most {@code limits.maxHandshakes} connections without
 * their CONNECT at once, each for at most {@code limits.helloTimeoutMs}; a session whose output
 * stays above its high water mark for {@code limits.slowConsumerMs} is closed as a slow consumer
 * (and is not read meanwhile). Keep-alive: a session that sends no packet for one and a half times
 * its keep-alive is closed (MQTT-3.1.2-24); one that asked for none (0) is held to {@code
 * limits.keepAliveMs} twice over, like a silent bdrp client, and an MQTT 5 client is told so
 * (Server Keep Alive).
 *
 * <p><b>Bad input</b> ends the session ({@link MqttFault}): an MQTT 5 client gets a DISCONNECT with
 * the reason code first; a 3.1.1 client, which has none, is disconnected. Each is counted in {@code
 * bdrp_mqtt_malformed_total}. Nothing else is disturbed.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttSession extends SimpleChannelInboundHandler<MqttMessage> {
  private static final Logger log = LoggerFactory.getLogger(MqttSession.class);

  private final MqttListener listener;
  private ChannelHandlerContext ctx;
  private MqttHost host; // null until the CONNECT is accepted
  private MqttSubscriptions subscriptions;
  private MqttInbound inbound;
  private MqttWill will; // null: none, or discarded by the client's DISCONNECT
  private boolean v5;
  private MqttMetrics.Protocol counters;
  private boolean handshaking;
  private long expiryAsked; // the CONNECT's Session Expiry Interval
  private boolean taken; // another connection took the client identifier over
  private boolean sessionGoesOn; // ... and resumed the session
  private ScheduledFuture<?> connectTimeout;
  private final SlowConsumerCheck slowCheck;

  MqttSession(MqttListener listener) {
    this.listener = listener;
    this.counters = listener.metrics.unknown;
    this.slowCheck =
        new SlowConsumerCheck(listener.core.config().limits().slowConsumerMs(), this::cutIfSlow);
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    RouterLimits limits = listener.core.config().limits();
    if (listener.handshaking >= limits.maxHandshakes()) {
      listener.handshakesRefused.inc();
      ctx.close();
      return;
    }
    listener.handshaking++;
    handshaking = true;
    connectTimeout =
        ctx.executor()
            .schedule(
                () -> {
                  listener.connectTimeouts.inc();
                  ctx.close();
                },
                limits.helloTimeoutMs(),
                TimeUnit.MILLISECONDS);
    ctx.fireChannelActive();
  }

  private void handshakeDone() {
    if (handshaking) {
      handshaking = false;
      listener.handshaking--;
    }
    if (connectTimeout != null) {
      connectTimeout.cancel(false);
      connectTimeout = null;
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, MqttMessage m) {
    if (m.decoderResult().isFailure()) {
      decodeFailed(m);
      return;
    }
    if (taken) {
      return; // the session went to another connection; this one is being closed
    }
    if (host == null) {
      if (!(m instanceof MqttConnectMessage c)) {
        throw new MqttFault(MqttFault.PROTOCOL_ERROR, "the first packet must be CONNECT");
      }
      connect(c);
      return;
    }
    switch (m.fixedHeader().messageType()) {
      case PUBLISH -> inbound.publish((MqttPublishMessage) m);
      case PUBACK -> host.acknowledged(packetId(m));
      case PUBREL -> inbound.released(packetId(m));
      case PUBREC -> host.pubrec(packetId(m), reasonCode(m));
      case PUBCOMP -> host.pubcomp(packetId(m));
      case SUBSCRIBE -> MqttInbound.subscribe(v5, (MqttSubscribeMessage) m, subscriptions);
      case UNSUBSCRIBE -> MqttInbound.unsubscribe((MqttUnsubscribeMessage) m, subscriptions);
      case PINGREQ -> {
        if (ctx.channel().isWritable()) {
          ctx.writeAndFlush(MqttMessage.PINGRESP);
        }
      }
      case DISCONNECT -> {
        disconnectExpiry(m);
        if (!(m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h
            && h.reasonCode() == 0x04)) {
          will = null; // MQTT-3.1.2-10; MQTT 5 0x04 is Disconnect with Will Message
        }
        ctx.close();
      }
      case CONNECT -> throw new MqttFault(MqttFault.PROTOCOL_ERROR, "a second CONNECT");
      default ->
          throw new MqttFault(
              MqttFault.PROTOCOL_ERROR, "a client may not send " + m.fixedHeader().messageType());
    }
  }

  private static int packetId(MqttMessage m) {
    return ((MqttMessageIdVariableHeader) m.variableHeader()).messageId();
  }

  private static int reasonCode(MqttMessage m) {
    return m.variableHeader() instanceof MqttPubReplyMessageVariableHeader r
        ? r.reasonCode() & 0xFF
        : 0;
  }

  /**
   * An MQTT 5 DISCONNECT's Session Expiry Interval, if it has one, becomes the session's (at most
   * the router's limit); non-zero after a CONNECT's 0 is a protocol error (MQTT-3.14.2-2).
   */
  private void disconnectExpiry(MqttMessage m) {
    if (!(m.variableHeader() instanceof MqttReasonCodeAndPropertiesVariableHeader h)
        || h.properties() == null
        || !(h.properties().getProperty(MqttProperties.SESSION_EXPIRY_INTERVAL)
            instanceof MqttProperties.IntegerProperty e)) {
      return;
    }
    long asked = Integer.toUnsignedLong(e.value());
    if (expiryAsked == 0 && asked != 0) {
      throw new MqttFault(
          MqttFault.PROTOCOL_ERROR,
          "a DISCONNECT with a Session Expiry Interval after a CONNECT with none");
    }
    host.expirySeconds =
        Math.min(asked, listener.core.config().limits().hosts().mqttSessionExpiryMaxSeconds());
  }

  /** A packet the decoder could not read. */
  private void decodeFailed(MqttMessage m) {
    Throwable cause = m.decoderResult().cause();
    if (host == null && cause instanceof MqttUnacceptableProtocolVersionException) {
      refuse(MqttConnect.UNSUPPORTED_PROTOCOL, false);
      return;
    }
    if (host == null
        && cause instanceof MqttIdentifierRejectedException
        && m.variableHeader() instanceof MqttConnectVariableHeader vh) {
      refuse(MqttConnect.IDENTIFIER_REJECTED, vh.version() == 5);
      return;
    }
    throw new MqttFault(
        cause instanceof TooLongFrameException ? MqttFault.PACKET_TOO_LARGE : MqttFault.MALFORMED,
        "a packet that does not decode: " + cause.getMessage());
  }

  private void connect(MqttConnectMessage c) {
    MqttConnectVariableHeader vh = c.variableHeader();
    MqttVersion version = MqttVersion.fromProtocolNameAndLevel(vh.name(), (byte) vh.version());
    if (version != MqttVersion.MQTT_3_1_1 && version != MqttVersion.MQTT_5) {
      refuse(MqttConnect.UNSUPPORTED_PROTOCOL, false);
      return;
    }
    v5 = version == MqttVersion.MQTT_5;
    counters = v5 ? listener.metrics.mqtt5 : listener.metrics.mqtt3;
    String badFlags = MqttConnect.flagsProblem(vh, v5);
    if (badFlags != null) {
      throw new MqttFault(MqttFault.MALFORMED, badFlags); // MQTT-3.1.4-1: closed, no CONNACK
    }
    RouterConfig config = listener.core.config();
    Object auth = MqttConnect.authenticate(config, c, MqttConnect.certificateUser(ctx));
    if (auth instanceof MqttConnect.Refusal r) {
      refuse(r, v5);
      return;
    }
    ClientAuth.Permissions permissions = (ClientAuth.Permissions) auth;
    Object willOrRefusal = MqttWill.of(c, v5, permissions);
    if (willOrRefusal instanceof MqttConnect.Refusal r) {
      refuse(r, v5);
      return;
    }
    String clientId = c.payload().clientIdentifier();
    MqttConnect.Refusal full = MqttConnect.capacity(listener, permissions);
    if (full != null && !replaces(clientId, permissions)) {
      refuse(full, v5);
      return;
    }
    int number = listener.hosts.number();
    String assigned = null;
    if (clientId == null || clientId.isEmpty()) {
      if (!v5 && !vh.isCleanSession()) {
        refuse(MqttConnect.IDENTIFIER_REJECTED, false); // MQTT-3.1.3-8
        return;
      }
      clientId = assigned = "bdrp-" + config.router() + "-" + number;
    }
    will = (MqttWill) willOrRefusal;
    HostLimits limits = config.limits().hosts();
    boolean cleanStart = vh.isCleanSession();
    expiryAsked =
        v5
            ? MqttConnect.sessionExpiryAsked(c)
            : cleanStart ? 0 : limits.mqttSessionExpiryMaxSeconds();
    long expiry = Math.min(expiryAsked, limits.mqttSessionExpiryMaxSeconds());
    MqttSession previous = listener.byClientId.get(clientId);
    MqttHost existing = previous != null ? previous.host : listener.sessions.take(clientId);
    boolean resume =
        existing != null
            && !cleanStart
            && existing.v5 == v5
            && existing.permissions.equals(permissions);
    if (previous != null) {
      previous.taken = true;
      previous.sessionGoesOn = resume;
      previous.end(MqttFault.SESSION_TAKEN_OVER, "taken over"); // MQTT-3.1.4-2
    }
    if (existing != null && !resume) {
      existing.counters.sessions("discarded").inc(); // MQTT-3.1.2-4
      listener.sessions.end(existing);
    }
    MqttProperties props = vh.properties();
    int receiveMaximum = intProperty(props, MqttProperties.RECEIVE_MAXIMUM, 65_535);
    int maxPacket = intProperty(props, MqttProperties.MAXIMUM_PACKET_SIZE, 0);
    Channel ch = ctx.channel();
    if (resume) {
      host = existing;
      host.resume(ch, receiveMaximum, maxPacket);
      MqttWill.resumed(listener, clientId);
      counters.sessions("resumed").inc();
    } else {
      host =
          new MqttHost(
              number,
              clientId,
              permissions,
              limits,
              ch,
              v5,
              receiveMaximum,
              maxPacket,
              listener.batches,
              listener.deliveries,
              listener.metrics);
      listener.hosts.attach(host);
    }
    host.expirySeconds = expiry;
    subscriptions =
        new MqttSubscriptions(
            host, ch, v5, listener.predicates, listener.shared, counters, listener.retained.store);
    inbound = new MqttInbound(listener, host, ctx, v5, counters);
    listener.byClientId.put(clientId, this);
    handshakeDone();
    ctx.pipeline().get(MqttFraming.class).maxPacketBytes(config.limits().maxFrameBytes());
    int serverKeepAlive =
        keepAlive(vh.keepAliveTimeSeconds(), config.limits().hosts().keepAliveMs());
    counters.connected.inc();
    log.debug(
        "router {}: MQTT client {} ({}, user {}) at {} connected",
        config.router(),
        clientId,
        counters.name,
        MqttConnect.userName(c),
        ch.remoteAddress());
    ctx.writeAndFlush(
        MqttConnect.accepted(
            v5, c, assigned, config.limits().maxFrameBytes(), serverKeepAlive, resume, expiry));
    if (resume) {
      host.sendAgain();
    }
  }

  /**
   * Whether the client identifier has a session of the same user, connected or kept: the new one
   * takes its place among the limits of clients and of the user's sessions.
   */
  private boolean replaces(String clientId, ClientAuth.Permissions permissions) {
    if (clientId == null || clientId.isEmpty()) {
      return false;
    }
    MqttSession live = listener.byClientId.get(clientId);
    MqttHost h = live != null ? live.host : listener.sessions.held(clientId);
    return h != null && java.util.Objects.equals(h.user, AttachedHost.userOf(permissions));
  }

  private static int intProperty(MqttProperties p, int id, int dflt) {
    return p.getProperty(id) instanceof MqttProperties.IntegerProperty i ? i.value() : dflt;
  }

  /**
   * Arms the keep-alive: one and a half times {@code seconds}, or twice {@code limitMs} for a
   * client that asked for none. Returns the Server Keep Alive to announce (MQTT 5), or -1.
   */
  private int keepAlive(int seconds, int limitMs) {
    long idleMs = seconds > 0 ? seconds * 1500L : 2L * limitMs;
    ctx.pipeline()
        .addBefore(
            "session", "keepalive", new IdleStateHandler(idleMs, 0, 0, TimeUnit.MILLISECONDS));
    return seconds == 0 && v5 ? Math.max(1, limitMs / 1000) : -1;
  }

  /** Refuses the CONNECT: the CONNACK, then the connection is closed. */
  private void refuse(MqttConnect.Refusal r, boolean v5) {
    counters.connections(r.result()).inc();
    log.info(
        "router {}: refusing MQTT client at {}: {}",
        listener.core.config().router(),
        ctx.channel().remoteAddress(),
        r.why());
    ctx.pipeline().get(MqttFraming.class).discardInput();
    ctx.channel().config().setAutoRead(false);
    ctx.writeAndFlush(MqttConnect.refusal(r, v5)).addListener(ChannelFutureListener.CLOSE);
  }

  /**
   * Ends the session: an MQTT 5 client gets a DISCONNECT with {@code reasonCode} first, a 3.1.1
   * client is disconnected.
   */
  void end(int reasonCode, String why) {
    MqttFraming framing = ctx.pipeline().get(MqttFraming.class);
    if (framing != null) {
      framing.discardInput();
    }
    log.debug(
        "router {}: ending MQTT session {} at {}: {}",
        listener.core.config().router(),
        host != null ? host.name : "-",
        ctx.channel().remoteAddress(),
        why);
    if (v5 && host != null && ctx.channel().isActive()) {
      MqttProperties props = new MqttProperties();
      props.add(new MqttProperties.StringProperty(MqttProperties.REASON_STRING, why));
      ctx.writeAndFlush(
              MqttMessageBuilders.disconnect()
                  .reasonCode((byte) reasonCode)
                  .properties(props)
                  .build())
          .addListener(ChannelFutureListener.CLOSE);
    } else {
      ctx.close();
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof MqttFault f) {
      counters.malformed(f.counted).inc();
      end(f.reasonCode, f.getMessage());
    } else if (cause instanceof IOException) {
      ctx.close(); // the connection broke
    } else {
      log.warn(
          "router {}: MQTT session at {} failed",
          listener.core.config().router(),
          ctx.channel().remoteAddress(),
          cause);
      end(0x83, "internal error"); // Implementation specific error
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent e && e.state() == IdleState.READER_IDLE && host != null) {
      listener.keepAliveClosed.inc();
      end(MqttFault.KEEP_ALIVE_TIMEOUT, "no packet within the keep-alive");
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    slowCheck.writabilityChanged(ctx);
    if (host != null && !taken && ctx.channel().isWritable()) {
      host.drain(); // a kept session's queue, then retained messages, wait for room
    }
    ctx.fireChannelWritabilityChanged();
  }

  /** Above its high water mark for limits.slowConsumerMs: the session is closed. */
  private void cutIfSlow(ChannelHandlerContext ctx) {
    listener.slowConsumers.inc();
    log.warn(
        "router {}: {} above its high water mark for {} ms: disconnected as a slow consumer",
        listener.core.config().router(),
        host,
        listener.core.config().limits().slowConsumerMs());
    ctx.channel().close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    handshakeDone();
    slowCheck.cancel();
    if (host != null) {
      listener.byClientId.remove(host.name, this);
      long keptSeconds = 0;
      if (!taken) {
        // Kept for its expiry interval, or ended now: no more deliveries, its predicate removed.
        keptSeconds =
            listener.sessions.connectionEnded(host, ctx.executor()) ? host.expirySeconds : 0;
      } // else the connection that took it over resumed the session or ended it already
      if (will != null) {
        will.connectionEnded(
            listener, ctx.executor(), host.name, taken && sessionGoesOn, keptSeconds, counters);
      }
    }
    ctx.fireChannelInactive();
  }
}
