package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed packets and packets a client may not send, after an accepted CONNECT, one table row
 * each, in both protocols, through the port's real pipeline on an {@link EmbeddedChannel} ({@link
 * EmbeddedMqtt}): each ends its own session, an MQTT 5 client hearing the reason code in a
 * DISCONNECT first, is counted in {@code bdrp_mqtt_malformed_total{protocol,reason}}, fails no
 * session with an exception, and disturbs no one else. (Over a socket, {@code MqttBadInputTest} has
 * QoS 3, an oversize packet, keep-alive, the first packet and refused versions; the conformance
 * suite has reserved flags, topic names, empty SUBSCRIBE and UNSUBSCRIBE packets.)
 */
class MqttMalformedPacketsTest {

  /**
   * A row: what is wrong, the packet in MQTT 5 and in 3.1.1 (null where the row is MQTT 5's only),
   * the MQTT 5 reason code, and the counter's reason label.
   */
  static Stream<Arguments> rows() {
    return Stream.of(
        row("a property identifier no packet has", p(0x30, 0, 1, 'a', 2, 0x7F, 0), null, 0x81),
        row("properties longer than the packet", p(0x30, 0, 1, 'a', 50, 0x23, 0), null, 0x81),
        row(
            "a Content Type of ill-formed UTF-8",
            p(0x30, 0, 1, 'a', 4, 0x03, 0, 1, 0xFF),
            null,
            0x81),
        row("a topic name longer than the packet", p(0x30, 0, 9, 'a', 0), p(0x30, 0, 9, 'a'), 0x81),
        row("a PUBACK cut short", p(0x40, 0), p(0x40, 0), 0x81),
        row("a PUBREL of packet identifier 0", p(0x62, 0, 0), p(0x62, 0, 0), 0x81),
        row("a PINGREQ with a body", p(0xC0, 0), p(0xC0, 0), 0x81),
        row("packet type 0", p(0x00), p(0x00), 0x81),
        row(
            "a remaining length in more bytes than it needs",
            new byte[] {(byte) 0xC0, (byte) 0x80, 0},
            new byte[] {(byte) 0xC0, (byte) 0x80, 0},
            0x81),
        row(
            "a SUBSCRIBE whose filter is cut short",
            p(0x82, 0, 1, 0, 0, 5, 'a'),
            p(0x82, 0, 1, 0, 5, 'a'),
            0x81),
        row(
            "an UNSUBSCRIBE filter of ill-formed UTF-8",
            p(0xA2, 0, 1, 0, 0, 2, 0xC0, 0xAF),
            p(0xA2, 0, 1, 0, 2, 0xC0, 0xAF),
            0x81),
        row("a CONNACK from the client", p(0x20, 0, 0, 0), p(0x20, 0, 0), 0x82),
        row("a SUBACK from the client", p(0x90, 0, 1, 0, 0), p(0x90, 0, 1, 0), 0x82),
        row("a PINGRESP from the client", p(0xD0), p(0xD0), 0x82),
        row("an AUTH (enhanced authentication is not offered)", p(0xF0), null, 0x82));
  }

  private static Arguments row(String what, byte[] v5, byte[] v311, int reason) {
    return Arguments.of(what, v5, v311, reason);
  }

  /** A packet: {@code first} and the body bytes, with its remaining length. */
  private static byte[] p(int first, int... body) {
    byte[] b = new byte[body.length];
    for (int i = 0; i < body.length; i++) {
      b[i] = (byte) body[i];
    }
    return EmbeddedMqtt.packet(first, b);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void endsItsSessionIsCountedAndDisturbsNoOneElse(
      String what, byte[] v5, byte[] v311, int reason) {
    check(5, v5, reason);
    if (v311 != null) {
      check(4, v311, reason);
    }
  }

  private static void check(int level, byte[] packet, int reason) {
    String protocol = level == 5 ? "mqtt5" : "mqtt3";
    String label = reason == 0x81 ? "malformed" : "protocol_error";
    try (EmbeddedMqtt r = new EmbeddedMqtt()) {
      EmbeddedChannel c = r.connection();
      r.write(c, EmbeddedMqtt.connect(level, "bad"));
      assertEquals(0x20, r.packets(c).get(0)[0], "CONNACK");
      r.write(c, packet);
      assertFalse(c.isOpen(), "the session ended");
      List<byte[]> out = r.packets(c);
      if (level == 5) {
        assertEquals(1, out.size(), "one DISCONNECT");
        assertEquals(0xE0, out.get(0)[0] & 0xFF, "DISCONNECT");
        assertEquals(reason, out.get(0)[2] & 0xFF, "its reason code");
      } else {
        assertEquals(List.of(), out, "3.1.1: closed without a packet");
      }
      assertEquals(
          1, r.counter("bdrp_mqtt_malformed", "protocol", protocol, "reason", label), "counted");
      assertEquals(List.of(), r.warnings(), "no session failed other than for bad input");
      r.bystandersServed(packet);
    }
  }
}
