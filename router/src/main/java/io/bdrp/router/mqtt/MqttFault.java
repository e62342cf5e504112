package io.bdrp.router.mqtt;

import io.netty.handler.codec.DecoderException;

/**
 * Input that ends an MQTT session: the MQTT 5 reason code its DISCONNECT carries (a 3.1.1 session
 * is closed without one, as 3.1.1 has none), the counter it goes to, and what was wrong.
 */
final class MqttFault extends DecoderException {
  private static final long serialVersionUID = 1L;

  /** 0x81: the packet does not decode. */
  static final int MALFORMED = 0x81;

  /** 0x82: a packet where MQTT forbids it. */
  static final int PROTOCOL_ERROR = 0x82;

  /** 0x8D: nothing received for one and a half times the keep-alive. */
  static final int KEEP_ALIVE_TIMEOUT = 0x8D;

  /** 0x8E: another connection took the client identifier over. */
  static final int SESSION_TAKEN_OVER = 0x8E;

  /** 0x90: a PUBLISH topic name that MQTT does not allow. */
  static final int TOPIC_NAME_INVALID = 0x90;

  /** 0x93: more QoS 2 PUBLISHes unanswered than the receive maximum this router announced. */
  static final int RECEIVE_MAXIMUM_EXCEEDED = 0x93;

  /** 0x94: a topic alias of 0 or above the maximum, or one not set used without a topic name. */
  static final int TOPIC_ALIAS_INVALID = 0x94;

  /** 0x95: a packet above the maximum packet size. */
  static final int PACKET_TOO_LARGE = 0x95;

  /** 0x97: a bound of the session reached. */
  static final int QUOTA_EXCEEDED = 0x97;

  /** The reason code of the DISCONNECT (MQTT 5). */
  final int reasonCode;

  /**
   * The label of {@code bdrp_mqtt_malformed_total}: malformed, too_large, quota, topic_alias,
   * protocol_error.
   */
  final String counted;

  MqttFault(int reasonCode, String message) {
    super(message);
    this.reasonCode = reasonCode;
    this.counted =
        switch (reasonCode) {
          case MALFORMED -> "malformed";
          case PACKET_TOO_LARGE -> "too_large";
          case QUOTA_EXCEEDED -> "quota";
          case TOPIC_ALIAS_INVALID -> "topic_alias";
          default -> "protocol_error";
        };
  }
}
