package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttRetained;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.MessageBytes;
import io.bdrp.router.OutputBatches;
import io.bdrp.router.config.HostLimits;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.security.ClientAuth;
import io.netty.channel.Channel;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * An MQTT session as a host of the router: the data plane delivers to it like to any host, and it
 * writes each delivery as a PUBLISH in the session's protocol, at the lower of the QoS the message
 * was published with and the QoS granted to the best of the session's subscriptions it matches; one
 * copy, with the Subscription Identifiers of every matching subscription that has one (MQTT 5). A
 * shared subscription's group ({@link MqttSharedGroup}) hands it its messages apart ({@link
 * #write}), each by that subscription alone.
 *
 * <p><b>In flight.</b> A QoS 1 or 2 delivery takes a packet identifier that stays taken until the
 * client's PUBACK (QoS 1) or PUBCOMP (QoS 2: PUBLISH, PUBREC, PUBREL, PUBCOMP; a PUBREC with a
 * failure reason, 0x80 or above, ends the flow too, MQTT-4.3.3); at most {@link #window} are taken
 * at once (the client's receive maximum, at most {@link #MAX_IN_FLIGHT}; MQTT-3.3.4-9).
 *
 * <p><b>Kept sessions.</b> A session whose {@link #expirySeconds} is above 0 outlives its
 * connection ({@link MqttSessions}): while its client is away ({@link #channel} null) it stays a
 * host with its predicate, its QoS 1 and 2 deliveries are queued in order and its QoS 0 deliveries
 * dropped (counted, {@code absent_qos0}); while it is connected, deliveries beyond the window or
 * above the high water mark are queued too. The queue holds at most {@link
 * HostLimits#mqttQueuedMessages()} deliveries, and the queue and the deliveries in flight together
 * at most {@link HostLimits#mqttQueuedBytes()} bytes (each message counted as its bdrp encoding;
 * one larger delivery is taken when the session holds nothing else, so that any message that fits a
 * frame can reach it); beyond, a delivery is dropped and counted ({@code queue_messages}, {@code
 * queue_bytes}). When its client comes back ({@link #resume}), the deliveries in flight are sent
 * again first, in the order they were first sent: a PUBLISH not acknowledged with DUP set
 * (MQTT-4.4.0-1), a PUBREL for a QoS 2 delivery whose PUBREC came; then the queue, in order, within
 * the window.
 *
 * <p>A session that is not kept has no queue: a delivery beyond the window, or to a session above
 * its high water mark, is dropped and counted.
 *
 * <p><b>Expiry.</b> A message with {@code mqtt.expiresAt} is dropped (counted) once that time has
 * passed by this router's clock, when it is delivered and again when it leaves the queue; before
 * it, an MQTT 5 delivery carries the Message Expiry Interval that remains, in seconds rounded up.
 *
 * <p><b>Inbound QoS 2.</b> The packet identifiers of the client's QoS 2 PUBLISHes awaiting their
 * PUBREL ({@link #inboundQos2}) are part of the session too, so that a PUBLISH sent again after a
 * reconnection is not forwarded twice; {@link MqttInbound} keeps them.
 *
 * <p>Owned by the router's event loop, but for the filters of {@link AttachedHost}, which the
 * control thread keeps.
 */
final class MqttHost extends AttachedHost {
  /** Most QoS 1 and 2 deliveries awaiting their acknowledgement at once, whatever the client. */
  static final int MAX_IN_FLIGHT = 1024;

  private static final int PACKET_ID_NOT_FOUND = 0x92;

  /** A QoS 1 or 2 delivery queued or in flight. */
  private static final class Delivery {
    Message message; // null once a QoS 2 delivery's PUBREC came: only its identifier is kept
    final String topic;
    final int qos;
    final int[] subscriptionIds;
    final long expiresAt;
    final int bytes;
    final boolean retain; // sent with RETAIN 1
    boolean released; // QoS 2: the PUBREC came, the PUBREL went

    Delivery(
        Message message,
        String topic,
        int qos,
        int[] ids,
        long expiresAt,
        int bytes,
        boolean retain) {
      this.retain = retain;
      this.message = message;
      this.topic = topic;
      this.qos = qos;
      this.subscriptionIds = ids;
      this.expiresAt = expiresAt;
      this.bytes = bytes;
    }
  }

  final boolean v5;
  private final OutputBatches batches;
  private final MqttDeliveries deliveries;
  private final HostLimits limits;
  final MqttMetrics.Protocol counters;
  private final Metrics.Counter delivered;
  private final Metrics.Counter dropped;
  private final Metrics.Counter windowFull;
  private final Metrics.Counter tooLarge;
  private final Metrics.Counter noTopic;
  private final Metrics.Counter expired;
  private final Metrics.Counter absentQos0;
  private final Metrics.Counter queueMessages;
  private final Metrics.Counter queueBytes;
  private final Metrics.Counter queued1;
  private final Metrics.Counter queued2;

  /** The connection now, or null while the client is away. */
  private Channel channel;

  /** The session's subscriptions as now set (replaced on the loop when a change is applied). */
  MqttSubscriptions.Set subscriptions = MqttSubscriptions.Set.EMPTY;

  /** Whether this session's own PUBLISH is being handed to the data plane (for No Local). */
  boolean publishing;

  /** Unacknowledged QoS 1 and 2 deliveries allowed at once (the connection's). */
  int window;

  /** Largest packet the client takes (its Maximum Packet Size), or 0 for no bound. */
  int maxPacketBytes;

  /**
   * How long the session is kept after its connection ends, in seconds (0: it ends with it). The
   * CONNECT sets it, an MQTT 5 DISCONNECT may change it; at most {@link
   * HostLimits#mqttSessionExpiryMaxSeconds()}.
   */
  long expirySeconds;

  /** The client's QoS 2 PUBLISHes forwarded and awaiting their PUBREL, by packet identifier. */
  final BitSet inboundQos2 = new BitSet(65_536);

  int inboundQos2Count;

  /** Whether the session has ended: no longer a host of the router. */
  boolean ended;

  /** The timer that ends the session while its client is away (on the loop), or null. */
  ScheduledFuture<?> expiry;

  /** Most retained messages waiting to be sent to a session. */
  static final int MAX_RETAINED_BACKLOG = MqttRetainedStore.MAX_ENTRIES;

  /** A retained message waiting to be sent, and the subscription it is sent for. */
  private record Retained(Message message, MqttSubscriptions.Sub sub) {}

  private final ArrayDeque<Retained> retainedBacklog = new ArrayDeque<>();
  private final Metrics.Counter retainedSent;
  private final Metrics.Counter retainedDropped;

  /**
   * With {@code mqtt.confirmedAcks}: the publisher id of this session's reliable PUBLISHes, random
   * and its own, and their numbering.
   */
  final long reliablePublisher = MqttHost.newPublisherId();

  long reliableSeq;

  /**
   * With {@code mqtt.confirmedAcks}: the QoS 1 and 2 PUBLISHes of the client sent reliably and not
   * yet confirmed, by their number: {@code qos << 16 | packet identifier}, answered (PUBACK,
   * PUBREC) when the federation confirms them.
   */
  final java.util.Map<Long, Integer> awaitingConfirm = new java.util.HashMap<>();

  /** Packet identifiers of the client's PUBLISHes awaiting the federation's confirmation. */
  final BitSet confirmPending = new BitSet(65_536);

  /**
   * Answers the client's PUBLISH {@code packetId} of QoS {@code qos} (PUBACK, or PUBREC for QoS 2)
   * with reason {@code code}, if its connection is up; written in order with its output.
   */
  void acknowledge(int qos, int packetId, int code) {
    if (channel == null || !channel.isActive()) {
      return;
    }
    batches.write(
        channel,
        MqttInbound.pubReply(
            qos == 1 ? MqttMessageType.PUBACK : MqttMessageType.PUBREC, packetId, code));
  }

  private static long newPublisherId() {
    long id;
    do {
      id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
    } while (id == 0);
    return id;
  }

  private final LinkedHashMap<Integer, Delivery> inFlight = new LinkedHashMap<>();
  private final ArrayDeque<Delivery> queue = new ArrayDeque<>();
  private long heldBytes; // of the queue and of the deliveries in flight with their message
  private int nextPacketId = 1;

  MqttHost(
      int id,
      String clientId,
      ClientAuth.Permissions permissions,
      HostLimits limits,
      Channel channel,
      boolean v5,
      int receiveMaximum,
      int maxPacketBytes,
      OutputBatches batches,
      MqttDeliveries deliveries,
      MqttMetrics metrics) {
    super(id, clientId, permissions, limits.predicateChangesPerSecond());
    this.deliveries = deliveries;
    this.limits = limits;
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
    this.absentQos0 = counters.deliveryDropped("absent_qos0");
    this.queueMessages = counters.deliveryDropped("queue_messages");
    this.queueBytes = counters.deliveryDropped("queue_bytes");
    this.queued1 = counters.queued(1);
    this.queued2 = counters.queued(2);
    this.retainedDropped = counters.deliveryDropped("retained_backlog");
    this.retainedSent = counters.retainedSent;
  }

  @Override
  public String protocol() {
    return v5 ? "mqtt5" : "mqtt3";
  }

  @Override
  public java.net.SocketAddress remoteAddress() {
    return channel == null ? null : channel.remoteAddress();
  }

  @Override
  public long delivered() {
    return delivered.get();
  }

  @Override
  public long dropped() {
    return dropped.get();
  }

  /** Whether the session outlives its connection. */
  boolean kept() {
    return expirySeconds > 0;
  }

  /** Whether {@code ch} is the session's connection now. */
  boolean connectedTo(Channel ch) {
    return channel == ch;
  }

  @Override
  public boolean deliver(long messageId, MessageBytes bytes) {
    if (channel == null ? !kept() : !kept() && (!channel.isActive() || !channel.isWritable())) {
      dropped.inc();
      return false;
    }
    Message m;
    try {
      m = deliveries.decode(messageId, bytes);
    } catch (CodecException e) {
      dropped.inc(); // checked where it entered the federation: not seen in practice
      return false;
    }
    return write(m, bytes.length, null);
  }

  /**
   * Whether a delivery at {@code qos} can be written now: the connection is open and below its high
   * water mark and, for QoS 1, the in-flight window has room. A shared subscription's group ({@link
   * MqttSharedGroup}) chooses among the members that can.
   */
  boolean canTake(int qos) {
    return channel != null
        && channel.isActive()
        && channel.isWritable()
        && (qos == 0 || inFlight.size() < window);
  }

  /**
   * Writes {@code m} as a PUBLISH: by the session's own subscriptions, or, with {@code shared}, by
   * that shared subscription alone (its granted QoS and identifier), for its group. {@code bytes}
   * is the length of its bdrp encoding (what a kept session's queue counts). False, counted, when
   * it is dropped.
   */
  boolean write(Message m, int bytes, MqttSubscriptions.Sub shared) {
    String topic = MqttTopic.of(m);
    if (topic == null) {
      return drop(noTopic);
    }
    long expiresAt = MqttPublish.expiresAt(m);
    if (expiresAt != Long.MAX_VALUE && expiresAt <= System.currentTimeMillis()) {
      return drop(expired); // MQTT-3.3.2-5
    }
    MqttSubscriptions.Match match =
        shared == null
            ? subscriptions.match(m, publishing)
            : new MqttSubscriptions.Match(
                shared.granted(),
                shared.subscriptionId() == 0
                    ? MqttSubscriptions.Match.NO_IDS
                    : new int[] {shared.subscriptionId()},
                shared.retainAsPublished());
    if (match.granted() < 0) {
      return true; // only No Local subscriptions match the session's own message: not for it
    }
    int qos = Math.min(match.granted(), MqttPublish.qos(m));
    int[] ids = match.subscriptionIds();
    // A live delivery has RETAIN 0 (MQTT-3.3.1-12), unless Retain As Published (MQTT-3.3.1-13).
    boolean retain = v5 && match.retainAsPublished() && MqttRetained.isRetained(m);
    if (qos == 0) {
      if (channel == null) {
        return drop(absentQos0);
      }
      if (!channel.isActive() || !channel.isWritable()) {
        dropped.inc();
        return false;
      }
      if (tooLarge(m, topic, ids)) {
        return drop(tooLarge);
      }
      if (ids.length == 0 && expiresAt == Long.MAX_VALUE) {
        // The same bytes as every other session of this protocol that takes it so.
        batches.copy(channel, deliveries.publishQos0(m, topic, v5, retain));
      } else {
        write(m, topic, 0, 0, ids, expiresAt, false, retain);
      }
      delivered.inc();
      return true;
    }
    Delivery d = new Delivery(m, topic, qos, ids, expiresAt, bytes, retain);
    if (kept()) {
      return enqueue(d);
    }
    if (tooLarge(m, topic, ids)) {
      return drop(tooLarge);
    }
    if (inFlight.size() >= window) {
      return drop(windowFull);
    }
    heldBytes += d.bytes;
    send(d);
    batches.flushLater(channel);
    delivered.inc();
    return true;
  }

  private boolean drop(Metrics.Counter reason) {
    reason.inc();
    dropped.inc();
    return false;
  }

  /**
   * A kept session's delivery: sent now if nothing waits before it and the client can take it, else
   * queued within the session's bounds.
   */
  private boolean enqueue(Delivery d) {
    if (heldBytes > 0 && heldBytes + d.bytes > limits.mqttQueuedBytes()) {
      return drop(queueBytes); // one delivery larger than the bound is taken when nothing is held
    }
    if (queue.isEmpty()
        && channel != null
        && inFlight.size() < window
        && channel.isActive()
        && channel.isWritable()) {
      if (tooLarge(d.message, d.topic, d.subscriptionIds)) {
        return drop(tooLarge);
      }
      heldBytes += d.bytes;
      send(d);
      batches.flushLater(channel);
      delivered.inc();
      return true;
    }
    if (queue.size() >= limits.mqttQueuedMessages()) {
      return drop(queueMessages);
    }
    queue.add(d);
    heldBytes += d.bytes;
    (d.qos == 1 ? queued1 : queued2).inc();
    drain();
    return true;
  }

  /**
   * Sends queued deliveries, in order, while the client is connected, below its high water mark and
   * within its window. A delivery whose message expired meanwhile, or which is above the client's
   * maximum packet size, is dropped and counted.
   */
  void drain() {
    if (channel == null) {
      return;
    }
    boolean wrote = false;
    while (!queue.isEmpty()
        && inFlight.size() < window
        && channel.isActive()
        && channel.isWritable()) {
      Delivery d = queue.poll();
      if (d.expiresAt != Long.MAX_VALUE && d.expiresAt <= System.currentTimeMillis()) {
        heldBytes -= d.bytes;
        drop(expired);
        continue;
      }
      if (tooLarge(d.message, d.topic, d.subscriptionIds)) {
        heldBytes -= d.bytes;
        drop(tooLarge);
        continue;
      }
      send(d);
      delivered.inc();
      wrote = true;
    }
    if (wrote) {
      batches.flushLater(channel);
    }
    if (queue.isEmpty() && !retainedBacklog.isEmpty()) {
      resumeRetained();
    }
  }

  /**
   * The retained messages a new subscription {@code s} matches, to be sent with RETAIN 1
   * (MQTT-3.3.1-8 of MQTT 5 and of 3.1.1): as many as the connection and the in-flight window take
   * now, the rest as they drain (after the session's queue), so that a large store costs the
   * session references, not buffered bytes. At most {@link #MAX_RETAINED_BACKLOG} wait.
   */
  void deliverRetained(java.util.List<Message> messages, MqttSubscriptions.Sub s) {
    for (Message m : messages) {
      if (retainedBacklog.size() >= MAX_RETAINED_BACKLOG) {
        drop(retainedDropped);
        continue;
      }
      retainedBacklog.add(new Retained(m, s));
    }
    if (queue.isEmpty()) {
      resumeRetained();
    }
  }

  /**
   * Sends the retained messages waiting, while the connection and the in-flight window take them.
   */
  private void resumeRetained() {
    boolean wrote = false;
    while (!retainedBacklog.isEmpty()
        && channel != null
        && channel.isActive()
        && channel.isWritable()) {
      Retained r = retainedBacklog.peek();
      int qos = Math.min(r.sub.granted(), MqttPublish.qos(r.message));
      if (qos > 0 && inFlight.size() >= window) {
        break; // resumed by the next acknowledgement
      }
      retainedBacklog.poll();
      Message m = r.message;
      String topic = MqttTopic.of(m);
      long expiresAt = MqttPublish.expiresAt(m);
      if (expiresAt != Long.MAX_VALUE && expiresAt <= System.currentTimeMillis()) {
        drop(expired); // MQTT-3.3.2-5
        continue;
      }
      int[] ids =
          r.sub.subscriptionId() != 0
              ? new int[] {r.sub.subscriptionId()}
              : MqttSubscriptions.Match.NO_IDS;
      if (tooLarge(m, topic, ids)) {
        drop(tooLarge);
        continue;
      }
      if (qos == 0) {
        write(m, topic, 0, 0, ids, expiresAt, false, true);
      } else {
        Delivery d =
            new Delivery(
                m,
                topic,
                qos,
                ids,
                expiresAt,
                io.bdrp.encoding.codec.MessageCodec.encodedLength(m),
                true);
        heldBytes += d.bytes;
        send(d);
      }
      retainedSent.inc();
      delivered.inc();
      wrote = true;
    }
    if (wrote) {
      batches.flushLater(channel);
    }
  }

  /** Sends {@code d} with a packet identifier of its own, in flight from now. */
  private void send(Delivery d) {
    int packetId = takePacketId();
    inFlight.put(packetId, d);
    write(d.message, d.topic, d.qos, packetId, d.subscriptionIds, d.expiresAt, false, d.retain);
  }

  private void write(
      Message m,
      String topic,
      int qos,
      int packetId,
      int[] ids,
      long expiresAt,
      boolean dup,
      boolean retain) {
    long expirySeconds = -1;
    if (expiresAt != Long.MAX_VALUE) {
      // MQTT-3.3.2-6: what remains, rounded up (at least 1 for a message sent again late).
      expirySeconds = Math.max(1, (expiresAt - System.currentTimeMillis() + 999) / 1000);
    }
    MqttPublishMessage p =
        MqttPublishes.toPublish(
            m,
            topic,
            qos,
            packetId,
            v5 ? deliveries.properties(m) : null,
            ids,
            expirySeconds,
            retain);
    if (dup) {
      p =
          new MqttPublishMessage(
              new MqttFixedHeader(MqttMessageType.PUBLISH, true, MqttQoS.valueOf(qos), retain, 0),
              p.variableHeader(),
              p.payload());
    }
    batches.write(channel, p);
  }

  private boolean tooLarge(Message m, String topic, int[] ids) {
    return maxPacketBytes > 0 && estimatedBytes(m, topic) + 5L * ids.length > maxPacketBytes;
  }

  /** A packet identifier not in flight now. */
  private int takePacketId() {
    while (inFlight.containsKey(nextPacketId)) {
      nextPacketId = nextPacketId == 65_535 ? 1 : nextPacketId + 1;
    }
    int id = nextPacketId;
    nextPacketId = id == 65_535 ? 1 : id + 1;
    return id;
  }

  /**
   * The client's PUBACK for {@code packetId}: the QoS 1 delivery is done and the identifier free.
   * False if no QoS 1 delivery was in flight with it.
   */
  boolean acknowledged(int packetId) {
    Delivery d = inFlight.get(packetId);
    if (d == null || d.qos != 1) {
      return false;
    }
    done(packetId, d);
    return true;
  }

  /**
   * The client's PUBREC for {@code packetId} with {@code reasonCode}: the PUBREL goes, and the
   * identifier stays taken until the PUBCOMP; a failure reason (0x80 or above) ends the delivery
   * and frees the identifier (MQTT-4.3.3). A PUBREC for an identifier not in flight is answered
   * with a PUBREL, 0x92 (Packet Identifier not found) in MQTT 5.
   */
  void pubrec(int packetId, int reasonCode) {
    Delivery d = inFlight.get(packetId);
    if (d == null || d.qos != 2) {
      pubrel(packetId, v5 ? PACKET_ID_NOT_FOUND : 0);
    } else if (reasonCode >= 0x80) {
      done(packetId, d);
    } else {
      if (!d.released) {
        d.released = true;
        d.message = null;
        heldBytes -= d.bytes;
      }
      pubrel(packetId, 0);
    }
    if (channel != null) {
      batches.flushLater(channel);
    }
  }

  /** The client's PUBCOMP for {@code packetId}: the QoS 2 delivery is done, the identifier free. */
  void pubcomp(int packetId) {
    Delivery d = inFlight.get(packetId);
    if (d != null && d.released) {
      done(packetId, d);
    }
  }

  private void done(int packetId, Delivery d) {
    inFlight.remove(packetId);
    if (!d.released) {
      heldBytes -= d.bytes;
    }
    drain();
  }

  private void pubrel(int packetId, int reasonCode) {
    if (channel == null) {
      return;
    }
    batches.write(channel, MqttInbound.pubReply(MqttMessageType.PUBREL, packetId, reasonCode));
  }

  /** The connection ended: the session, if kept, holds its deliveries for its client's return. */
  void away() {
    channel = null;
    if (!kept()) {
      inFlight.clear();
      queue.clear();
      retainedBacklog.clear();
      heldBytes = 0;
    }
  }

  /**
   * The client is back on {@code ch} (Clean Start 0) with the window and maximum packet size of its
   * new CONNECT: what was in flight is sent again, in its order (PUBLISH with DUP, MQTT-4.4.0-1; or
   * PUBREL), then the queue within the window. Runs after the CONNACK is written.
   */
  void resume(Channel ch, int receiveMaximum, int maxPacketBytes) {
    this.channel = ch;
    this.window = Math.min(receiveMaximum, MAX_IN_FLIGHT);
    this.maxPacketBytes = maxPacketBytes;
  }

  /** Sends again what is in flight, then the queue (after the CONNACK of a resumed session). */
  void sendAgain() {
    for (var e : inFlight.entrySet()) {
      Delivery d = e.getValue();
      if (d.released) {
        pubrel(e.getKey(), 0);
      } else {
        write(
            d.message, d.topic, d.qos, e.getKey(), d.subscriptionIds, d.expiresAt, true, d.retain);
      }
    }
    drain();
    batches.flushLater(channel);
  }

  /** Deliveries queued now. */
  int queued() {
    return queue.size();
  }

  /**
   * The session ends: what it held is let go; returns how many queued or unacknowledged deliveries
   * that was.
   */
  int discard() {
    int n = queue.size();
    for (Iterator<Delivery> i = inFlight.values().iterator(); i.hasNext(); ) {
      if (!i.next().released) {
        n++;
      }
    }
    n += retainedBacklog.size();
    queue.clear();
    inFlight.clear();
    retainedBacklog.clear();
    heldBytes = 0;
    return n;
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
    return "MQTT client "
        + id
        + " ("
        + name
        + ") at "
        + (channel == null ? "(away)" : channel.remoteAddress());
  }
}
