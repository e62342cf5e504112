package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad input on a router's MQTT port, written byte by byte on a plain socket: each ends its own
 * session with the MQTT 5 reason code (MQTT 5 §4.13), is counted, and disturbs no one else — a
 * client that connects afterwards is served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttBadInputTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private Router router;

  @BeforeEach
  void start() throws InterruptedException {
    router = Router.start(Federation.loneRouter().withMqttListen(ANY));
  }

  @AfterEach
  void stop() {
    router.close();
  }

  /** A CONNECT of MQTT 5 with a clean start, client {@code id}, keep-alive {@code seconds}. */
  static byte[] connect5(String id, int seconds) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 5, 0x02});
    v.write(seconds >> 8);
    v.write(seconds);
    v.write(0); // no properties
    v.write(0);
    v.write(id.length());
    v.writeBytes(id.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    return packet(0x10, v.toByteArray());
  }

  static byte[] packet(int firstByte, byte[] rest) {
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(firstByte);
    int n = rest.length;
    do {
      int b = n & 0x7F;
      n >>>= 7;
      p.write(n > 0 ? b | 0x80 : b);
    } while (n > 0);
    p.writeBytes(rest);
    return p.toByteArray();
  }

  /** One packet read: its first byte and the rest. */
  record Packet(int first, byte[] rest) {}

  static Packet read(DataInputStream in) throws IOException {
    int first = in.readUnsignedByte();
    int n = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readUnsignedByte();
      n |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    byte[] rest = new byte[n];
    in.readFully(rest);
    return new Packet(first, rest);
  }

  /** A connected MQTT 5 session on a plain socket, its CONNACK read. */
  private Socket session(String id, int keepAliveSeconds) throws IOException {
    Socket s = new Socket("127.0.0.1", router.mqttAddress().getPort());
    s.setSoTimeout(20_000);
    s.getOutputStream().write(connect5(id, keepAliveSeconds));
    Packet ack = read(new DataInputStream(s.getInputStream()));
    assertEquals(0x20, ack.first(), "CONNACK");
    assertEquals(0, ack.rest()[1], "accepted");
    return s;
  }

  /** Reads the router's DISCONNECT and the end of the stream; returns the reason code. */
  private static int disconnectReason(Socket s) throws IOException {
    DataInputStream in = new DataInputStream(s.getInputStream());
    Packet p = read(in);
    assertEquals(0xE0, p.first(), "DISCONNECT");
    try {
      in.readUnsignedByte();
      throw new AssertionError("the router must close the connection after its DISCONNECT");
    } catch (EOFException expected) {
      // closed
    }
    return p.rest()[0] & 0xFF;
  }

  private long metric(String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** Another client is served: it connects, subscribes, publishes and receives. */
  private void othersAreServed() throws Exception {
    try (MqttClients.Client c = new MqttClients.Client(router.mqttAddress(), "other")) {
      c.connect(null, null);
      assertArrayEquals(new int[] {1}, c.subscribe("t/#", 1));
      c.publish("t/1", "x", 1);
      assertEquals("x", c.next().payload());
    }
  }

  @Test
  void aMalformedPacketEndsItsSessionWithReason0x81AndIsCounted() throws Exception {
    try (Socket s = session("bad", 60)) {
      // A PUBLISH with QoS 3 (MQTT-3.3.1-4): malformed.
      s.getOutputStream().write(new byte[] {0x36, 0x03, 0, 1, 'a'});
      assertEquals(0x81, disconnectReason(s));
    }
    assertEquals(1, metric("bdrp_mqtt_malformed_total", "protocol=\"mqtt5\",reason=\"malformed\""));
    othersAreServed();
  }

  @Test
  void aPacketAboveTheMaximumSizeIsRefusedFromItsHeaderWith0x95() throws Exception {
    try (Socket s = session("big", 60)) {
      // A PUBLISH that says it has 2 MiB to come, above limits.maxFrameBytes (1 MiB); none of
      // it is sent.
      OutputStream out = s.getOutputStream();
      out.write(new byte[] {0x30, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01});
      assertEquals(0x95, disconnectReason(s));
    }
    assertEquals(1, metric("bdrp_mqtt_malformed_total", "protocol=\"mqtt5\",reason=\"too_large\""));
    othersAreServed();
  }

  @Test
  void aSessionSilentForOneAndAHalfKeepAlivesIsDisconnectedWith0x8D() throws Exception {
    try (Socket s = session("quiet", 1)) { // MQTT-3.1.2-24
      assertEquals(0x8D, disconnectReason(s));
    }
    assertEquals(1, metric("bdrp_connections_closed_total", "port=\"mqtt\",reason=\"keepalive\""));
  }

  @Test
  void aPingKeepsASessionAndIsAnswered() throws Exception {
    try (Socket s = session("ping", 60)) {
      s.getOutputStream().write(new byte[] {(byte) 0xC0, 0});
      Packet p = read(new DataInputStream(s.getInputStream()));
      assertEquals(0xD0, p.first(), "PINGRESP");
    }
  }

  @Test
  void aFirstPacketOtherThanConnectClosesTheConnection() throws Exception {
    try (Socket s = new Socket("127.0.0.1", router.mqttAddress().getPort())) {
      s.setSoTimeout(20_000);
      s.getOutputStream().write(new byte[] {(byte) 0xC0, 0}); // PINGREQ (MQTT-3.1.0-1)
      assertEquals(-1, s.getInputStream().read(), "closed without a reply");
    }
    assertTrue(
        metric("bdrp_mqtt_malformed_total", "protocol=\"unknown\",reason=\"protocol_error\"") == 1);
    othersAreServed();
  }

  /** The return code of the CONNACK that answers {@code connect}; the connection then closes. */
  private int connackCode(byte[] connect) throws IOException {
    try (Socket s = new Socket("127.0.0.1", router.mqttAddress().getPort())) {
      s.setSoTimeout(20_000);
      s.getOutputStream().write(connect);
      DataInputStream in = new DataInputStream(s.getInputStream());
      Packet ack = read(in);
      assertEquals(0x20, ack.first(), "CONNACK");
      assertEquals(-1, in.read(), "closed after a refusal");
      return ack.rest()[1] & 0xFF;
    }
  }

  @Test
  void connectsOfOtherVersionsOrWithoutAnIdentifierForAKeptSessionAreRefused() throws Exception {
    // MQTT 3.1 ("MQIsdp", level 3): 0x01, unacceptable protocol version.
    assertEquals(
        0x01,
        connackCode(
            packet(
                0x10, new byte[] {0, 6, 'M', 'Q', 'I', 's', 'd', 'p', 3, 0x02, 0, 60, 0, 1, 'a'})));
    // A level no MQTT has: 0x01.
    assertEquals(
        0x01, connackCode(packet(0x10, new byte[] {0, 4, 'M', 'Q', 'T', 'T', 9, 0x02, 0, 60})));
    // MQTT 3.1.1 without a clean session and with an empty client identifier (MQTT-3.1.3-8):
    // 0x02, identifier rejected.
    assertEquals(
        0x02,
        connackCode(packet(0x10, new byte[] {0, 4, 'M', 'Q', 'T', 'T', 4, 0x00, 0, 60, 0, 0})));
    assertEquals(
        1,
        metric("bdrp_mqtt_connections_total", "protocol=\"mqtt3\",result=\"identifier_rejected\""));
    othersAreServed();
  }
}
