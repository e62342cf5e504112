package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.mqtt.MqttProperties;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.MessageBytes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A message that fans out to many MQTT sessions is decoded once and its properties made once; a
 * session's own properties (expiry, subscription identifiers) join them without changing them.
 */
class MqttDeliveriesTest {
  private static Message message(String topic) {
    return MqttProperties.put(
            MqttTopic.put(Message.builder(), topic),
            List.of(
                new MqttProperties.UserProperty("site", "a"),
                new MqttProperties.UserProperty("value", "1"),
                new MqttProperties.UserProperty("site", "b")))
        .body(new byte[] {7})
        .build();
  }

  private static MessageBytes bytes(ByteBuf buf) {
    MessageBytes b = new MessageBytes();
    b.set(buf, 0, buf.readableBytes());
    return b;
  }

  @Test
  void theSameBytesOfOneMessageAreDecodedOnce() {
    MqttDeliveries d = new MqttDeliveries(Runnable::run);
    ByteBuf buf = Unpooled.wrappedBuffer(MessageCodec.toBytes(message("a/b")));
    MessageBytes b = bytes(buf);
    Message first = d.decode(5, b);
    assertEquals(message("a/b"), first);
    assertSame(first, d.decode(5, b), "the next session of the same delivery");
    assertNotSame(first, d.decode(6, b), "another message id: decoded again");
    ByteBuf other = Unpooled.wrappedBuffer(MessageCodec.toBytes(message("c")));
    assertEquals("c", MqttTopic.of(d.decode(6, bytes(other))), "other bytes: decoded again");
  }

  @Test
  void aMessagePublishedHereIsNotDecoded() {
    MqttDeliveries d = new MqttDeliveries(Runnable::run);
    Message m = message("x");
    ByteBuf buf = Unpooled.wrappedBuffer(MessageCodec.toBytes(m));
    d.publishing(m, buf);
    assertSame(m, d.decode(1, bytes(buf)));
    d.publishing(null, null);
    assertNotSame(m, d.decode(1, bytes(buf)));
  }

  @Test
  void aSessionsOwnPropertiesJoinTheSharedOnesWithoutChangingThem() {
    MqttDeliveries d = new MqttDeliveries(Runnable::run);
    Message m = message("t");
    io.netty.handler.codec.mqtt.MqttProperties base = d.properties(m);
    assertSame(base, d.properties(m));
    MqttPublishMessage plain = MqttPublishes.toPublish(m, "t", 0, 0, base, new int[0], -1, false);
    assertSame(base, plain.variableHeader().properties(), "nothing of its own: shared");
    MqttPublishMessage own =
        MqttPublishes.toPublish(m, "t", 1, 9, base, new int[] {4, 8}, 30, false);
    io.netty.handler.codec.mqtt.MqttProperties p = own.variableHeader().properties();
    assertEquals(List.of("site=a", "value=1", "site=b"), users(p), "in order, duplicates kept");
    assertEquals(
        2,
        p.getProperties(io.netty.handler.codec.mqtt.MqttProperties.SUBSCRIPTION_IDENTIFIER).size());
    assertEquals(
        30,
        ((io.netty.handler.codec.mqtt.MqttProperties.IntegerProperty)
                p.getProperty(
                    io.netty.handler.codec.mqtt.MqttProperties.PUBLICATION_EXPIRY_INTERVAL))
            .value());
    assertEquals(List.of("site=a", "value=1", "site=b"), users(base), "the shared ones unchanged");
    assertEquals(
        null,
        base.getProperty(io.netty.handler.codec.mqtt.MqttProperties.PUBLICATION_EXPIRY_INTERVAL));
    plain.release();
    own.release();
  }

  private static List<String> users(io.netty.handler.codec.mqtt.MqttProperties p) {
    List<String> out = new ArrayList<>();
    for (Object u : p.getProperties(io.netty.handler.codec.mqtt.MqttProperties.USER_PROPERTY)) {
      io.netty.handler.codec.mqtt.MqttProperties.UserProperty up =
          (io.netty.handler.codec.mqtt.MqttProperties.UserProperty) u;
      out.add(up.value().key + "=" + up.value().value);
    }
    return out;
  }
}
