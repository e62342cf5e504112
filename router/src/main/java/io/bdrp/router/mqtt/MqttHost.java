package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.security.ClientAuth;
import io.netty.channel.Channel;
import java.util.BitSet;

/**
 * An MQTT session as a host of the router: the data plane delivers to it like to any host, and it
 * writes each delivery as a PUBLISH in the session's protocol, at the lower of the QoS the message
 * was published with and the QoS granted to the best of the session's subscriptions it matches; one
 * copy, with the Subscription Identifiers of every matching subscription that has one (MQTT 5). A
 * shared subscription's group ({@link MqttSharedGroup}) hands it its messages apart ({@link
 * #write}), each by that subscription alone.
 *
 * <p><b>In flight.</b> A QoS 1 delivery takes a packet identifier that stays taken until the
 * client's PUBACK; at most {@link #window} are taken at once (the client's receive maximum, at most
 * {@link #MAX_IN_FLIGHT}). A delivery beyond the window, or to a session above its high water mark,
 * is dropped and counted: without persistent sessions nothing is queued for later.
 *
 * <p><b>Expiry.</b> A message with {@code mqtt.expiresAt} is dropped (counted) once that time has
 * passed by this router's clock; before it, an MQTT 5 delivery carries the Message Expiry Interval
 * that remains, in seconds rounded up.
 *
 * <p>Owned by the router's event loop, but for the filters of {@link AttachedHost}, which the
 * control thread keeps.
 */
final class MqttHost extends AttachedHost {
  /** Most QoS 1 deliveries awaiting their PUBACK at once, whatever the client allows. */
  static final int MAX_IN_FLIGHT = 1024;

  private final Channel channel;
  private final boolean v5;
  private final OutputBatches batches;
  private final MqttMetrics.Protocol counters;
  private final Metrics.Counter delivered;
  private final Metrics.Counter dropped;
  private final Metrics.Counter windowFull;
  private final Metrics.Counter tooLarge;
  private final Metrics.Counter noTopic;
  private final Metrics.Counter expired;

  /** The session's subscriptions as now set (replaced on the loop when a change is applied). */
  MqttSubscriptions.Set subscriptions = MqttSubscriptions.Set.EMPTY;

  /** Whether this session's own PUBLISH is being handed to the data plane (for No Local). */
  boolean publishing;

  /** Unacknowledged QoS 1 deliveries allowed at once. */
  final int window;

  /** Largest packet the client takes (its Maximum Packet Size), or 0 for no bound. */
  final int maxPacketBytes;

  private final BitSet inFlight = new BitSet(65_536);
  private int inFlightCount;
  private int nextPacketId = 1;

  MqttHost(
      int id,
      String clientId,
      ClientAuth.Permissions permissions,
      int changesPerSecond,
      Channel channel,
      boolean v5,
      int receiveMaximum,
      int maxPacketBytes,
      OutputBatches batches,
      MqttMetrics metrics) {
    super(id, clientId, permissions, changesPerSecond);
    this.channel = channel;
    this.v5 = v5;
    this.window = Math.min(receiveMaximum, MAX_IN_FLIGHT);
    this.maxPacketBytes = maxPacketBytes;
    this.batches = batches;
    this.counters = v5 ? metrics.mqtt5 : metrics.mqtt3;
    this.delivered = metrics.router().hostDelivered(id, clientId);
    this.dropped = metrics.router().hostDropped(id, clientId);
    this.windowFull = counters.deliveryDropped("inflight_window");
    this.tooLarge = counters.deliveryDropped("too_large");
    this.noTopic = counters.deliveryDropped("no_topic");
    this.expired = counters.deliveryDropped("expired");
  }

  @Override
  public boolean deliver(long messageId, MessageBytes bytes) {
    if (!channel.isActive() || !channel.isWritable()) {
      dropped.inc();
      return false;
    }
    Message m;
    try {
      m = MessageCodec.decode(bytes.buf.nioBuffer(bytes.offset, bytes.length));
    } catch (CodecException e) {
      dropped.inc(); // checked where it entered the federation: not seen in practice
      return false;
    }
    return write(m, null);
  }

