package io.bdrp.router.config;

import io.bdrp.encoding.Limits;

/**
 * The {@code mqtt} section of a router's configuration: what its MQTT port does beyond the mapping
 * every router applies (docs/mqtt.md). Immutable; checked when built.
 *
 * @param jsonFields whether a PUBLISH whose payload is a JSON object gets attributes {@code
 *     mqtt.json.<path>} for its fields ({@code mqtt.jsonFields}; off by default, since it costs the
 *     router's event loop a parse of each such payload)
 * @param jsonMaxBytes the largest payload parsed for JSON fields, in bytes ({@code
 *     mqtt.jsonMaxBytes}); larger payloads give no fields
 * @param confirmedAcks whether a QoS 1 or 2 PUBLISH is sent with the reliable service and answered
 *     (PUBACK, PUBREC) once every router of its D has it ({@code mqtt.confirmedAcks}; off by
 *     default: then the router answers once it has routed the message)
 */
public record MqttOptions(boolean jsonFields, int jsonMaxBytes, boolean confirmedAcks) {
  /** JSON fields off; payloads up to 64 KiB parsed when they are turned on; acks on routing. */
  public static final MqttOptions DEFAULT = new MqttOptions(false, 64 * 1024, false);

  /** These JSON options, acknowledgements on routing. */
  public MqttOptions(boolean jsonFields, int jsonMaxBytes) {
    this(jsonFields, jsonMaxBytes, false);
  }

  public MqttOptions {
    if (jsonMaxBytes < 1 || jsonMaxBytes > Limits.MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          "mqtt.jsonMaxBytes: " + jsonMaxBytes + ", not in 1.." + Limits.MAX_BODY_BYTES);
    }
  }
}
