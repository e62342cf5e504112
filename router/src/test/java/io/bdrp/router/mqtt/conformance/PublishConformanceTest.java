package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.mqtt.conformance.Wire.Version;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * PUBLISH from a client and its acknowledgements (MQTT 5 §3.3-§3.7, §4.3; MQTT 3.1.1 §3.3-§3.7,
 * §4.3): topic names, the fixed header's flags, packet identifiers, the QoS 1 and QoS 2 flows.
 */
class PublishConformanceTest extends ConformanceBase {

  /** Sends {@code packet} on a new session and checks the router ends the session for it. */
  private static void endsTheSession(Version v, byte[] packet) throws IOException {
    try (RawClient c = client(v, "bad")) {
      c.send(packet);
      int reason = c.ended();
      assertTrue(v.v5() ? reason >= 0x80 : reason == -1, "reason " + reason);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.3.2-2", v311 = "MQTT-3.3.2-2")
  @DisplayName("[MQTT-3.3.2-2] [3.1.1 MQTT-3.3.2-2] a topic name with a wildcard ends the session")
  void aTopicNameWithAWildcardEndsTheSession(Version v) throws IOException {
    for (String topic : List.of("a/+", "a/#", "#", "+", "a+b")) {
      endsTheSession(v, Wire.publish(v, 0, utf8(topic), 0, new byte[0], utf8("x")));
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-4.7.3-1", v311 = "MQTT-4.7.3-1")
  @DisplayName(
      "[MQTT-4.7.3-1] [3.1.1 MQTT-4.7.3-1] an empty topic name (without a topic alias) ends the session")
  void anEmptyTopicNameEndsTheSession(Version v) throws IOException {
    endsTheSession(v, Wire.publish(v, 2, new byte[0], 1, new byte[0], utf8("x")));
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-1.5.4-1", "MQTT-1.5.4-2", "MQTT-4.7.3-2"},
      v311 = {"MQTT-1.5.3-1", "MQTT-1.5.3-2", "MQTT-4.7.3-2"})
  @DisplayName(
      "[MQTT-1.5.4-1] [MQTT-1.5.4-2] [MQTT-4.7.3-2] [3.1.1 MQTT-1.5.3-1] [3.1.1 MQTT-1.5.3-2] [3.1.1 MQTT-4.7.3-2] a topic name of ill-formed UTF-8 or with U+0000 ends the session")
  void aTopicNameThatIsNotWellFormedUtf8EndsTheSession(Version v) throws IOException {
    byte[][] topics = {
      {'a', 0, 'b'}, // U+0000
      {'a', (byte) 0xED, (byte) 0xA0, (byte) 0x80}, // a surrogate, U+D800
      {'a', (byte) 0xC0, (byte) 0xAF}, // an overlong '/'
      {'a', (byte) 0xFF}
    };
    for (byte[] topic : topics) {
      endsTheSession(v, Wire.publish(v, 0, topic, 0, new byte[0], utf8("x")));
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.3.1-4", v311 = "MQTT-3.3.1-4")
  @DisplayName(
      "[MQTT-3.3.1-4] [3.1.1 MQTT-3.3.1-4] a PUBLISH with both QoS bits set is malformed and ends the session")
  void qos3IsMalformed(Version v) throws IOException {
    endsTheSession(v, Wire.publish(v, 0x06, utf8(unique("qos3/")), 1, new byte[0], utf8("x")));
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-2.2.1-3", v311 = "MQTT-2.3.1-1")
  @DisplayName(
      "[MQTT-2.2.1-3] [3.1.1 MQTT-2.3.1-1] a QoS 1 or 2 PUBLISH with packet identifier 0 ends the session")
  void aPacketIdentifierOfZeroEndsTheSession(Version v) throws IOException {
    endsTheSession(v, Wire.publish(v, 1, unique("id0/"), 0, "x"));
    endsTheSession(v, Wire.publish(v, 2, unique("id0/"), 0, "x"));
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.3.1-2", "MQTT-3.3.1-3", "MQTT-2.2.1-2", "MQTT-2.2.1-4"},
      v311 = {"MQTT-3.3.1-2", "MQTT-3.3.1-3", "MQTT-2.3.1-5", "MQTT-2.3.1-4"})
  @DisplayName(
      "[MQTT-3.3.1-2] [MQTT-3.3.1-3] [MQTT-2.2.1-2] [MQTT-2.2.1-4] [3.1.1 MQTT-3.3.1-2] [3.1.1 MQTT-3.3.1-3] [3.1.1 MQTT-2.3.1-5] [3.1.1 MQTT-2.3.1-4] the router's PUBLISHes set DUP on their own: 0 at QoS 0, no packet identifier at QoS 0, a non-zero one at QoS 1")
  void deliveriesSetDupAndPacketIdentifiersOfTheirOwn(Version v) throws IOException {
    String topic = unique("dup/");
    try (RawClient q0 = client(v, "q0");
        RawClient q1 = client(v, "q1");
        RawClient pub = client(v, "pub")) {
      assertEquals(0, q0.subscribe(1, topic, 0));
      assertEquals(1, q1.subscribe(1, topic, 1));
      // A QoS 1 PUBLISH sent again (DUP 1), as after a reconnection.
      pub.send(Wire.publish(v, 0x08 | 0x02, utf8(topic), 9, new byte[0], utf8("again")));
      assertEquals(0, pub.ack(Wire.PUBACK, 9));
      Wire.Publish at0 = q0.delivery();
      assertEquals(0, at0.flags(), "QoS 0, DUP 0, RETAIN 0");
      assertEquals(0, at0.packetId(), "no packet identifier");
      assertEquals("again", at0.payload());
      Wire.Publish at1 = q1.delivery();
      assertEquals(1, at1.qos());
      assertFalse(at1.dup(), "a first delivery, whatever the publisher's DUP");
      assertTrue(at1.packetId() != 0);
      assertEquals("again", at1.payload());
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.3.4-1", "MQTT-2.2.1-5", "MQTT-4.3.2-4"},
      v311 = {"MQTT-3.3.4-1", "MQTT-2.3.1-6", "MQTT-4.3.2-2"})
  @DisplayName(
      "[MQTT-3.3.4-1] [MQTT-2.2.1-5] [MQTT-4.3.2-4] [3.1.1 MQTT-3.3.4-1] [3.1.1 MQTT-2.3.1-6] [3.1.1 MQTT-4.3.2-2] a QoS 1 PUBLISH gets a PUBACK with its packet identifier, a QoS 0 one nothing")
  void qos1IsAnsweredWithAPuback(Version v) throws IOException {
    try (RawClient c = client(v, "qos1")) {
      String topic = unique("qos1/");
      c.send(Wire.publish(v, 0, topic, 0, "zero"));
      c.send(Wire.publish(v, 1, topic, 0x1234, "one"));
      assertEquals(0, c.ack(Wire.PUBACK, 0x1234), "the QoS 0 PUBLISH had no answer before it");
      c.send(Wire.publish(v, 1, topic, 0xFFFF, "highest"));
      assertEquals(0, c.ack(Wire.PUBACK, 0xFFFF));
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-2.2.1-5", "MQTT-4.3.3-8", "MQTT-4.3.3-10", "MQTT-4.3.3-11", "MQTT-4.3.3-12"},
      v311 = {"MQTT-2.3.1-6", "MQTT-4.3.3-2"})
  @DisplayName(
      "[MQTT-2.2.1-5] [MQTT-4.3.3-8] [MQTT-4.3.3-10] [MQTT-4.3.3-11] [MQTT-4.3.3-12] [3.1.1 MQTT-2.3.1-6] [3.1.1 MQTT-4.3.3-2] QoS 2: PUBREC, a repeat before the PUBREL is answered again and not delivered again, PUBCOMP for the PUBREL, then the identifier is new")
  void qos2IsDeliveredOnceAndTheFlowCompletes(Version v) throws IOException {
    String topic = unique("qos2/");
    try (RawClient sub = client(v, "sub2");
        RawClient pub = client(v, "pub2")) {
      assertEquals(2, sub.subscribe(1, topic, 2), "QoS 2 granted");
      pub.send(Wire.publish(v, 2, topic, 7, "first"));
      assertEquals(0, pub.ack(Wire.PUBREC, 7));
      pub.send(Wire.publish(v, 0x08 | 0x04, utf8(topic), 7, new byte[0], utf8("first")));
      assertEquals(0, pub.ack(Wire.PUBREC, 7), "the repeat is answered");
      pub.send(Wire.ack(Wire.PUBREL, 7));
      assertEquals(0, pub.ack(Wire.PUBCOMP, 7));
      pub.send(Wire.publish(v, 2, topic, 7, "second"));
      assertEquals(0, pub.ack(Wire.PUBREC, 7));
      pub.send(Wire.ack(Wire.PUBREL, 7));
      assertEquals(0, pub.ack(Wire.PUBCOMP, 7));
      Wire.Publish a = sub.delivery();
      assertEquals("first", a.payload());
      assertEquals(2, a.qos(), "delivered at QoS 2");
      Wire.Publish b = sub.delivery();
      assertEquals("second", b.payload(), "the repeat was not delivered");
      for (Wire.Publish x : new Wire.Publish[] {a, b}) {
        sub.send(Wire.ack(Wire.PUBREC, x.packetId()));
        assertEquals(0, sub.ack(Wire.PUBREL, x.packetId()), "the router releases it");
        sub.send(Wire.ack(Wire.PUBCOMP, x.packetId()));
      }
      sub.ping(); // nothing more
    }
  }
}
