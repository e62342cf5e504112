package io.bdrp.encoding.mqtt;

import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.Base64;

/**
 * The attributes of a PUBLISH besides its topic ({@link MqttTopic}) and user properties ({@link
 * MqttProperties}): its QoS, its expiry and the MQTT 5 request/response properties that pass
 * through the federation unchanged (docs/mqtt.md, "The mapping"). Stateless.
 */
public final class MqttPublish {
  /** Integer attribute: the QoS the publisher sent with, 0, 1 or 2. */
  public static final String QOS = "mqtt.qos";

  /**
   * Integer attribute: the MQTT 5 Payload Format Indicator as sent (0: unspecified bytes, 1: UTF-8
   * text), passed to subscribers unaltered (MQTT-3.3.2-4); absent when the PUBLISH had none.
   */
  public static final String PAYLOAD_FORMAT = "mqtt.payloadFormat";

  /** String attribute: the MQTT 5 content type, as sent. */
  public static final String CONTENT_TYPE = "mqtt.contentType";

  /** String attribute: the MQTT 5 response topic, as sent. */
  public static final String RESPONSE_TOPIC = "mqtt.responseTopic";

  /** String attribute: the MQTT 5 correlation data (binary), in base64 (RFC 4648, padded). */
  public static final String CORRELATION_DATA = "mqtt.correlationData";

  /**
   * Integer attribute: when the message expires, in milliseconds since the epoch (UTC): the time
   * its MQTT 5 PUBLISH arrived plus its Message Expiry Interval. A delivery after it is dropped;
   * one before it carries the interval that remains (MQTT 5 §3.3.2.3.3).
   */
  public static final String EXPIRES_AT = "mqtt.expiresAt";

  /**
   * Longest correlation data carried: its base64 must fit a string attribute ({@link
   * Limits#MAX_STRING_BYTES}).
   */
  public static final int MAX_CORRELATION_BYTES = Limits.MAX_STRING_BYTES / 4 * 3;

  private MqttPublish() {}

  /**
   * The QoS a delivery of this message may have at most: its {@value #QOS} attribute when that is
   * an integer from 0 to 2, else 0 (a bdrp client's message without one).
   */
  public static int qos(Message m) {
    Value v = m.get(QOS);
    if (v != null && v.type() == ValueType.INTEGER && v.asLong() >= 0 && v.asLong() <= 2) {
      return (int) v.asLong();
    }
    return 0;
  }

  /** The Payload Format Indicator of a message (0 or 1), or -1 when it has none. */
  public static int payloadFormat(Message m) {
    Value v = m.get(PAYLOAD_FORMAT);
    if (v != null && v.type() == ValueType.INTEGER && (v.asLong() == 0 || v.asLong() == 1)) {
      return (int) v.asLong();
    }
    return -1;
  }

  /**
   * Adds the correlation data in base64 as {@value #CORRELATION_DATA}.
   *
   * @throws IllegalArgumentException for more than {@link #MAX_CORRELATION_BYTES} bytes
   */
  public static Message.Builder putCorrelationData(Message.Builder b, byte[] data) {
    if (data.length > MAX_CORRELATION_BYTES) {
      throw new IllegalArgumentException(
          "correlation data is "
              + data.length
              + " bytes, more than the "
              + MAX_CORRELATION_BYTES
              + " carried");
    }
    return b.put(CORRELATION_DATA, Base64.getEncoder().encodeToString(data));
  }

  /**
   * The correlation data of a message, or null when it has no {@value #CORRELATION_DATA} string in
   * base64.
   */
  public static byte[] correlationData(Message m) {
    Value v = m.get(CORRELATION_DATA);
    if (v == null || v.type() != ValueType.STRING) {
      return null;
    }
    try {
      return Base64.getDecoder().decode(v.asString());
    } catch (IllegalArgumentException notBase64) {
      return null;
    }
  }

  /**
   * When the message expires ({@value #EXPIRES_AT}, ms since the epoch), or {@link Long#MAX_VALUE}
   * when it has no such integer attribute.
   */
  public static long expiresAt(Message m) {
    Value v = m.get(EXPIRES_AT);
    return v != null && v.type() == ValueType.INTEGER ? v.asLong() : Long.MAX_VALUE;
  }

  /** The string attribute {@code name} of a message, or null when absent or not a string. */
  public static String string(Message m, String name) {
    Value v = m.get(name);
    return v != null && v.type() == ValueType.STRING ? v.asString() : null;
  }
}
