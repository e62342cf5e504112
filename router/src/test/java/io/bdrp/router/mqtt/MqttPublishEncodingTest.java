package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttProperties;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The QoS 0 PUBLISH encoded once for every session ({@link MqttPublishes#encodeQos0}) is what
 * Netty's encoder writes for the same delivery: byte for byte in MQTT 3.1.1, and in MQTT 5 the same
 * packet once Netty's decoder has read it (properties in another order are the same packet).
 */
class MqttPublishEncodingTest {
  private static Message message(int bodyBytes) {
    byte[] body = new byte[bodyBytes];
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) i;
    }
    Message.Builder b =
        MqttProperties.put(
            MqttTopic.put(Message.builder(), "sensors/é/temp"),
            List.of(
                new MqttProperties.UserProperty("site", "a"),
                new MqttProperties.UserProperty("value", "25.5"),
                new MqttProperties.UserProperty("site", "b")));
    b.put(MqttPublish.CONTENT_TYPE, "text/plain").put(MqttPublish.RESPONSE_TOPIC, "re/1");
    b.put(MqttPublish.PAYLOAD_FORMAT, 1L);
    MqttPublish.putCorrelationData(b, new byte[] {1, 2, 3});
    return b.body(body).build();
  }

  /** A channel whose encoder and decoder speak {@code version}, as after a client's CONNECT. */
  private static EmbeddedChannel channel(MqttVersion version) {
    EmbeddedChannel ch = new EmbeddedChannel(new MqttDecoder(1 << 20), MqttEncoder.INSTANCE);
    MqttConnectMessage connect =
        MqttMessageBuilders.connect().clientId("c").protocolVersion(version).build();
    EmbeddedChannel enc = new EmbeddedChannel(MqttEncoder.INSTANCE);
    enc.writeOutbound(connect);
    ByteBuf bytes = enc.readOutbound();
    ch.writeInbound(bytes);
    ch.readInbound(); // the CONNECT: the channel now speaks its version
    return ch;
  }

  @Test
  void mqtt311BytesAreNettysBytes() {
    for (int size : new int[] {0, 5, 200, 20_000}) {
      for (boolean retain : new boolean[] {false, true}) {
        Message m = message(size);
        EmbeddedChannel ch = channel(MqttVersion.MQTT_3_1_1);
        ch.writeOutbound(
            MqttPublishes.toPublish(m, "sensors/é/temp", 0, 0, null, new int[0], -1, retain));
        ByteBuf netty = ch.readOutbound();
        ByteBuf ours = MqttPublishes.encodeQos0(m, "sensors/é/temp", null, retain);
        assertEquals(ByteBufUtil.hexDump(netty), ByteBufUtil.hexDump(ours), size + " " + retain);
        netty.release();
        ours.release();
      }
    }
  }

  @Test
  void mqtt5BytesDecodeToTheSamePacket() {
    for (int size : new int[] {0, 200, 20_000}) {
      Message m = message(size);
      io.netty.handler.codec.mqtt.MqttProperties base = MqttPublishes.properties(m);
      EmbeddedChannel ch = channel(MqttVersion.MQTT_5);
      ch.writeInbound(MqttPublishes.encodeQos0(m, "sensors/é/temp", base, true));
      io.netty.handler.codec.mqtt.MqttMessage read = ch.readInbound();
      if (read.decoderResult().isFailure()) {
        throw new AssertionError("not decoded", read.decoderResult().cause());
      }
      MqttPublishMessage p = (MqttPublishMessage) read;
      assertEquals("sensors/é/temp", p.variableHeader().topicName());
      assertEquals(0, p.fixedHeader().qosLevel().value());
      assertEquals(true, p.fixedHeader().isRetain());
      assertArrayEquals(m.body(), ByteBufUtil.getBytes(p.payload()));
      io.netty.handler.codec.mqtt.MqttProperties props = p.variableHeader().properties();
      List<String> users = new ArrayList<>();
      for (Object u :
          props.getProperties(io.netty.handler.codec.mqtt.MqttProperties.USER_PROPERTY)) {
        var up = (io.netty.handler.codec.mqtt.MqttProperties.UserProperty) u;
        users.add(up.value().key + "=" + up.value().value);
      }
      assertEquals(List.of("site=a", "value=25.5", "site=b"), users);
      assertEquals(
          "text/plain",
          props.getProperty(io.netty.handler.codec.mqtt.MqttProperties.CONTENT_TYPE).value());
      assertEquals(
          1,
          props
              .getProperty(io.netty.handler.codec.mqtt.MqttProperties.PAYLOAD_FORMAT_INDICATOR)
              .value());
      assertEquals(
          "re/1",
          props.getProperty(io.netty.handler.codec.mqtt.MqttProperties.RESPONSE_TOPIC).value());
      assertArrayEquals(
          new byte[] {1, 2, 3},
          (byte[])
              props
                  .getProperty(io.netty.handler.codec.mqtt.MqttProperties.CORRELATION_DATA)
                  .value());
      p.release();
    }
  }

  @Test
  void aMessageIsEncodedOncePerVariantAndReleasedAfterItsBatch() {
    List<Runnable> later = new ArrayList<>();
    MqttDeliveries d = new MqttDeliveries(later::add);
    Message m = message(10);
    ByteBuf a = d.publishQos0(m, "t", true, false);
    assertSame(a, d.publishQos0(m, "t", true, false), "once for every session");
    String five = ByteBufUtil.hexDump(a);
    ByteBuf b = d.publishQos0(m, "t", false, false);
    assertNotEquals(five, ByteBufUtil.hexDump(b), "MQTT 5 has properties, 3.1.1 none");
    ByteBuf c = d.publishQos0(message(11), "t", true, false);
    assertNotEquals(five, ByteBufUtil.hexDump(c));
    assertEquals(1, later.size(), "one release queued for the batch");
    ByteBuf held = c.retainedDuplicate(); // as a session's write holds it
    later.forEach(Runnable::run);
    assertEquals(1, held.refCnt(), "the write's reference outlives the batch");
    held.release();
    assertEquals(0, held.refCnt());
  }
}
