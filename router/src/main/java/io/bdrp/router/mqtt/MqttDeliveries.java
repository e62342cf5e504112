package io.bdrp.router.mqtt;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.router.MessageBytes;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.mqtt.MqttProperties;

/**
 * What the MQTT hosts of a router share while the data plane hands one message to each of them in
 * turn: the message decoded once, not once per session, and its MQTT 5 properties (user properties,
 * content type, response topic, correlation data) built once, so that a message that fans out to
 * many sessions costs each of them its PUBLISH and no more. A message published at this router by
 * an MQTT client or a will is not decoded at all: its {@link Message} is given ({@link
 * #publishing}).
 *
 * <p>The message last decoded is known by its id and the bytes it was decoded from (the buffer, the
 * offset and the length), which the data plane passes unchanged to every host of one delivery.
 *
 * <p>Owned by the router's event loop.
 */
final class MqttDeliveries {
  private long lastId;
  private ByteBuf lastBuf;
  private int lastOffset = -1;
  private int lastLength;
  private Message last;

  private ByteBuf publishingBuf; // the bytes of the message being published here, or null
  private Message publishing;

  private Message propertiesOf;
  private MqttProperties properties;

  /**
   * The message of a delivery: the one being published here if these are its bytes, else the one
   * decoded last if they are the same bytes with the same id, else decoded now.
   *
   * @throws io.bdrp.encoding.codec.CodecException if it does not decode
   */
  Message decode(long messageId, MessageBytes bytes) {
    if (publishing != null && bytes.buf == publishingBuf) {
      return publishing;
    }
    if (last != null
        && messageId == lastId
        && bytes.buf == lastBuf
        && bytes.offset == lastOffset
        && bytes.length == lastLength) {
      return last;
    }
    Message m = MessageCodec.decode(bytes.buf.nioBuffer(bytes.offset, bytes.length));
    last = m;
    lastId = messageId;
    lastBuf = bytes.buf;
    lastOffset = bytes.offset;
    lastLength = bytes.length;
    return m;
  }

  /** {@code m}, encoded in {@code buf}, is being handed to the data plane here (null: done). */
  void publishing(Message m, ByteBuf buf) {
    publishing = m;
    publishingBuf = buf;
    if (m == null) {
      last = null; // the buffer is released: its identity may come back for another message
      lastBuf = null;
    }
  }

  /**
   * The MQTT 5 properties every delivery of {@code m} carries (not the per-session ones: Message
   * Expiry Interval, Subscription Identifiers), built once per message. Read only.
   */
  MqttProperties properties(Message m) {
    if (m != propertiesOf) {
      properties = MqttPublishes.properties(m);
      propertiesOf = m;
    }
    return properties;
  }
}
