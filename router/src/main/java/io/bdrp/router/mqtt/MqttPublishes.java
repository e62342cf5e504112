package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.ArrayList;
import java.util.List;

/**
 * A PUBLISH as a bdrp message and back, through the mapping of {@code io.bdrp.encoding.mqtt}
 * (docs/mqtt.md, "The mapping"): the topic and its levels, the user properties, the QoS it was
 * published with, the MQTT 5 payload format indicator, content type, response topic and correlation
 * data, the payload as the body. A message a bdrp client published leaves as a PUBLISH if it
 * carries {@code mqtt.topic}; without {@code mqtt.qos} it counts as QoS 0.
 *
 * <p>Stateless; called on the router's event loop.
 */
final class MqttPublishes {
  private MqttPublishes() {}

  /**
   * The bdrp message of a PUBLISH whose topic name is checked already, arrived at {@code nowMs} (ms
   * since the epoch; its Message Expiry Interval counts from then).
   *
   * @throws IllegalArgumentException if no bdrp message holds it (too many attributes, a user
   *     property name or value beyond the limits, a body above 1 MiB)
   */
  static Message toMessage(MqttPublishMessage p, String topic, long nowMs) {
    return toMessage(p, topic, nowMs, null);
  }

  /**
   * As {@link #toMessage(MqttPublishMessage, String, long)}, with the attributes of the payload's
   * JSON fields when {@code json} is not null (the router's {@code mqtt.jsonFields}).
   */
  static Message toMessage(MqttPublishMessage p, String topic, long nowMs, MqttJson json) {
    ByteBuf payload = p.payload();
    return toMessage(
        topic,
        p.fixedHeader().qosLevel().value(),
        p.variableHeader().properties(),
        payload.nioBuffer(payload.readerIndex(), payload.readableBytes()),
        nowMs,
        json);
  }

  /**
   * The bdrp message of a PUBLISH (or a will) in parts: its checked topic, QoS, properties (may be
   * null) and payload, taken at {@code nowMs}.
   *
   * @throws IllegalArgumentException as {@link #toMessage(MqttPublishMessage, String, long)}
   */
  static Message toMessage(
      String topic, int qos, MqttProperties props, java.nio.ByteBuffer body, long nowMs) {
    return toMessage(topic, qos, props, body, nowMs, null);
  }

  /**
   * As {@link #toMessage(String, int, MqttProperties, java.nio.ByteBuffer, long)}, with the
   * attributes of the payload's JSON fields when {@code json} is not null.
   */
  static Message toMessage(
      String topic,
      int qos,
      MqttProperties props,
      java.nio.ByteBuffer body,
      long nowMs,
      MqttJson json) {
    Message.Builder b = Message.builder();
    MqttTopic.put(b, topic);
    b.put(MqttPublish.QOS, (long) qos);
    if (props != null && !props.isEmpty()) {
      List<io.bdrp.encoding.mqtt.MqttProperties.UserProperty> users = new ArrayList<>();
      for (MqttProperties.MqttProperty<?> u : props.getProperties(MqttProperties.USER_PROPERTY)) {
        if (u instanceof MqttProperties.UserProperty up) {
          users.add(
              new io.bdrp.encoding.mqtt.MqttProperties.UserProperty(
                  up.value().key, up.value().value));
        }
      }
      if (!users.isEmpty()) {
        io.bdrp.encoding.mqtt.MqttProperties.put(b, users);
      }
      if (props.getProperty(MqttProperties.PUBLICATION_EXPIRY_INTERVAL)
          instanceof MqttProperties.IntegerProperty e) {
        b.put(MqttPublish.EXPIRES_AT, nowMs + 1000L * Integer.toUnsignedLong(e.value()));
      }
      if (props.getProperty(MqttProperties.PAYLOAD_FORMAT_INDICATOR)
          instanceof MqttProperties.IntegerProperty f) {
        b.put(MqttPublish.PAYLOAD_FORMAT, (long) f.value());
      }
      if (props.getProperty(MqttProperties.CONTENT_TYPE)
          instanceof MqttProperties.StringProperty s) {
        b.put(MqttPublish.CONTENT_TYPE, s.value());
      }
      if (props.getProperty(MqttProperties.RESPONSE_TOPIC)
          instanceof MqttProperties.StringProperty s) {
        b.put(MqttPublish.RESPONSE_TOPIC, s.value());
      }
      if (props.getProperty(MqttProperties.CORRELATION_DATA)
          instanceof MqttProperties.BinaryProperty d) {
        MqttPublish.putCorrelationData(b, d.value());
      }
    }
    b.body(body);
    return json == null ? b.build() : json.build(b, body);
  }