  /**
   * Whether a delivery at {@code qos} can be written now: the connection is open and below its high
   * water mark and, for QoS 1, the in-flight window has room. A shared subscription's group ({@link
   * MqttSharedGroup}) chooses among the members that can.
   */
  boolean canTake(int qos) {
    return channel.isActive() && channel.isWritable() && (qos == 0 || inFlightCount < window);
  }

  /**
   * Writes {@code m} as a PUBLISH: by the session's own subscriptions, or, with {@code shared}, by
   * that shared subscription alone (its granted QoS and identifier), for its group. False, counted,
   * when it is dropped.
   */
  boolean write(Message m, MqttSubscriptions.Sub shared) {
    String topic = MqttTopic.of(m);
    if (topic == null) {
      noTopic.inc();
      dropped.inc();
      return false;
    }
    long expiresAt = io.bdrp.encoding.mqtt.MqttPublish.expiresAt(m);
    long expirySeconds = -1;
    if (expiresAt != Long.MAX_VALUE) {
      long remainingMs = expiresAt - System.currentTimeMillis();
      if (remainingMs <= 0) {
        expired.inc(); // MQTT-3.3.2-5
        dropped.inc();
        return false;
      }
      expirySeconds = (remainingMs + 999) / 1000; // MQTT-3.3.2-6: what remains, rounded up
    }
    MqttSubscriptions.Match match =
        shared == null
            ? subscriptions.match(m, publishing)
            : new MqttSubscriptions.Match(
                shared.granted(),
                shared.subscriptionId() == 0
                    ? MqttSubscriptions.Match.NO_IDS
                    : new int[] {shared.subscriptionId()});
    if (match.granted() < 0) {
      return true; // only No Local subscriptions match the session's own message: not for it
    }
    int qos = Math.min(match.granted(), io.bdrp.encoding.mqtt.MqttPublish.qos(m));
    int[] ids = match.subscriptionIds();
    if (maxPacketBytes > 0 && estimatedBytes(m, topic) + 5L * ids.length > maxPacketBytes) {
      tooLarge.inc();
      dropped.inc();
      return false;
    }
    int packetId = 0;
    if (qos > 0) {
      if (inFlightCount >= window) {
        windowFull.inc();
        dropped.inc();
        return false;
      }
      packetId = takePacketId();
    }
    channel.write(
        MqttPublishes.toPublish(m, topic, qos, packetId, v5, ids, expirySeconds),
        channel.voidPromise());
    batches.flushLater(channel);
    delivered.inc();
    return true;
  }

  /** A packet identifier not in flight now, taken. */
  private int takePacketId() {
    while (inFlight.get(nextPacketId)) {
      nextPacketId = nextPacketId == 65_535 ? 1 : nextPacketId + 1;
    }
    int id = nextPacketId;
    inFlight.set(id);
    inFlightCount++;
    nextPacketId = id == 65_535 ? 1 : id + 1;
    return id;
  }

  /**
   * The client's PUBACK for {@code packetId}: the identifier is free again. False if it was not in
   * flight.
   */
  boolean acknowledged(int packetId) {
    if (packetId < 1 || packetId > 65_535 || !inFlight.get(packetId)) {
      return false;
    }
    inFlight.clear(packetId);
    inFlightCount--;
    return true;
  }

  /**
   * An upper bound of the PUBLISH's size: fixed header, topic, packet identifier, payload and, in
   * MQTT 5, the properties it may carry (each attribute but the topic's levels, generously).
   */
  private long estimatedBytes(Message m, String topic) {
    long n = 5 + 2 + 3L * topic.length() + 2 + 4 + m.bodyLength();
    if (v5) {
      for (int i = 0; i < m.size(); i++) {
        if (!m.name(i).startsWith(MqttTopic.LEVEL)) {
          n += 4 + 3L * m.name(i).length() + 4L * m.value(i).toString().length();
        }
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return "MQTT client " + id + " (" + name + ") at " + channel.remoteAddress();
  }
}
