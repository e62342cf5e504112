package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
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
import java.util.Base64;
import java.util.List;

/**
 * A PUBLISH as a bdrp message and back, beside the mapping of {@code io.bdrp.encoding.mqtt} (the
 * topic and its levels, user properties, the payload as the body): the QoS it was published with
 * ({@value #QOS}, an integer) and the MQTT 5 request/response properties, passed through: {@value
 * #CONTENT_TYPE} and {@value #RESPONSE_TOPIC} (strings), {@value #CORRELATION_DATA} (the binary
 * correlation data in base64, so that a bdrp client can read and set it as a string) and {@value
 * #UTF8_PAYLOAD} (a boolean: the payload format indicator). A message a bdrp client published
 * leaves as a PUBLISH if it carries {@code mqtt.topic}; without {@value #QOS} it counts as QoS 0.
 *
 * <p>Stateless; called on the router's event loop.
 */
final class MqttPublishes {
  static final String QOS = "mqtt.qos";
  static final String CONTENT_TYPE = "mqtt.contentType";
  static final String RESPONSE_TOPIC = "mqtt.responseTopic";
  static final String CORRELATION_DATA = "mqtt.correlationData";
  static final String UTF8_PAYLOAD = "mqtt.utf8";

  private MqttPublishes() {}

  /**
   * The bdrp message of a PUBLISH whose topic name is checked already.
   *
   * @throws IllegalArgumentException if no bdrp message holds it (too many attributes, a user
   *     property name or value beyond the limits, a body above 1 MiB)
   */
  static Message toMessage(MqttPublishMessage p, String topic) {
    Message.Builder b = Message.builder();
    MqttTopic.put(b, topic);
    b.put(QOS, (long) p.fixedHeader().qosLevel().value());
    MqttProperties props = p.variableHeader().properties();
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
      if (props.getProperty(MqttProperties.CONTENT_TYPE)
          instanceof MqttProperties.StringProperty s) {
        b.put(CONTENT_TYPE, s.value());
      }
      if (props.getProperty(MqttProperties.RESPONSE_TOPIC)
          instanceof MqttProperties.StringProperty s) {
        b.put(RESPONSE_TOPIC, s.value());
      }
      if (props.getProperty(MqttProperties.CORRELATION_DATA)
          instanceof MqttProperties.BinaryProperty d) {
        b.put(CORRELATION_DATA, Base64.getEncoder().encodeToString(d.value()));
      }
      if (props.getProperty(MqttProperties.PAYLOAD_FORMAT_INDICATOR)
          instanceof MqttProperties.IntegerProperty f) {
        b.put(UTF8_PAYLOAD, f.value() == 1);
      }
    }
    ByteBuf payload = p.payload();
    b.body(payload.nioBuffer(payload.readerIndex(), payload.readableBytes()));
    return b.build();
  }

  /** The QoS a message was published with: its {@value #QOS}, or 0 (a bdrp client's). */
  static int qos(Message m) {
    Value v = m.get(QOS);
    if (v == null || v.type() != ValueType.INTEGER) {
      return 0;
    }
    long q = v.asLong();
    return q <= 0 ? 0 : q >= 2 ? 2 : (int) q;
  }

  /**
   * The PUBLISH that delivers {@code m} at {@code qos} with {@code packetId} (0 for QoS 0); with
   * {@code v5}, its properties too.
   */
  static MqttPublishMessage toPublish(Message m, String topic, int qos, int packetId, boolean v5) {
    MqttProperties props = MqttProperties.NO_PROPERTIES;
    if (v5) {
      props = new MqttProperties();
      for (io.bdrp.encoding.mqtt.MqttProperties.UserProperty u :
          io.bdrp.encoding.mqtt.MqttProperties.of(m)) {
        props.add(new MqttProperties.UserProperty(u.name(), u.value()));
      }
      String s = string(m, CONTENT_TYPE);
      if (s != null) {
        props.add(new MqttProperties.StringProperty(MqttProperties.CONTENT_TYPE, s));
      }
      s = string(m, RESPONSE_TOPIC);
      if (s != null) {
        props.add(new MqttProperties.StringProperty(MqttProperties.RESPONSE_TOPIC, s));
      }
      s = string(m, CORRELATION_DATA);
      if (s != null) {
        try {
          props.add(
              new MqttProperties.BinaryProperty(
                  MqttProperties.CORRELATION_DATA, Base64.getDecoder().decode(s)));
        } catch (IllegalArgumentException notBase64) {
          // A bdrp client's value that is not base64: left out rather than sent garbled.
        }
      }
      Value utf8 = m.get(UTF8_PAYLOAD);
      if (utf8 != null && utf8.type() == ValueType.BOOLEAN) {
        props.add(
            new MqttProperties.IntegerProperty(
                MqttProperties.PAYLOAD_FORMAT_INDICATOR, utf8.asBoolean() ? 1 : 0));
      }
    }
    return new MqttPublishMessage(
        new MqttFixedHeader(MqttMessageType.PUBLISH, false, MqttQoS.valueOf(qos), false, 0),
        new MqttPublishVariableHeader(topic, packetId, props),
        m.bodyLength() == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(m.bodyBuffer()));
  }

  private static String string(Message m, String name) {
    Value v = m.get(name);
    return v != null && v.type() == ValueType.STRING ? v.asString() : null;
  }
}
