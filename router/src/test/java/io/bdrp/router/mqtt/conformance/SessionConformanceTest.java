package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.mqtt.conformance.Wire.Version;
import java.io.IOException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A session's life: PINGREQ, keep-alive, DISCONNECT and the will (MQTT 5 §3.1.2.5, §3.1.2.10,
 * §3.12, §3.14; MQTT 3.1.1 the same sections), and the fixed header's reserved flags.
 */
class SessionConformanceTest extends ConformanceBase {

  /** A session of {@code v} with a will of QoS 0 to {@code willTopic}, payload "will". */
  private static RawClient withWill(Version v, String willTopic) throws IOException {
    return RawClient.connected(
        router, new Wire.Connect(v, unique("will")).will(willTopic, 0, "will"));
  }

  /**
   * After a session with a will ended: the observer subscribed to {@code willTopic} gets the will
   * ({@code expected}) or, if it was not published, the marker published after the session ended.
   */
  private static void willWas(boolean published, RawClient observer, String willTopic)
      throws IOException {
    observer.send(Wire.publish(observer.version, 0, willTopic, 0, "marker"));
    assertEquals(published ? "will" : "marker", observer.delivery().payload());
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.12.4-1", v311 = "MQTT-3.12.4-1")
  @DisplayName("[MQTT-3.12.4-1] [3.1.1 MQTT-3.12.4-1] a PINGREQ is answered with a PINGRESP")
  void aPingreqIsAnswered(Version v) throws IOException {
    try (RawClient c = client(v, "ping")) {
      for (int i = 0; i < 3; i++) {
        c.ping();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.2-22", v311 = "MQTT-3.1.2-24")
  @DisplayName(
      "[MQTT-3.1.2-22] [3.1.1 MQTT-3.1.2-24] a session silent for one and a half times its keep-alive is closed (MQTT 5: DISCONNECT 0x8D)")
  void aSilentSessionIsClosedAfterOneAndAHalfKeepAlives(Version v) throws IOException {
    long before = metric("bdrp_connections_closed_total", "port=\"mqtt\",reason=\"keepalive\"");
    long start = System.nanoTime();
    try (RawClient c =
        RawClient.connected(router, new Wire.Connect(v, unique("silent")).keepAlive(1))) {
      assertEquals(v.v5() ? 0x8D : -1, c.ended());
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertTrue(ms >= 1_400, "not before one and a half keep-alives: " + ms + " ms");
    assertEquals(
        before + 1, metric("bdrp_connections_closed_total", "port=\"mqtt\",reason=\"keepalive\""));
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(v5 = "MQTT-3.1.2-8", v311 = "MQTT-3.1.2-8")
  @DisplayName(
      "[MQTT-3.1.2-8] [3.1.1 MQTT-3.1.2-8] the will is published when the connection ends without a DISCONNECT")
  void theWillIsPublishedWhenTheConnectionEndsWithoutADisconnect(Version v) throws IOException {
    String willTopic = unique("will/");
    try (RawClient observer = client(v, "observer")) {
      assertEquals(0, observer.subscribe(1, willTopic, 0));
      RawClient c = withWill(v, willTopic);
      c.ping();
      c.close();
      assertEquals("will", observer.delivery().payload());
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.14.4-3", "MQTT-3.1.2-10"},
      v311 = {"MQTT-3.14.4-3", "MQTT-3.1.2-10"})
  @DisplayName(
      "[MQTT-3.14.4-3] [MQTT-3.1.2-10] [3.1.1 MQTT-3.14.4-3] [3.1.1 MQTT-3.1.2-10] a DISCONNECT (MQTT 5: reason 0x00) discards the will")
  void aDisconnectDiscardsTheWill(Version v) throws IOException {
    String willTopic = unique("will/");
    try (RawClient observer = client(v, "observer")) {
      assertEquals(0, observer.subscribe(1, willTopic, 0));
      try (RawClient c = withWill(v, willTopic)) {
        c.send(Wire.disconnect(v, 0x00));
        assertTrue(c.closedWithoutAPacket(), "the router closes the connection");
      }
      willWas(false, observer, willTopic);
    }
  }

  @Test
  @Normative(v5 = "MQTT-3.1.2-8")
  @DisplayName(
      "[MQTT-3.1.2-8] a DISCONNECT with reason 0x04 (Disconnect with Will Message) keeps the will, which is published")
  void aDisconnectWithWillMessageKeepsTheWill() throws IOException {
    String willTopic = unique("will/");
    try (RawClient observer = client(Version.V5, "observer")) {
      assertEquals(0, observer.subscribe(1, willTopic, 0));
      try (RawClient c = withWill(Version.V5, willTopic)) {
        c.send(Wire.disconnect(Version.V5, 0x04));
        assertTrue(c.closedWithoutAPacket());
      }
      assertEquals("will", observer.delivery().payload());
    }
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = {"MQTT-3.14.1-1", "MQTT-2.1.3-1"},
      v311 = {"MQTT-3.14.1-1", "MQTT-2.2.2-2"})
  @DisplayName(
      "[MQTT-3.14.1-1] [MQTT-2.1.3-1] [3.1.1 MQTT-3.14.1-1] [3.1.1 MQTT-2.2.2-2] a DISCONNECT with reserved bits set is malformed: the session ends as for bad input, and its will is published")
  void aDisconnectWithReservedBitsIsMalformed(Version v) throws IOException {
    String willTopic = unique("will/");
    try (RawClient observer = client(v, "observer")) {
      assertEquals(0, observer.subscribe(1, willTopic, 0));
      try (RawClient c = withWill(v, willTopic)) {
        byte[] d = Wire.disconnect(v, 0x00);
        d[0] = (byte) 0xE1;
        c.send(d);
        int reason = c.ended();
        assertEquals(v.v5() ? 0x81 : -1, reason);
      }
      assertEquals("will", observer.delivery().payload());
    }
  }

  @Test
  @Normative(v5 = "MQTT-1.5.5-1")
  @DisplayName(
      "[MQTT-1.5.5-1] a remaining length written in more bytes than it needs makes the packet malformed")
  void aRemainingLengthInMoreBytesThanNeededIsMalformed() throws IOException {
    try (RawClient c = client(Version.V5, "varint")) {
      c.send(new byte[] {(byte) 0xC0, (byte) 0x80, 0x00}); // a PINGREQ's length 0 in two bytes
      assertEquals(0x81, c.ended());
    }
    othersAreServed();
  }

  @ParameterizedTest
  @EnumSource(Version.class)
  @Normative(
      v5 = "MQTT-2.1.3-1",
      v311 = {"MQTT-2.2.2-1", "MQTT-2.2.2-2"})
  @DisplayName(
      "[MQTT-2.1.3-1] [3.1.1 MQTT-2.2.2-1] [3.1.1 MQTT-2.2.2-2] a PINGREQ, PUBACK, PUBREC, PUBREL or PUBCOMP with reserved flags other than the table's is malformed and ends the session")
  void reservedFlagsOfControlPacketsAreChecked(Version v) throws IOException {
    byte[][] packets = {
      {(byte) 0xC1, 0},
      {(byte) 0xC8, 0},
      {0x42, 0, 1},
      {0x51, 0, 1},
      {0x60, 0, 1}, // PUBREL must be 0110 0010
      {0x78, 0, 1}
    };
    for (byte[] p : packets) {
      try (RawClient c = client(v, "flags")) {
        c.send(p);
        assertEquals(v.v5() ? 0x81 : -1, c.ended(), "first byte " + (p[0] & 0xFF));
      }
    }
    othersAreServed();
  }
}