  /**
   * The MQTT 5 properties that every delivery of {@code m} carries, in order: its user properties
   * (duplicates kept), payload format indicator, content type, response topic and correlation data;
   * not the ones each session adds (Message Expiry Interval, Subscription Identifiers). Read only
   * once made.
   */
  static MqttProperties properties(Message m) {
    MqttProperties props = new MqttProperties();
    for (io.bdrp.encoding.mqtt.MqttProperties.UserProperty u :
        io.bdrp.encoding.mqtt.MqttProperties.of(m)) {
      props.add(new MqttProperties.UserProperty(u.name(), u.value()));
    }
    int format = MqttPublish.payloadFormat(m);
    if (format >= 0) {
      props.add(
          new MqttProperties.IntegerProperty(MqttProperties.PAYLOAD_FORMAT_INDICATOR, format));
    }
    String s = MqttPublish.string(m, MqttPublish.CONTENT_TYPE);
    if (s != null) {
      props.add(new MqttProperties.StringProperty(MqttProperties.CONTENT_TYPE, s));
    }
    s = MqttPublish.string(m, MqttPublish.RESPONSE_TOPIC);
    if (s != null) {
      props.add(new MqttProperties.StringProperty(MqttProperties.RESPONSE_TOPIC, s));
    }
    byte[] correlation = MqttPublish.correlationData(m);
    if (correlation != null) {
      props.add(new MqttProperties.BinaryProperty(MqttProperties.CORRELATION_DATA, correlation));
    }
    return props;
  }

  /**
   * The PUBLISH that delivers {@code m} at {@code qos} with {@code packetId} (0 for QoS 0); with
   * {@code v5}, its properties too ({@link #properties}), the Subscription Identifiers {@code
   * subscriptionIds}, and the Message Expiry Interval that remains, {@code expirySeconds} (-1:
   * none); with {@code retain}, the RETAIN flag set.
   */
  static MqttPublishMessage toPublish(
      Message m,
      String topic,
      int qos,
      int packetId,
      boolean v5,
      int[] subscriptionIds,
      long expirySeconds,
      boolean retain) {
    return toPublish(
        m, topic, qos, packetId, v5 ? properties(m) : null, subscriptionIds, expirySeconds, retain);
  }

  /**
   * As {@link #toPublish(Message, String, int, int, boolean, int[], long, boolean)}, with {@code
   * base}, the message's {@link #properties} made once for every session that gets it (null: MQTT
   * 3.1.1, no properties). It is not changed: a delivery with per-session properties has its own.
   */
  static MqttPublishMessage toPublish(
      Message m,
      String topic,
      int qos,
      int packetId,
      MqttProperties base,
      int[] subscriptionIds,
      long expirySeconds,
      boolean retain) {
    MqttProperties props = MqttProperties.NO_PROPERTIES;
    if (base != null) {
      if (expirySeconds < 0 && subscriptionIds.length == 0) {
        props = base;
      } else {
        props = new MqttProperties();
        if (expirySeconds >= 0) {
          props.add(
              new MqttProperties.IntegerProperty(
                  MqttProperties.PUBLICATION_EXPIRY_INTERVAL,
                  (int) Math.min(expirySeconds, 0xFFFF_FFFFL)));
        }
        for (int id : subscriptionIds) {
          props.add(new MqttProperties.IntegerProperty(MqttProperties.SUBSCRIPTION_IDENTIFIER, id));
        }
        for (MqttProperties.MqttProperty<?> p : base.listAll()) {
          if (p instanceof MqttProperties.UserProperties all) {
            for (MqttProperties.StringPair pair : all.value()) {
              props.add(new MqttProperties.UserProperty(pair.key, pair.value));
            }
          } else {
            props.add(p);
          }
        }
      }
    }
    return new MqttPublishMessage(
        new MqttFixedHeader(MqttMessageType.PUBLISH, false, MqttQoS.valueOf(qos), retain, 0),
        new MqttPublishVariableHeader(topic, packetId, props),
        m.bodyLength() == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(m.bodyBuffer()));
  }

