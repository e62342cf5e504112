package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * What an MQTT client sends: its PUBLISHes, handed to the data plane as bdrp messages ({@link
 * MqttPublishes}) once they pass the user's publish permission, and acknowledged as their QoS asks
 * (PUBACK; PUBREC, then PUBCOMP for the PUBREL); and its SUBSCRIBE and UNSUBSCRIBE packets, checked
 * and handed to {@link MqttSubscriptions}.
 *
 * <p><b>QoS 2</b> is delivered once: the message goes to the data plane when its PUBLISH first
 * arrives and its packet identifier is held until the PUBREL; a PUBLISH that comes again with that
 * identifier meanwhile (a DUP) is answered with PUBREC and not forwarded again. At most {@link
 * MqttConnect#RECEIVE_MAXIMUM} identifiers are held (the Receive Maximum announced; more end the
 * session, 0x93). The identifiers held are the session's ({@link MqttHost#inboundQos2}): a kept
 * session keeps them while its client is away, so that a PUBLISH sent again after it comes back is
 * not forwarded twice, and its PUBREL is answered with PUBCOMP.
 *
 * <p><b>Topic aliases</b> of the client (MQTT 5): up to {@link MqttConnect#TOPIC_ALIAS_MAXIMUM} per
 * session, as the CONNACK announces; they live as long as the connection (MQTT-3.3.2-7).
 *
 * <p>Refused PUBLISHes (outside the publish permission, or too large for a bdrp message) are
 * counted and dropped; an MQTT 5 client gets the reason code in its PUBACK or PUBREC (0x87, 0x83),
 * a 3.1.1 client, which has none, a positive acknowledgement (MQTT-3.3.5-2).
 *
 * <p>Owned by the router's event loop.
 */
final class MqttInbound {
  private static final int NOT_AUTHORIZED = 0x87;
  private static final int IMPLEMENTATION_SPECIFIC = 0x83;
  private static final int PACKET_ID_NOT_FOUND = 0x92;
  private static final int QUOTA_EXCEEDED = 0x97;

  /**
   * The name of a SUBSCRIBE's user property that carries a content filter for each of its topic
   * filters (MQTT 5), for clients that cannot write {@code filter?predicate} (a topic filter ending
   * in {@code #} cannot be followed by anything in clients that check filters).
   */
  static final String FILTER_PROPERTY = "bdrp.filter";

  /** The largest Subscription Identifier: the largest Variable Byte Integer (MQTT 5 §1.5.5). */
  static final int MAX_SUBSCRIPTION_ID = 268_435_455;

  private final MqttListener listener;
  private final MqttHost host;
  private final ChannelHandlerContext ctx;
  private final boolean v5;
  private final MqttMetrics.Protocol counters;
  private final Metrics.Counter forbidden;
  private final Metrics.Counter unmappable;
  private final Metrics.Counter retainedFull;

  /** The topic each alias of the client stands for (index 1 to the maximum), or null. */
  private final String[] aliases = new String[MqttConnect.TOPIC_ALIAS_MAXIMUM + 1];

  MqttInbound(
      MqttListener listener,
      MqttHost host,
      ChannelHandlerContext ctx,
      boolean v5,
      MqttMetrics.Protocol counters) {
    this.listener = listener;
    this.host = host;
    this.ctx = ctx;
    this.v5 = v5;
    this.counters = counters;
    this.forbidden = counters.publishRefused("publish_permission");
    this.unmappable = counters.publishRefused("unmappable");
    this.retainedFull = counters.publishRefused("retained_full");
  }

  void publish(MqttPublishMessage p) {
    int qos = p.fixedHeader().qosLevel().value();
    int id = p.variableHeader().packetId();
    counters.publishes(qos).inc();
    MqttProperties props = p.variableHeader().properties();
    if (v5 && props != null && props.getProperty(MqttProperties.SUBSCRIPTION_IDENTIFIER) != null) {
      throw new MqttFault( // MQTT-3.3.4-6
          MqttFault.PROTOCOL_ERROR, "a PUBLISH from a client with a subscription identifier");
    }
    String topic = p.variableHeader().topicName();
    if (v5
        && props != null
        && props.getProperty(MqttProperties.TOPIC_ALIAS)
            instanceof MqttProperties.IntegerProperty a) {
      topic = aliased(a.value(), topic);
    }
    try {
      MqttTopic.checkName(topic);
    } catch (IllegalArgumentException e) {
      throw new MqttFault(MqttFault.TOPIC_NAME_INVALID, e.getMessage());
    }
    boolean confirmed = qos >= 1 && listener.core.config().mqtt().confirmedAcks();
    if (confirmed && host.confirmPending.get(id)) {
      return; // a DUP of a PUBLISH on its way: answered when the federation confirms it
    }
    if (qos == 2) {
      if (host.inboundQos2.get(id)) {
        reply(MqttMessageType.PUBREC, id, 0); // a DUP of a message forwarded already
        return;
      }
      if (host.inboundQos2Count >= MqttConnect.RECEIVE_MAXIMUM) {
        throw new MqttFault(
            MqttFault.RECEIVE_MAXIMUM_EXCEEDED,
            "more than " + MqttConnect.RECEIVE_MAXIMUM + " QoS 2 PUBLISHes unanswered");
      }
    }
    int code = forward(p, topic, confirmed ? qos : 0, id);
    if (code == PENDING) {
      return; // answered when the federation confirms it (MqttListener.publishers)
    }
    if (qos == 1) {
      reply(MqttMessageType.PUBACK, id, code);
    } else if (qos == 2) {
      if (code < 0x80) {
        host.inboundQos2.set(id);
        host.inboundQos2Count++;
      }
      reply(MqttMessageType.PUBREC, id, code);
    }
  }

  /**
   * The topic of a PUBLISH with topic alias {@code alias} (MQTT 5 §3.3.2.3.4): a topic name sets
   * the alias to it, an empty one uses the topic the alias was set to. An alias of 0 or above
   * {@link MqttConnect#TOPIC_ALIAS_MAXIMUM}, or one not set with an empty topic name, ends the
   * session with 0x94 (Topic Alias invalid; MQTT-3.3.2-8, MQTT-3.3.2-9 and §3.3.4).
   */
  private String aliased(int alias, String topic) {
    if (alias < 1 || alias > MqttConnect.TOPIC_ALIAS_MAXIMUM) {
      throw new MqttFault(
          MqttFault.TOPIC_ALIAS_INVALID,
          "topic alias " + alias + ", not in 1.." + MqttConnect.TOPIC_ALIAS_MAXIMUM);
    }
    if (topic == null || topic.isEmpty()) {
      String set = aliases[alias];
      if (set == null) {
        throw new MqttFault(
            MqttFault.TOPIC_ALIAS_INVALID,
            "topic alias " + alias + " with an empty topic name, though it was never set");
      }
      return set;
    }
    aliases[alias] = topic; // checked below; a session ends at a name that is not valid
    return topic;
  }

  /** The client's PUBREL: the identifier is released, PUBCOMP. */
  void released(int id) {
    boolean held = id >= 1 && id <= 65_535 && host.inboundQos2.get(id);
    if (held) {
      host.inboundQos2.clear(id);
      host.inboundQos2Count--;
    }
    reply(MqttMessageType.PUBCOMP, id, held ? 0 : PACKET_ID_NOT_FOUND);
  }

  /** {@link #forward}'s answer for a PUBLISH handed to the reliable service, not answered yet. */
  private static final int PENDING = -1;

  /**
   * Hands the PUBLISH to the data plane, or with {@code reliableQos} 1 or 2 to the reliable service
   * as the session's next numbered message; returns its reason code (0: success), or {@link
   * #PENDING} when it is answered on confirmation.
   */
  private int forward(MqttPublishMessage p, String topic, int reliableQos, int packetId) {
    Message m;
    try {
      m = MqttPublishes.toMessage(p, topic, System.currentTimeMillis(), listener.json);
    } catch (IllegalArgumentException e) {
      unmappable.inc();
      return IMPLEMENTATION_SPECIFIC;
    }
    if (!host.permissions.mayPublish(m)) {
      forbidden.inc();
      return NOT_AUTHORIZED;
    }
    if (p.fixedHeader().isRetain()) {
      Message stamped;
      try {
        stamped = listener.retained.store.stamp(m, System.currentTimeMillis());
      } catch (IllegalArgumentException e) {
        unmappable.inc(); // no room for the stamp's three attributes
        return IMPLEMENTATION_SPECIFIC;
      }
      if (stamped == null) {
        retainedFull.inc();
        return QUOTA_EXCEEDED;
      }
      m = stamped;
    }
    if (reliableQos > 0) {
      return toReliable(m, reliableQos, packetId);
    }
    host.publishing = true;
    try {
      if (!toDataPlane(listener, m)) {
        unmappable.inc(); // its topic's levels, as attributes, make it larger than a frame
        return IMPLEMENTATION_SPECIFIC;
      }
      host.published();
    } finally {
      host.publishing = false;
    }
    return 0;
  }

  /**
   * Hands {@code m} to the reliable service as the session's next numbered message, to be answered
   * once every router of its D has it; a QoS 2 identifier is held from now on (a DUP is not
   * forwarded again). QUOTA_EXCEEDED while the router's reliable retention is full.
   */
  private int toReliable(Message m, int qos, int packetId) {
    int length = MessageCodec.encodedLength(m);
    if (length > listener.core.config().limits().maxFrameBytes() - Frames.PREFIX_BYTES - 24) {
      unmappable.inc();
      return IMPLEMENTATION_SPECIFIC;
    }
    if (!listener.reliable.hasRoom(length)) {
      counters.publishRefused(listener.reliable.ready() ? "retention_full" : "not_ready").inc();
      return QUOTA_EXCEEDED;
    }
    long seq = ++host.reliableSeq;
    host.awaitingConfirm.put(seq, qos << 16 | packetId);
    host.confirmPending.set(packetId);
    if (qos == 2) {
      host.inboundQos2.set(packetId);
      host.inboundQos2Count++;
    }
    listener.reliablePublishers.put(host.reliablePublisher, host);
    host.publishing = true;
    ByteBuf buf = encoded(listener, m, length);
    try {
      listener.reliable.publish(m, listener.publishBytes, host.reliablePublisher, seq);
      host.published();
    } finally {
      host.publishing = false;
      released(listener, buf);
    }
    listener.reliableTimer.run();
    return PENDING;
  }

  /**
   * Encodes {@code m} ({@code length} bytes) into {@link MqttListener#publishBytes}, for the data
   * plane or the reliable service, with the message known to the port's deliveries meanwhile
   * (decoded once for its MQTT subscribers); the caller hands it over, then calls {@link #released}
   * with the buffer returned.
   */
  private static ByteBuf encoded(MqttListener listener, Message m, int length) {
    ByteBuf buf = io.netty.buffer.ByteBufAllocator.DEFAULT.heapBuffer(length, length);
    try {
      MessageCodec.encode(m, buf.nioBuffer(0, length));
    } catch (RuntimeException e) {
      buf.release();
      throw e;
    }
    buf.writerIndex(length);
    listener.publishBytes.set(buf, 0, length);
    listener.deliveries.publishing(m, buf);
    return buf;
  }

  /** After {@link #encoded}: the message is handed over, its buffer let go. */
  private static void released(MqttListener listener, ByteBuf buf) {
    listener.deliveries.publishing(null, null);
    listener.publishBytes.set(null, 0, 0);
    buf.release();
  }

  /** Hands {@code m} to the data plane; false if it is larger than a frame. On the loop. */
  static boolean toDataPlane(MqttListener listener, Message m) {
    int length = MessageCodec.encodedLength(m);
    if (length > listener.core.config().limits().maxFrameBytes() - Frames.PREFIX_BYTES - 8) {
      return false;
    }
    ByteBuf buf = encoded(listener, m, length);
    try {
      listener.dataPlane.publish(m, listener.publishBytes);
    } finally {
      released(listener, buf);
    }
    return true;
  }

  private void reply(MqttMessageType type, int id, int code) {
    ctx.writeAndFlush(pubReply(type, id, code));
  }

  /**
   * A PUBACK, PUBREC, PUBREL or PUBCOMP for packet identifier {@code id} with reason {@code code}
   * (PUBREL with the QoS 1 its fixed header must carry, MQTT-3.6.1-1).
   */
  static MqttMessage pubReply(MqttMessageType type, int id, int code) {
    return new MqttMessage(
        new MqttFixedHeader(
            type,
            false,
            type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE,
            false,
            0),
        new MqttPubReplyMessageVariableHeader(id, (byte) code, MqttProperties.NO_PROPERTIES));
  }

  /**
   * A SUBSCRIBE, checked, to {@code subscriptions}; its Subscription Identifier (MQTT 5
   * §3.8.2.1.2), if any, goes with each of its filters. A value of 0, or more than one, is a
   * protocol error (0x82).
   */
  static void subscribe(boolean v5, MqttSubscribeMessage s, MqttSubscriptions subscriptions) {
    MqttProperties props = s.idAndPropertiesVariableHeader().properties();
    int subscriptionId = 0;
    if (v5 && props != null) {
      List<?> ids = props.getProperties(MqttProperties.SUBSCRIPTION_IDENTIFIER);
      if (ids.size() > 1) {
        throw new MqttFault(
            MqttFault.PROTOCOL_ERROR, "a SUBSCRIBE with more than one subscription identifier");
      }
      if (!ids.isEmpty()) {
        subscriptionId = ((MqttProperties.IntegerProperty) ids.get(0)).value();
        if (subscriptionId < 1 || subscriptionId > MAX_SUBSCRIPTION_ID) {
          throw new MqttFault(
              MqttFault.PROTOCOL_ERROR,
              "subscription identifier " + subscriptionId + ", not in 1.." + MAX_SUBSCRIPTION_ID);
        }
      }
    }
    List<String> content = v5 && props != null ? contentFilters(props) : List.of();
    List<MqttTopicSubscription> ts = s.payload().topicSubscriptions();
    if (ts.isEmpty()) {
      throw new MqttFault(MqttFault.PROTOCOL_ERROR, "a SUBSCRIBE without a topic filter");
    }
    List<MqttSubscriptions.Asked> asked = new ArrayList<>(ts.size());
    for (MqttTopicSubscription t : ts) {
      asked.add(
          new MqttSubscriptions.Asked(
              t.topicFilter(),
              t.qualityOfService().value(),
              v5 && t.option().isNoLocal(),
              subscriptionId,
              v5 ? t.option().retainHandling().value() : 0,
              v5 && t.option().isRetainAsPublished(),
              content));
    }
    subscriptions.subscribe(s.variableHeader().messageId(), asked);
  }

  /**
   * The values of a SUBSCRIBE's {@value #FILTER_PROPERTY} user properties, in order: each a
   * predicate ANDed to every topic filter of the SUBSCRIBE, parsed with it on the control thread,
   * where one that does not parse refuses the filter (0x8F).
   */
  private static List<String> contentFilters(MqttProperties props) {
    List<String> out = List.of();
    for (MqttProperties.MqttProperty<?> u : props.getProperties(MqttProperties.USER_PROPERTY)) {
      if (u instanceof MqttProperties.UserProperty up && FILTER_PROPERTY.equals(up.value().key)) {
        if (out.isEmpty()) {
          out = new ArrayList<>(1);
        }
        out.add(up.value().value);
      }
    }
    return out;
  }

  /** An UNSUBSCRIBE, checked, to {@code subscriptions}. */
  static void unsubscribe(MqttUnsubscribeMessage u, MqttSubscriptions subscriptions) {
    List<String> topics = u.payload().topics();
    if (topics.isEmpty()) {
      throw new MqttFault(MqttFault.PROTOCOL_ERROR, "an UNSUBSCRIBE without a topic filter");
    }
    subscriptions.unsubscribe(u.variableHeader().messageId(), topics);
  }
}
