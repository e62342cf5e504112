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
 */
public record MqttOptions(boolean jsonFields, int jsonMaxBytes) {
  /** JSON fields off; payloads up to 64 KiB parsed when they are turned on. */
  public static final MqttOptions DEFAULT = new MqttOptions(false, 64 * 1024);

  public MqttOptions {
    if (jsonMaxBytes < 1 || jsonMaxBytes > Limits.MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          "mqtt.jsonMaxBytes: " + jsonMaxBytes + ", not in 1.." + Limits.MAX_BODY_BYTES);
    }
  }
}