  /**
   * The bytes of a QoS 0 PUBLISH of {@code m} on {@code topic} (MQTT 3.1.1 §3.3, MQTT 5 §3.3), with
   * {@code properties} (MQTT 5; null for 3.1.1) and RETAIN {@code retain}: what Netty's encoder
   * writes for {@link #toPublish}, made once for every session that takes the same bytes.
   */
  static ByteBuf encodeQos0(Message m, String topic, MqttProperties properties, boolean retain) {
    byte[] name = topic.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    ByteBuf props = null;
    int propsLength = 0;
    if (properties != null) {
      props = Unpooled.buffer();
      for (MqttProperties.MqttProperty<?> p : properties.listAll()) {
        writeProperty(props, p);
      }
      propsLength = props.readableBytes();
    }
    int remaining =
        2
            + name.length
            + (properties != null ? varIntBytes(propsLength) + propsLength : 0)
            + m.bodyLength();
    ByteBuf out =
        io.netty.buffer.ByteBufAllocator.DEFAULT.directBuffer(
            1 + varIntBytes(remaining) + remaining);
    out.writeByte(0x30 | (retain ? 1 : 0));
    writeVarInt(out, remaining);
    out.writeShort(name.length);
    out.writeBytes(name);
    if (props != null) {
      writeVarInt(out, propsLength);
      out.writeBytes(props);
      props.release();
    }
    out.writeBytes(m.bodyBuffer());
    return out;
  }

  /**
   * A property of {@link #properties}: a user property, the Payload Format Indicator (a byte), a
   * string or a binary one.
   */
  private static void writeProperty(ByteBuf out, MqttProperties.MqttProperty<?> p) {
    if (p instanceof MqttProperties.UserProperties all) {
      for (MqttProperties.StringPair pair : all.value()) {
        out.writeByte(MqttProperties.USER_PROPERTY);
        writeString(out, pair.key);
        writeString(out, pair.value);
      }
    } else if (p instanceof MqttProperties.UserProperty u) {
      out.writeByte(MqttProperties.USER_PROPERTY);
      writeString(out, u.value().key);
      writeString(out, u.value().value);
    } else if (p instanceof MqttProperties.IntegerProperty i
        && i.propertyId() == MqttProperties.PAYLOAD_FORMAT_INDICATOR) {
      out.writeByte(i.propertyId());
      out.writeByte(i.value());
    } else if (p instanceof MqttProperties.StringProperty s) {
      out.writeByte(s.propertyId());
      writeString(out, s.value());
    } else if (p instanceof MqttProperties.BinaryProperty b) {
      out.writeByte(b.propertyId());
      out.writeShort(b.value().length);
      out.writeBytes(b.value());
    } else {
      throw new IllegalArgumentException("property " + p.propertyId() + " is not encoded here");
    }
  }

  private static void writeString(ByteBuf out, String s) {
    byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.writeShort(b.length);
    out.writeBytes(b);
  }

  private static int varIntBytes(int n) {
    return n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4;
  }

  private static void writeVarInt(ByteBuf out, int n) {
    do {
      int digit = n % 128;
      n /= 128;
      out.writeByte(n > 0 ? digit | 0x80 : digit);
    } while (n > 0);
  }
}
