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

  // The QoS 0 PUBLISHes of the message last encoded, by variant: 3.1.1 or 5, RETAIN 0 or 1; held
  // until the loop has handled the batch of input they were made in.
  private Message encodedOf;
  private final ByteBuf[] encoded = new ByteBuf[4];
  private final java.util.concurrent.Executor loop;
  private final Runnable releaseTask = this::releaseEncoded;
  private boolean releaseQueued;

  /**
   * @param loop the router's event loop, where what is held is released after each batch
   */
  MqttDeliveries(java.util.concurrent.Executor loop) {
    this.loop = loop;
  }

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

  /**
   * The QoS 0 PUBLISH of {@code m} on {@code topic} as bytes, for a session of MQTT 5 ({@code v5})
   * or 3.1.1, with RETAIN {@code retain}, and without the properties a session adds (Message Expiry
   * Interval, Subscription Identifiers): made once per message and variant, so that every session
   * that takes it so is written the same bytes, copied into its connection's batch of output
   * ({@code OutputBatches.copy}). This keeps the buffer until the loop has handled the batch of
   * input it was made in.
   */
  ByteBuf publishQos0(Message m, String topic, boolean v5, boolean retain) {
    if (m != encodedOf) {
      releaseBuffers();
      encodedOf = m;
    }
    int variant = (v5 ? 2 : 0) | (retain ? 1 : 0);
    ByteBuf b = encoded[variant];
    if (b == null) {
      b = MqttPublishes.encodeQos0(m, topic, v5 ? properties(m) : null, retain);
      encoded[variant] = b;
      if (!releaseQueued) {
        // Kept for the sessions of this batch of input only: released once it is handled.
        releaseQueued = true;
        try {
          loop.execute(releaseTask);
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
          releaseQueued = false; // the router has stopped: released at the next call, or now
        }
      }
    }
    return b;
  }

  /** Releases the encoded PUBLISHes held (the batch of input is handled, or the router stops). */
  void releaseEncoded() {
    releaseQueued = false;
    releaseBuffers();
  }

  private void releaseBuffers() {
    for (int i = 0; i < encoded.length; i++) {
      if (encoded[i] != null) {
        encoded[i].release();
        encoded[i] = null;
      }
    }
    encodedOf = null;
  }
}
