package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.mqtt.conformance.Wire.Version;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** CONNECT and CONNACK (MQTT 5 §3.1, §3.2; MQTT 3.1.1 §3.1, §3.2) on a router's MQTT port. */
class ConnectConformanceTest extends ConformanceBase {

  /**
   * How a CONNECT the router does not take ends: a CONNACK with a failure code and session present
   * 0, then the end of the connection (returns the code), or the end without a CONNACK (-1).
   */
  private static int refused(RawClient c) throws IOException {
    int first = c.in.read();
    if (first == -1) {
      return -1;
    }
    assertEquals(Wire.CONNACK, first >> 4, "a CONNACK or nothing");
    byte[] rest = c.readAfter(first).rest();
    assertEquals(0, rest[0], "session present 0 and the reserved bits 0");
    assertTrue((rest[1] & 0xFF) >= 0x01, "a failure code");
    assertTrue(c.closedWithoutAPacket(), "the connection closed after the refusal");
    return rest[1] & 0xFF;
  }

  private static int refused(Version v, byte[] connect) throws IOException {
    try (RawClient c = RawClient.open(router, v)) {
      c.send(connect);
      return refused(c);
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.1.0-1", v311 = "MQTT-3.1.0-1")
  @DisplayName(
      "[MQTT-3.1.0-1] [3.1.1 MQTT-3.1.0-1] a connection whose first packet is not CONNECT is closed")
  void aFirstPacketOtherThanConnectClosesTheConnection() throws IOException {
    try (RawClient c = RawClient.open(router, Version.V5)) {
      c.send(Wire.publish(Version.V311, 0, "first", 0, "x"));
      assertTrue(c.closedWithoutAPacket());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.0-2", v311 = "MQTT-3.1.0-2")
  @DisplayName(
      "[MQTT-3.1.0-2] [3.1.1 MQTT-3.1.0-2] a second CONNECT is a protocol error that ends the session")
  void aSecondConnectEndsTheSession(Version v) throws IOException {
    try (RawClient c = client(v, "twice")) {
      c.send(new Wire.Connect(v, unique("again")).bytes());
      assertEquals(v.v5() ? 0x82 : -1, c.ended());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.2-1", v311 = "MQTT-3.1.2-1")
  @DisplayName("[MQTT-3.1.2-1] [3.1.1 MQTT-3.1.2-1] a protocol name other than MQTT is not taken")
  void aProtocolNameOtherThanMqttIsRefused(Version v) throws IOException {
    Wire.Connect c = new Wire.Connect(v, unique("name"));
    c.protocolName = "MQTX";
    refused(v, c.bytes());
    othersAreServed();
  }

  @Test
  @Normative(v5 = "MQTT-3.1.2-2", v311 = "MQTT-3.1.2-2")
  @DisplayName(
      "[MQTT-3.1.2-2] [3.1.1 MQTT-3.1.2-2] a protocol level the router does not speak gets CONNACK 0x01 and the connection closes")
  void anUnsupportedProtocolLevelIsRefusedWith0x01() throws IOException {
    for (int level : new int[] {0, 3, 6, 255}) {
      Wire.Connect c = new Wire.Connect(Version.V311, unique("level"));
      c.level = level;
      // 0x01 is what 3.1.1 requires and what a 3.1 or 3.1.1 client can read; MQTT 5 allows it
      // (it may send 0x84, Unsupported Protocol Version, to a client it knows speaks MQTT 5).
      assertEquals(0x01, refused(Version.V311, c.bytes()), "level " + level);
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.1.2-3", "MQTT-3.1.4-1"},
      v311 = {"MQTT-3.1.2-3", "MQTT-3.1.4-1"})
  @DisplayName(
      "[MQTT-3.1.2-3] [MQTT-3.1.4-1] [3.1.1 MQTT-3.1.2-3] [3.1.1 MQTT-3.1.4-1] a CONNECT with the reserved flag set is closed without a CONNACK")
  void theReservedConnectFlagMustBeZero(Version v) throws IOException {
    try (RawClient c = RawClient.open(router, v)) {
      c.send(new Wire.Connect(v, unique("reserved")).flags(0x03).bytes());
      assertTrue(c.closedWithoutAPacket());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.1.2-11", "MQTT-3.1.2-13"},
      v311 = {"MQTT-3.1.2-11", "MQTT-3.1.2-13", "MQTT-3.1.2-15"})
  @DisplayName(
      "[MQTT-3.1.2-11] [MQTT-3.1.2-13] [3.1.1 MQTT-3.1.2-11] [3.1.1 MQTT-3.1.2-13] [3.1.1 MQTT-3.1.2-15] without a will, a will QoS or will retain flag makes the CONNECT malformed")
  void willQosAndRetainWithoutAWillAreMalformed(Version v) throws IOException {
    for (int flags : new int[] {0x02 | 0x08, 0x02 | 0x10, 0x02 | 0x20}) {
      int code = refused(v, new Wire.Connect(v, unique("nowill")).flags(flags).bytes());
      assertNotEquals(0, code, "flags " + flags);
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.2-12", v311 = "MQTT-3.1.2-14")
  @DisplayName("[MQTT-3.1.2-12] [3.1.1 MQTT-3.1.2-14] a will QoS of 3 makes the CONNECT malformed")
  void aWillQosOf3IsMalformed(Version v) throws IOException {
    Wire.Connect c = new Wire.Connect(v, unique("will3")).will(unique("will3/"), 3, "w");
    refused(v, c.bytes());
    othersAreServed();
  }

  @Test
  @Normative(v311 = "MQTT-3.1.2-22")
  @DisplayName(
      "[3.1.1 MQTT-3.1.2-22] in MQTT 3.1.1 a password without a user name makes the CONNECT malformed")
  void aPasswordWithoutAUserNameIsMalformedIn311() throws IOException {
    Wire.Connect c = new Wire.Connect(Version.V311, unique("pw")).flags(0x02 | 0x40);
    c.password = "secret".getBytes(StandardCharsets.UTF_8);
    refused(Version.V311, c.bytes());
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.3-5", v311 = "MQTT-3.1.3-5")
  @DisplayName(
      "[MQTT-3.1.3-5] [3.1.1 MQTT-3.1.3-5] client identifiers of 1 to 23 letters and digits are taken")
  void clientIdentifiersOfOneTo23LettersAndDigitsAreTaken(Version v) throws IOException {
    String suffix = v.v5() ? "5" : "3";
    for (String id : List.of("a" + suffix, "0123456789abcdefghijXY" + suffix)) {
      try (RawClient c = RawClient.connected(router, v, id)) {
        c.ping();
      }
    }
  }

  @Test
  @Normative(v5 = {"MQTT-3.1.3-6", "MQTT-3.1.3-7"})
  @DisplayName(
      "[MQTT-3.1.3-6] [MQTT-3.1.3-7] an empty client identifier gets a unique one, told in the CONNACK")
  void anEmptyClientIdentifierIsAssignedAUniqueOne() throws IOException {
    try (RawClient a = RawClient.connected(router, Version.V5, "");
        RawClient b = RawClient.connected(router, Version.V5, "")) {
      List<Object> ida = a.connackProperty(0x12); // Assigned Client Identifier
      List<Object> idb = b.connackProperty(0x12);
      assertEquals(1, ida.size());
      assertEquals(1, idb.size());
      assertFalse(((String) ida.get(0)).isEmpty());
      assertNotEquals(ida.get(0), idb.get(0));
      a.ping();
      b.ping(); // neither took the other over
    }
  }

  @Test
  @Normative(v311 = "MQTT-3.1.3-6")
  @DisplayName("[3.1.1 MQTT-3.1.3-6] an empty client identifier with a clean session is taken")
  void anEmptyClientIdentifierWithACleanSessionIsTakenIn311() throws IOException {
    try (RawClient a = RawClient.connected(router, Version.V311, "");
        RawClient b = RawClient.connected(router, Version.V311, "")) {
      a.ping();
      b.ping();
    }
  }

  @Test
  @Normative(v311 = {"MQTT-3.1.3-8", "MQTT-3.2.2-4", "MQTT-3.2.2-5"})
  @DisplayName(
      "[3.1.1 MQTT-3.1.3-8] [3.1.1 MQTT-3.2.2-4] [3.1.1 MQTT-3.2.2-5] an empty client identifier without a clean session gets CONNACK 0x02, session present 0, and the connection closes")
  void anEmptyClientIdentifierWithoutACleanSessionIsRejectedIn311() throws IOException {
    assertEquals(0x02, refused(Version.V311, new Wire.Connect(Version.V311, "").flags(0).bytes()));
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.4-3", v311 = "MQTT-3.1.4-2")
  @DisplayName(
      "[MQTT-3.1.4-3] [3.1.1 MQTT-3.1.4-2] a CONNECT with a client identifier already connected ends the older session (MQTT 5: DISCONNECT 0x8E)")
  void aSecondSessionWithTheSameIdentifierTakesOver(Version v) throws IOException {
    String id = unique("takeover");
    try (RawClient first = RawClient.connected(router, v, id);
        RawClient second = RawClient.connected(router, v, id)) {
      assertEquals(v.v5() ? 0x8E : -1, first.ended());
      second.ping();
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.2.0-1", "MQTT-3.2.0-2", "MQTT-3.2.2-1", "MQTT-3.2.2-2", "MQTT-3.1.4-5"},
      v311 = {"MQTT-3.2.0-1", "MQTT-3.2.2-1", "MQTT-3.1.4-4"})
  @DisplayName(
      "[MQTT-3.2.0-1] [MQTT-3.2.0-2] [MQTT-3.2.2-1] [MQTT-3.2.2-2] [MQTT-3.1.4-5] [3.1.1 MQTT-3.2.0-1] [3.1.1 MQTT-3.2.2-1] [3.1.1 MQTT-3.1.4-4] an accepted CONNECT gets one CONNACK, first, code 0, session present 0")
  void anAcceptedConnectGetsOneConnackFirst(Version v) throws IOException {
    try (RawClient c = RawClient.open(router, v)) {
      // The CONNECT and a PINGREQ in one write: the CONNACK comes first, and only once.
      ByteArrayOutputStream both = new ByteArrayOutputStream();
      both.writeBytes(new Wire.Connect(v, unique("connack")).bytes());
      both.writeBytes(Wire.pingreq());
      c.send(both.toByteArray());
      Wire.Packet ack = c.read();
      assertEquals(0x20, ack.first(), "CONNACK, flags 0");
      assertEquals(0, ack.rest()[0], "acknowledge flags: reserved bits and session present 0");
      assertEquals(0, ack.rest()[1], "success");
      if (!v.v5()) {
        assertEquals(2, ack.rest().length);
      }
      assertEquals(Wire.PINGRESP, c.read().type(), "no second CONNACK");
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.2.2-6", "MQTT-3.2.2-7", "MQTT-3.1.4-6"},
      v311 = {"MQTT-3.2.2-4", "MQTT-3.2.2-5", "MQTT-3.1.4-5"})
  @DisplayName(
      "[MQTT-3.2.2-6] [MQTT-3.2.2-7] [MQTT-3.1.4-6] [3.1.1 MQTT-3.2.2-4] [3.1.1 MQTT-3.2.2-5] [3.1.1 MQTT-3.1.4-5] a refused CONNECT gets a failure code with session present 0, the connection closes, and nothing sent after it is handled")
  void aRefusedConnectEndsTheConnectionAndNothingAfterItIsHandled(Version v) throws IOException {
    String topic = unique("refused/");
    try (RawClient observer = client(v, "observer")) {
      assertEquals(0, observer.subscribe(1, topic, 0));
      try (RawClient c = RawClient.open(router, v)) {
        // A will topic with a wildcard is not a topic name: the CONNECT is refused (MQTT 5 0x90,
        // 3.1.1 0x05). A PUBLISH follows in the same write.
        ByteArrayOutputStream both = new ByteArrayOutputStream();
        both.writeBytes(new Wire.Connect(v, unique("refused")).will("will/+", 0, "w").bytes());
        both.writeBytes(Wire.publish(v, 0, topic, 0, "after the refused CONNECT"));
        c.send(both.toByteArray());
        assertEquals(v.v5() ? 0x90 : 0x05, refused(c));
      }
      observer.send(Wire.publish(v, 0, topic, 0, "marker"));
      assertEquals("marker", observer.delivery().payload(), "nothing came before the marker");
    }
  }
}
