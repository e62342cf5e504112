package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.mqtt.conformance.Wire.Version;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What MQTT 5 adds: topic aliases, subscription identifiers, message expiry, the maximum packet
 * size, the receive maximum, and properties a server passes on unaltered.
 */
class Mqtt5ConformanceTest extends ConformanceBase {
  private static final Version V5 = Version.V5;

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] publishWith(int qos, String topic, int id, byte[] props, String payload) {
    return Wire.publish(V5, qos << 1, utf8(topic), id, props, utf8(payload));
  }

  @Test
  @Normative(v5 = {"MQTT-3.3.2-12", "MQTT-3.3.2-11"})
  @DisplayName(
      "[MQTT-3.3.2-12] [MQTT-3.3.2-11] every topic alias from 1 to the Topic Alias Maximum of the CONNACK is taken, and the router sends none to a client that allows none")
  void everyTopicAliasUpToTheMaximumIsTaken() throws IOException {
    String p = unique("alias");
    try (RawClient pub = client(V5, "alias");
        RawClient sub = client(V5, "aliassub")) {
      long max = (Long) pub.connackProperty(0x22).get(0); // Topic Alias Maximum
      assertTrue(max >= 1);
      assertEquals(0, sub.subscribe(1, p + "/#", 0));
      for (int a = 1; a <= max; a++) {
        pub.send(publishWith(0, p + "/" + a, 0, Wire.u16Property(0x23, a), "set"));
      }
      pub.send(publishWith(0, "", 0, Wire.u16Property(0x23, (int) max), "by alias"));
      pub.send(publishWith(0, "", 0, Wire.u16Property(0x23, 1), "by alias"));
      for (int a = 1; a <= max; a++) {
        sub.delivery();
      }
      for (long a : new long[] {max, 1}) {
        Wire.Publish d = sub.delivery();
        assertEquals(p + "/" + a, d.topic());
        assertEquals("by alias", d.payload());
        assertTrue(d.property(0x23).isEmpty(), "no Topic Alias to a client that allows none");
      }
    }
  }

  @Test
  @Normative(v5 = {"MQTT-3.3.2-8", "MQTT-3.3.2-9"})
  @DisplayName(
      "[MQTT-3.3.2-8] [MQTT-3.3.2-9] a topic alias of 0 or above the Topic Alias Maximum ends the session with 0x94")
  void aTopicAliasOutOfRangeEndsTheSession() throws IOException {
    for (int alias : new int[] {0, 65, 0xFFFF}) {
      try (RawClient c = client(V5, "aliasbad")) {
        long max = (Long) c.connackProperty(0x22).get(0);
        assertTrue(alias == 0 || alias > max);
        c.send(publishWith(0, unique("aliasbad/"), 0, Wire.u16Property(0x23, alias), "x"));
        assertEquals(0x94, c.ended(), "alias " + alias);
      }
    }
    othersAreServed();
  }

  @Test
  @Normative(v5 = "MQTT-3.3.2-7")
  @DisplayName("[MQTT-3.3.2-7] topic aliases do not outlive their connection")
  void topicAliasesDoNotOutliveTheirConnection() throws IOException {
    String id = unique("aliasconn");
    try (RawClient c = RawClient.connected(router, V5, id)) {
      c.send(publishWith(1, unique("aliasconn/"), 1, Wire.u16Property(0x23, 1), "set"));
      c.ack(Wire.PUBACK, 1);
    }
    try (RawClient c = RawClient.connected(router, V5, id)) {
      c.send(publishWith(0, "", 0, Wire.u16Property(0x23, 1), "x"));
      assertEquals(0x94, c.ended());
    }
  }

  @Test
  @Normative(v5 = {"MQTT-3.3.4-3", "MQTT-3.3.4-4"})
  @DisplayName(
      "[MQTT-3.3.4-3] [MQTT-3.3.4-4] the one copy of a message carries the Subscription Identifiers of every matching subscription that has one")
  void aDeliveryCarriesTheIdentifiersOfItsSubscriptions() throws IOException {
    String p = unique("subid");
    try (RawClient c = client(V5, "subid")) {
      assertEquals(1, (long) (Long) c.connackProperty(0x29).get(0)); // identifiers available
      c.send(Wire.subscribe(V5, 1, Wire.varintProperty(0x0B, 7), List.of(p + "/+"), 0));
      assertArrayEquals(new int[] {0}, c.suback(1));
      c.send(Wire.subscribe(V5, 2, Wire.varintProperty(0x0B, 268_435_455), List.of(p + "/#"), 0));
      assertArrayEquals(new int[] {0}, c.suback(2));
      assertEquals(0, c.subscribe(3, p + "/x", 0)); // without an identifier
      c.send(Wire.publish(V5, 0, p + "/x", 0, "m"));
      Wire.Publish d = c.delivery();
      List<Object> ids = d.property(0x0B);
      assertEquals(2, ids.size(), "one copy, two identifiers: " + ids);
      assertTrue(ids.containsAll(List.of(7L, 268_435_455L)));
      c.ping(); // one copy only
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.3.4-6")
  @DisplayName(
      "[MQTT-3.3.4-6] a PUBLISH from a client with a Subscription Identifier is a protocol error")
  void aPublishWithASubscriptionIdentifierIsAProtocolError() throws IOException {
    try (RawClient c = client(V5, "pubsubid")) {
      c.send(publishWith(0, unique("pubsubid/"), 0, Wire.varintProperty(0x0B, 1), "x"));
      assertEquals(0x82, c.ended());
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.3.2-6")
  @DisplayName(
      "[MQTT-3.3.2-6] a delivery carries the Message Expiry Interval that remains of the publisher's")
  void aDeliveryCarriesTheExpiryIntervalThatRemains() throws IOException {
    String topic = unique("expiry/");
    try (RawClient c = client(V5, "expiry")) {
      assertEquals(0, c.subscribe(1, topic, 0));
      long start = System.nanoTime();
      c.send(publishWith(0, topic, 0, Wire.u32Property(0x02, 3600), "expires"));
      c.send(publishWith(0, topic, 0, new byte[0], "does not"));
      List<Object> e = c.delivery().property(0x02);
      long waitedSeconds = (System.nanoTime() - start) / 1_000_000_000L + 1;
      assertEquals(1, e.size());
      long left = (Long) e.get(0);
      assertTrue(
          left <= 3600 && left >= 3600 - waitedSeconds,
          "what remains after at most " + waitedSeconds + " s: " + left);
      assertTrue(c.delivery().property(0x02).isEmpty(), "none without one");
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.3.2-5")
  @DisplayName("[MQTT-3.3.2-5] a message whose expiry has passed is not delivered")
  void aMessageWhoseExpiryHasPassedIsNotDelivered() throws Exception {
    String topic = unique("expired/");
    long before =
        metric("bdrp_mqtt_deliveries_dropped_total", "protocol=\"mqtt5\",reason=\"expired\"");
    try (RawClient c = client(V5, "expired");
        BdrpClient bdrp =
            BdrpClient.builder().router(router.clientAddress()).name(unique("bdrp")).connect()) {
      assertEquals(0, c.subscribe(1, topic, 0));
      // A message with a deadline long past (mqtt.expiresAt, the mapping of the Message Expiry
      // Interval), as a router that took it from its publisher long ago would forward it.
      bdrp.sendAcknowledged(
              MqttTopic.put(Message.builder(), topic)
                  .put(MqttPublish.EXPIRES_AT, 1_000L)
                  .body(utf8("expired"))
                  .build())
          .get(10, TimeUnit.SECONDS);
      c.send(Wire.publish(V5, 0, topic, 0, "marker"));
      assertEquals("marker", c.delivery().payload(), "the expired message was not delivered");
    }
    assertEquals(
        before + 1,
        metric("bdrp_mqtt_deliveries_dropped_total", "protocol=\"mqtt5\",reason=\"expired\""));
  }

  @Test
  @Normative(v5 = {"MQTT-3.1.2-24", "MQTT-3.1.2-25"})
  @DisplayName(
      "[MQTT-3.1.2-24] [MQTT-3.1.2-25] a PUBLISH above the client's Maximum Packet Size is not sent to it, and the next one is")
  void aDeliveryAboveTheClientsMaximumPacketSizeIsDiscarded() throws IOException {
    String topic = unique("max/");
    Wire.Connect connect =
        new Wire.Connect(V5, unique("max")).properties(Wire.u32Property(0x27, 512));
    try (RawClient c = RawClient.connected(router, connect);
        RawClient pub = client(V5, "maxpub")) {
      assertEquals(0, c.subscribe(1, topic, 0));
      pub.send(Wire.publish(V5, 0, topic, 0, "x".repeat(1000)));
      pub.send(Wire.publish(V5, 0, topic, 0, "small"));
      Wire.Packet p = c.read();
      assertTrue(p.rest().length + 3 <= 512, "within the maximum");
      assertEquals("small", Wire.readPublish(p, V5).payload());
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.2.2-15")
  @DisplayName(
      "[MQTT-3.2.2-15] a packet above the router's Maximum Packet Size ends the session with 0x95, from its fixed header")
  void aPacketAboveTheRoutersMaximumPacketSizeEndsTheSession() throws IOException {
    try (RawClient c = client(V5, "toolarge")) {
      long max = (Long) c.connackProperty(0x27).get(0);
      ByteArrayOutputStream header = new ByteArrayOutputStream();
      header.write(0x30);
      Wire.varint(header, (int) max); // with its fixed header, one byte more than the maximum
      c.send(header.toByteArray());
      assertEquals(0x95, c.ended());
    }
    othersAreServed();
  }

  @Test
  @Normative(v5 = "MQTT-3.3.4-9")
  @DisplayName(
      "[MQTT-3.3.4-9] the router sends no more unacknowledged QoS 1 PUBLISHes than the client's Receive Maximum")
  void qos1DeliveriesStayWithinTheClientsReceiveMaximum() throws IOException {
    String topic = unique("window/");
    Wire.Connect connect =
        new Wire.Connect(V5, unique("window")).properties(Wire.u16Property(0x21, 1));
    try (RawClient c = RawClient.connected(router, connect);
        RawClient pub = client(V5, "windowpub")) {
      assertEquals(1, c.subscribe(1, topic, 1));
      for (int i = 1; i <= 2; i++) {
        pub.send(Wire.publish(V5, 1, topic, i, "m" + i));
        pub.ack(Wire.PUBACK, i); // handed to the data plane, and so offered to the subscriber
      }
      Wire.Publish first = c.delivery();
      assertEquals("m1", first.payload());
      c.send(Wire.ack(Wire.PUBACK, first.packetId()));
      c.ping(); // the PUBACK is handled, and m2 did not come: it was beyond the window
      pub.send(Wire.publish(V5, 1, topic, 3, "m3"));
      pub.ack(Wire.PUBACK, 3);
      assertEquals("m3", c.delivery().payload());
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.3.4-7")
  @DisplayName(
      "[MQTT-3.3.4-7] a client with more QoS 2 PUBLISHes unanswered than the router's Receive Maximum is disconnected with 0x93")
  void moreQos2PublishesThanTheReceiveMaximumEndTheSession() throws IOException {
    try (RawClient c = client(V5, "rm")) {
      long max = (Long) c.connackProperty(0x21).get(0);
      String topic = unique("rm/");
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      for (int id = 1; id <= max + 1; id++) {
        all.writeBytes(Wire.publish(V5, 2, topic, id, ""));
      }
      c.send(all.toByteArray());
      for (int id = 1; id <= max; id++) {
        assertEquals(0, c.ack(Wire.PUBREC, id));
      }
      assertEquals(0x93, c.ended());
    }
  }

  @Test
  @Normative(
      v5 = {"MQTT-3.3.2-15", "MQTT-3.3.2-16", "MQTT-3.3.2-17", "MQTT-3.3.2-18", "MQTT-3.3.2-20"})
  @DisplayName(
      "[MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-18] [MQTT-3.3.2-20] the Response Topic, Correlation Data, Content Type and user properties (in order) reach subscribers unaltered")
  void requestResponseAndUserPropertiesPassUnaltered() throws IOException {
    String topic = unique("props/");
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(0x03); // Content Type
    Wire.string(p, "text/plain; charset=utf-8");
    p.write(0x08); // Response Topic
    Wire.string(p, "reply/to/me");
    p.write(0x09); // Correlation Data
    Wire.bytes(p, new byte[] {0, 1, (byte) 0xFE, (byte) 0xFF});
    for (String[] u : new String[][] {{"b", "2"}, {"a", "1"}, {"b", "3"}}) {
      p.write(0x26);
      Wire.string(p, u[0]);
      Wire.string(p, u[1]);
    }
    try (RawClient c = client(V5, "props")) {
      assertEquals(0, c.subscribe(1, topic, 0));
      c.send(publishWith(0, topic, 0, p.toByteArray(), "body"));
      Wire.Publish d = c.delivery();
      assertEquals(List.of("text/plain; charset=utf-8"), d.property(0x03));
      assertEquals(List.of("reply/to/me"), d.property(0x08));
      assertArrayEquals(
          new byte[] {0, 1, (byte) 0xFE, (byte) 0xFF}, (byte[]) d.property(0x09).get(0));
      List<Object> users = d.property(0x26);
      assertEquals(3, users.size());
      assertArrayEquals(new String[] {"b", "2"}, (String[]) users.get(0));
      assertArrayEquals(new String[] {"a", "1"}, (String[]) users.get(1));
      assertArrayEquals(new String[] {"b", "3"}, (String[]) users.get(2));
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.3.2-4")
  @DisplayName("[MQTT-3.3.2-4] the Payload Format Indicator reaches subscribers unaltered")
  void thePayloadFormatIndicatorPassesUnaltered() throws IOException {
    String topic = unique("pfi/");
    try (RawClient c = client(V5, "pfi")) {
      assertEquals(0, c.subscribe(1, topic, 0));
      c.send(publishWith(0, topic, 0, Wire.byteProperty(0x01, 1), "text"));
      assertEquals(List.of(1L), c.delivery().property(0x01));
    }
  }
}
