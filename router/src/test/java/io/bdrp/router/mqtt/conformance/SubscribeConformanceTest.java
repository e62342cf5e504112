package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.mqtt.conformance.Wire.Version;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SUBSCRIBE, SUBACK, UNSUBSCRIBE and UNSUBACK (MQTT 5 §3.8-§3.11, §4.7; MQTT 3.1.1 §3.8-§3.11,
 * §4.7).
 */
class SubscribeConformanceTest extends ConformanceBase {

  private static void endsTheSession(Version v, byte[] packet) throws IOException {
    try (RawClient c = client(v, "bad")) {
      c.send(packet);
      int reason = c.ended();
      assertTrue(v.v5() ? reason >= 0x80 : reason == -1, "reason " + reason);
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.8.3-2", v311 = "MQTT-3.8.3-3")
  @DisplayName(
      "[MQTT-3.8.3-2] [3.1.1 MQTT-3.8.3-3] a SUBSCRIBE without a topic filter is a protocol error that ends the session")
  void aSubscribeWithoutFiltersEndsTheSession(Version v) throws IOException {
    try (RawClient c = client(v, "nofilter")) {
      c.send(Wire.subscribe(v, 1, new byte[0], List.of()));
      assertEquals(v.v5() ? 0x82 : -1, c.ended());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.8.1-1", "MQTT-3.10.1-1", "MQTT-2.1.3-1"},
      v311 = {"MQTT-3.8.1-1", "MQTT-3.10.1-1", "MQTT-2.2.2-1", "MQTT-2.2.2-2"})
  @DisplayName(
      "[MQTT-3.8.1-1] [MQTT-3.10.1-1] [MQTT-2.1.3-1] [3.1.1 MQTT-3.8.1-1] [3.1.1 MQTT-3.10.1-1] [3.1.1 MQTT-2.2.2-1] [3.1.1 MQTT-2.2.2-2] a SUBSCRIBE or UNSUBSCRIBE whose fixed header flags are not 0010 is malformed and ends the session")
  void subscribeAndUnsubscribeFlagsMustBe0010(Version v) throws IOException {
    byte[] sub = Wire.subscribe(v, 1, unique("flags/"), 0);
    byte[] unsub = Wire.unsubscribe(v, 1, List.of("x"));
    for (int flags : new int[] {0x0, 0x3, 0xA, 0x6}) {
      byte[] s = sub.clone();
      s[0] = (byte) (0x80 | flags);
      endsTheSession(v, s);
      byte[] u = unsub.clone();
      u[0] = (byte) (0xA0 | flags);
      endsTheSession(v, u);
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.8.3-5", v311 = "MQTT-3.8.3-4")
  @DisplayName(
      "[MQTT-3.8.3-5] [3.1.1 MQTT-3.8.3-4] a requested QoS of 3 makes the SUBSCRIBE malformed")
  void aRequestedQosOf3IsMalformed(Version v) throws IOException {
    endsTheSession(v, Wire.subscribe(v, 1, new byte[0], List.of(unique("q3/")), 0x03));
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.8.3-5", v311 = "MQTT-3.8.3-4")
  @DisplayName(
      "[MQTT-3.8.3-5] [3.1.1 MQTT-3.8.3-4] reserved bits set in the subscription options make the SUBSCRIBE malformed")
  void reservedSubscriptionOptionBitsAreMalformed(Version v) throws IOException {
    int[] reserved = v.v5() ? new int[] {0x40, 0x80} : new int[] {0x04, 0x08, 0x10, 0x20, 0x40};
    for (int bit : reserved) {
      // The reserved bit in the second filter's options; the first's are valid.
      List<String> filters = List.of(unique("rsv/"), unique("rsv/"));
      endsTheSession(v, Wire.subscribe(v, 1, new byte[0], filters, 1, 1 | bit));
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {
        "MQTT-3.8.4-1", "MQTT-3.8.4-2", "MQTT-3.8.4-5", "MQTT-3.8.4-6", "MQTT-3.8.4-7",
        "MQTT-3.9.3-1", "MQTT-3.9.3-2", "MQTT-4.7.1-1", "MQTT-4.7.1-2", "MQTT-4.7.3-1"
      },
      v311 = {
        "MQTT-3.8.4-1",
        "MQTT-3.8.4-2",
        "MQTT-3.8.4-4",
        "MQTT-3.8.4-5",
        "MQTT-3.9.3-1",
        "MQTT-3.9.3-2",
        "MQTT-4.7.1-2",
        "MQTT-4.7.1-3",
        "MQTT-4.7.3-1"
      })
  @DisplayName(
      "[MQTT-3.8.4-1] [MQTT-3.8.4-2] [MQTT-3.8.4-5] [MQTT-3.8.4-6] [MQTT-3.8.4-7] [MQTT-3.9.3-1] [MQTT-3.9.3-2] [MQTT-4.7.1-1] [MQTT-4.7.1-2] [MQTT-4.7.3-1] [3.1.1 MQTT-3.8.4-1] [3.1.1 MQTT-3.8.4-2] [3.1.1 MQTT-3.8.4-4] [3.1.1 MQTT-3.8.4-5] [3.1.1 MQTT-3.9.3-1] [3.1.1 MQTT-3.9.3-2] [3.1.1 MQTT-4.7.1-2] [3.1.1 MQTT-4.7.1-3] [3.1.1 MQTT-4.7.3-1] one SUBACK with the SUBSCRIBE's packet identifier and a code per filter, in order: the QoS granted, or a failure for an invalid filter")
  void oneSubackWithACodePerFilterInOrder(Version v) throws IOException {
    String p = unique("order");
    List<String> filters =
        List.of(p + "/a", p + "/b#", p + "/+/c", p + "+", "", p + "/#/y", p + "/#");
    int[] qos = {0, 1, 2, 1, 0, 1, 1};
    int bad = v.v5() ? 0x8F : 0x80; // MQTT 5: Topic Filter invalid; 3.1.1 has one failure code
    try (RawClient c = client(v, "order")) {
      c.send(Wire.subscribe(v, 0xBEEF, new byte[0], filters, qos));
      assertArrayEquals(new int[] {0, bad, 2, bad, bad, bad, 1}, c.suback(0xBEEF));
      c.ping(); // one SUBACK only
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.8.4-8", "MQTT-3.3.4-2"},
      v311 = {"MQTT-3.8.4-6", "MQTT-3.3.5-1"})
  @DisplayName(
      "[MQTT-3.8.4-8] [MQTT-3.3.4-2] [3.1.1 MQTT-3.8.4-6] [3.1.1 MQTT-3.3.5-1] a delivery goes at the lower of the published QoS and the best QoS granted to the matching subscriptions, once")
  void deliveriesGoAtTheLowerOfPublishedAndGrantedQos(Version v) throws IOException {
    String p = unique("min");
    try (RawClient sub = client(v, "min");
        RawClient pub = client(v, "minpub")) {
      assertEquals(0, sub.subscribe(1, p + "/zero", 0));
      assertEquals(0, sub.subscribe(2, p + "/both/+", 0));
      assertEquals(1, sub.subscribe(3, p + "/both/#", 1));
      pub.send(Wire.publish(v, 1, p + "/zero", 1, "a"));
      pub.ack(Wire.PUBACK, 1);
      Wire.Publish a = sub.delivery();
      assertEquals(0, a.qos(), "granted 0, published 1");
      pub.send(Wire.publish(v, 0, p + "/both/x", 0, "b"));
      Wire.Publish b = sub.delivery();
      assertEquals(0, b.qos(), "published 0");
      pub.send(Wire.publish(v, 2, p + "/both/x", 2, "c"));
      pub.ack(Wire.PUBREC, 2);
      Wire.Publish c = sub.delivery();
      assertEquals("c", c.payload());
      assertEquals(1, c.qos(), "the best granted of two overlapping subscriptions");
      sub.send(Wire.ack(Wire.PUBACK, c.packetId()));
      sub.ping(); // and no second copy
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.8.4-3", v311 = "MQTT-3.8.4-3")
  @DisplayName(
      "[MQTT-3.8.4-3] [3.1.1 MQTT-3.8.4-3] subscribing to a filter again replaces its subscription")
  void subscribingAgainReplacesTheSubscription(Version v) throws IOException {
    String topic = unique("again/");
    try (RawClient sub = client(v, "again");
        RawClient pub = client(v, "againpub")) {
      assertEquals(0, sub.subscribe(1, topic, 0));
      assertEquals(1, sub.subscribe(2, topic, 1));
      pub.send(Wire.publish(v, 1, topic, 1, "x"));
      Wire.Publish d = sub.delivery();
      assertEquals(1, d.qos(), "the new subscription's QoS");
      sub.send(Wire.ack(Wire.PUBACK, d.packetId()));
      sub.ping(); // one copy
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.10.3-2", v311 = "MQTT-3.10.3-2")
  @DisplayName(
      "[MQTT-3.10.3-2] [3.1.1 MQTT-3.10.3-2] an UNSUBSCRIBE without a topic filter is a protocol error that ends the session")
  void anUnsubscribeWithoutFiltersEndsTheSession(Version v) throws IOException {
    try (RawClient c = client(v, "nounsub")) {
      c.send(Wire.unsubscribe(v, 1, List.of()));
      assertEquals(v.v5() ? 0x82 : -1, c.ended());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {
        "MQTT-3.10.4-1",
        "MQTT-3.10.4-2",
        "MQTT-3.10.4-4",
        "MQTT-3.10.4-5",
        "MQTT-3.10.4-6",
        "MQTT-3.11.3-1",
        "MQTT-3.11.3-2"
      },
      v311 = {"MQTT-3.10.4-1", "MQTT-3.10.4-2", "MQTT-3.10.4-4", "MQTT-3.10.4-5", "MQTT-3.10.4-6"})
  @DisplayName(
      "[MQTT-3.10.4-1] [MQTT-3.10.4-2] [MQTT-3.10.4-4] [MQTT-3.10.4-5] [MQTT-3.10.4-6] [MQTT-3.11.3-1] [MQTT-3.11.3-2] [3.1.1 MQTT-3.10.4-1] [3.1.1 MQTT-3.10.4-2] [3.1.1 MQTT-3.10.4-4] [3.1.1 MQTT-3.10.4-5] [3.1.1 MQTT-3.10.4-6] an UNSUBSCRIBE removes the subscriptions whose filters it names character for character and gets one UNSUBACK with its packet identifier, even for filters not subscribed")
  void anUnsubscribeRemovesExactlyTheFiltersItNames(Version v) throws IOException {
    String p = unique("unsub");
    try (RawClient sub = client(v, "unsub");
        RawClient pub = client(v, "unsubpub")) {
      assertEquals(0, sub.subscribe(1, p + "/a", 0));
      assertEquals(0, sub.subscribe(2, p + "/+", 0));
      assertEquals(0, sub.subscribe(3, p + "/marker/x", 0));
      // "p/b" matches "p/+" but is not its text: nothing is removed for it.
      sub.send(Wire.unsubscribe(v, 0x0102, List.of(p + "/a", p + "/b", p + "/+")));
      Wire.Packet ack = sub.expect(Wire.UNSUBACK);
      assertEquals(0, ack.flags());
      assertEquals(0x0102, ack.u16(0));
      if (v.v5()) {
        int[] pos = {2};
        Wire.readProperties(ack.rest(), pos);
        byte[] codes = java.util.Arrays.copyOfRange(ack.rest(), pos[0], ack.rest().length);
        assertArrayEquals(
            new byte[] {0x00, 0x11, 0x00}, codes, "success, no subscription, success");
      } else {
        assertEquals(2, ack.rest().length, "3.1.1: the packet identifier only");
      }
      pub.send(Wire.publish(v, 0, p + "/a", 0, "gone"));
      pub.send(Wire.publish(v, 0, p + "/marker/x", 0, "marker"));
      assertEquals("marker", sub.delivery().payload(), "nothing for the removed subscriptions");
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.8.3-3")
  @DisplayName("[MQTT-3.8.3-3] a No Local subscription does not get the session's own messages")
  void noLocalSubscriptionsDoNotGetTheSessionsOwnMessages() throws IOException {
    String topic = unique("nolocal/");
    try (RawClient c = client(Version.V5, "nolocal");
        RawClient other = client(Version.V5, "nolocalother")) {
      c.send(Wire.subscribe(Version.V5, 1, new byte[0], List.of(topic), 0x04));
      assertArrayEquals(new int[] {0}, c.suback(1));
      c.send(Wire.publish(Version.V5, 0, topic, 0, "own"));
      other.send(Wire.publish(Version.V5, 0, topic, 0, "other's"));
      assertEquals("other's", c.delivery().payload());
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.8.3-1", v311 = "MQTT-3.8.3-1")
  @DisplayName(
      "[MQTT-3.8.3-1] [3.1.1 MQTT-3.8.3-1] topic filters are UTF-8 strings: a multi-byte filter is subscribed to and matched as written")
  void topicFiltersAreUtf8Strings() throws IOException {
    for (Version v : Version.values()) {
      String topic = unique("caf\u00e9/\u00fcber/");
      try (RawClient c = client(v, "utf8")) {
        assertEquals(0, c.subscribe(1, topic, 0));
        ByteArrayOutputStream decomposed = new ByteArrayOutputStream();
        decomposed.writeBytes(
            topic.replace("\u00e9", "e\u0301").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        c.send(Wire.publish(v, 0, decomposed.toByteArray(), 0, new byte[0], new byte[] {'n'}));
        c.send(Wire.publish(v, 0, topic, 0, "y"));
        Wire.Publish d = c.delivery();
        assertEquals(topic, d.topic(), "the name as written, not normalised");
        assertEquals("y", d.payload());
      }
    }
  }
}
