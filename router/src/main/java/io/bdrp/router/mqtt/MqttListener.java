package io.bdrp.router.mqtt;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.hosts.PredicateChanges;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.security.ClientTls;
import io.bdrp.routing.DataPlane;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The router's MQTT port ({@code listen.mqtt}): MQTT 3.1.1 and 5 clients attach to the router as
 * hosts, beside the bdrp clients, in the one table of hosts; their subscriptions become their
 * predicate through the router's one path for predicate changes, their PUBLISHes go to the data
 * plane as bdrp messages (the mapping of {@code io.bdrp.encoding.mqtt}, see docs/mqtt.md), and the
 * messages delivered to them leave as PUBLISHes. TLS with the client port's certificate when the
 * router has one; users and permissions of {@code auth.clients} (the password is the user's token).
 *
 * <p>Each connection's pipeline: TLS if configured, a flush consolidation, {@link MqttFraming}
 * (which bounds each packet before it is buffered), Netty's MQTT decoder and encoder, and the
 * session ({@link MqttSession}).
 *
 * <p>Owned by the router's event loop.
 */
public final class MqttListener {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(MqttListener.class);

  final RouterCore core;
  final Hosts hosts;
  final PredicateChanges predicates;
  final DataPlane<MessageBytes> dataPlane;
  final OutputBatches batches;
  final MqttMetrics metrics;

  /** JSON payload fields as attributes ({@code mqtt.jsonFields}), or null when off. */
  final MqttJson json;

  /** The shared subscription groups of the port (on the loop). */
  final MqttSharedGroups shared;

  private final Supplier<ClientTls> clientTls;

  /** Each delivered message decoded once for all the MQTT sessions it goes to (on the loop). */
  final MqttDeliveries deliveries;

  /** The message of the PUBLISH being handed to the data plane (on the loop). */
  final MessageBytes publishBytes = new MessageBytes();

  /** The reliable service, for {@code mqtt.confirmedAcks}. */
  final io.bdrp.routing.Reliable<MessageBytes> reliable;

  /** Re-arms the reliable service's timer after a message is handed to it. */
  final Runnable reliableTimer;

  /** The sessions that publish reliably, by publisher id (on the loop). */
  final Map<Long, MqttHost> reliablePublishers = new HashMap<>();

  /** The session of each client identifier connected now (on the loop). */
  final Map<String, MqttSession> byClientId = new HashMap<>();

  /**
   * The wills waiting for their delay or their session's end, by client identifier (on the loop).
   */
  final Map<String, MqttWill.Delayed> delayedWills = new HashMap<>();

  /** The sessions kept while their client is away. */
  final MqttSessions sessions;

  final Metrics.Counter handshakesRefused;
  final Metrics.Counter connectTimeouts;
  final Metrics.Counter keepAliveClosed;
  final Metrics.Counter slowConsumers;
  final Metrics.Counter sessionsRefused;

  /** The router's store of retained messages, a host of its own. */
  final MqttRetainedHost retained;

  /** What the partial packets of the port's connections may hold together. */
  private final io.bdrp.transport.InboundBudget budget;

  /** Connections that have not sent their CONNECT yet (on the loop). */
  int handshaking;

  /**
   * @param clientTls TLS on the client port as now loaded (null: none); the MQTT port serves the
   *     same certificate
   */
  public MqttListener(
      RouterCore core,
      Hosts hosts,
      PredicateChanges predicates,
      DataPlane<MessageBytes> dataPlane,
      io.bdrp.routing.Reliable<MessageBytes> reliable,
      Runnable reliableTimer,
      OutputBatches batches,
      Supplier<ClientTls> clientTls) {
    this.core = core;
    this.reliable = reliable;
    this.reliableTimer = reliableTimer;
    this.hosts = hosts;
    this.predicates = predicates;
    this.dataPlane = dataPlane;
    this.batches = batches;
    this.clientTls = clientTls;
    this.metrics = new MqttMetrics(core.metrics());
    this.handshakesRefused = core.metrics().connectionsClosed("mqtt", "handshakes");
    this.connectTimeouts = core.metrics().connectionsClosed("mqtt", "hello_timeout");
    this.keepAliveClosed = core.metrics().connectionsClosed("mqtt", "keepalive");
    this.slowConsumers = core.metrics().connectionsClosed("mqtt", "slow_consumer");
    this.sessionsRefused = core.metrics().requestsRefused("user_sessions");
    this.budget = new io.bdrp.transport.InboundBudget(core.config().limits().inboundBufferBytes());
    core.metrics().inboundBudget("mqtt", budget);
    this.sessions = new MqttSessions(this);
    this.shared = new MqttSharedGroups(this);
    this.json =
        core.config().mqtt().jsonFields()
            ? new MqttJson(
                core.config().mqtt(),
                core.config().limits().maxFrameBytes() - io.bdrp.transport.Frames.PREFIX_BYTES - 8,
                core.metrics().registry())
            : null;
    this.retained = new MqttRetainedHost(this);
    this.deliveries = new MqttDeliveries(core.loop());
  }

  /**
   * On the loop, before the router's links start: attaches the store of retained messages, so that
   * its predicate is in the first aggregate the router advertises. The future completes once that
   * predicate is set (or refused).
   */
  public CompletableFuture<Void> start() {
    return retained.start();
  }

  /**
   * At start: a WARN if the MQTT port, bound at {@code bound}, speaks plain TCP beyond loopback
   * (passwords, which are tokens, would cross the network in clear), or serves anyone with every
   * permission beyond loopback, as for the client port.
   */
  public void warnExposure(java.net.InetSocketAddress bound) {
    if (bound.getAddress().isLoopbackAddress()) {
      return;
    }
    var config = core.config();
    if (config.clientTls() == null) {
      log.warn(
          "router {}: the MQTT port {} speaks plain TCP beyond loopback: passwords (tokens),"
              + " subscriptions and messages cross the network in clear (set tls.cert and"
              + " tls.key; see docs/security.md)",
          config.router(),
          bound);
    }
    if (config.clientAuth().open()) {
      log.warn(
          "router {}: the MQTT port {} serves any client that reaches it, with every permission:"
              + " the config has no auth.clients (see docs/security.md)",
          config.router(),
          bound);
    }
  }

  /**
   * Where the reliable service's answers to this port's publishers go (with {@code
   * mqtt.confirmedAcks}): the PUBACK or PUBREC of the PUBLISH, once every router of its D has it
   * (reason 0), or once its retention ended without (0x80 for an MQTT 5 client; a 3.1.1 client,
   * which has no reason codes, is answered as if it had been delivered, and the refusal counted). A
   * session whose connection is gone is not answered: its client sends the PUBLISH again.
   */
  public io.bdrp.router.links.LinkOutput.Publishers publishers() {
    return new io.bdrp.router.links.LinkOutput.Publishers() {
      @Override
      public void confirmed(long publisher, long publisherSeq) {
        answer(publisher, publisherSeq, 0);
      }

      @Override
      public void unreached(long publisher, long publisherSeq, long[] unreached) {
        answer(publisher, publisherSeq, 0x80);
      }
    };
  }

  private void answer(long publisher, long publisherSeq, int code) {
    MqttHost host = reliablePublishers.get(publisher);
    if (host == null) {
      return;
    }
    Integer pending = host.awaitingConfirm.remove(publisherSeq);
    if (pending == null) {
      return;
    }
    int qos = pending >>> 16;
    int packetId = pending & 0xFFFF;
    if (code != 0) {
      host.counters.publishRefused("unreached").inc();
    }
    if (qos == 2 && code >= 0x80 && host.v5) {
      host.inboundQos2.clear(packetId); // refused: no PUBREL follows
      host.inboundQos2Count--;
    }
    host.confirmPending.clear(packetId);
    host.acknowledge(qos, packetId, host.v5 ? code : 0);
  }

  /** The pipeline of each connection accepted on the MQTT port. */
  public ChannelInitializer<Channel> initializer() {
    RouterLimits limits = core.config().limits();
    return new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        // One read of at most 64 KiB per turn of the loop (MQTT packets are small: a larger read
        // gathers more of a publisher's packets into one batch, whose deliveries then leave each
        // subscriber's connection in one write), and output bounded by the hosts' water marks.
        ch.config()
            .setRecvByteBufAllocator(
                new AdaptiveRecvByteBufAllocator(64, 2048, 64 * 1024).maxMessagesPerRead(1));
        ch.config()
            .setWriteBufferWaterMark(
                new WriteBufferWaterMark(limits.hostLowWaterBytes(), limits.hostHighWaterBytes()));
        ClientTls tls = clientTls.get();
        if (tls != null) {
          ch.pipeline().addLast(tls.context().newHandler(ch.alloc()));
        }
        MqttFraming framing =
            new MqttFraming(
                Math.min(RouterLimits.HANDSHAKE_FRAME_BYTES, limits.maxFrameBytes()), budget);
        ch.pipeline()
            .addLast(new FlushConsolidationHandler(256, false))
            .addLast("framing", framing)
            .addLast("decoder", new MqttDecoder(limits.maxFrameBytes(), 65_535))
            .addLast("decoded", framing.decodedCount)
            .addLast("encoder", MqttEncoder.INSTANCE)
            .addLast("session", new MqttSession(MqttListener.this));
      }
    };
  }
}
