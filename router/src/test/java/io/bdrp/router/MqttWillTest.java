package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Will messages (MQTT 3.1.1 §3.1.2.5, MQTT 5 §3.1.3.2): published through the data plane when a
 * connection ends without a DISCONNECT, or with an MQTT 5 DISCONNECT 0x04; not when it ends with a
 * DISCONNECT; after the earlier of the Will Delay Interval and the session's end (MQTT-3.1.3-9),
 * and not at all if the client resumes its session within it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttWillTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private Router router;
  private MqttClients.Client sub;

  @BeforeEach
  void start() throws Exception {
    router = Router.start(Federation.loneRouter().withMqttListen(ANY));
    sub = new MqttClients.Client(router.mqttAddress(), "sub");
    sub.connect(null, null);
    sub.subscribe("will/#", 1);
  }

  @AfterEach
  void stop() {
    sub.close();
    router.close();
  }

  private long wills(String protocol, String result) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_mqtt_wills_total\\{protocol=\""
                    + protocol
                    + "\",result=\""
                    + result
                    + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static void string(ByteArrayOutputStream o, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    o.write(b.length >> 8);
    o.write(b.length);
    o.writeBytes(b);
  }

  /**
   * A CONNECT with a clean start and a will at QoS 1 to {@code topic} with {@code payload}; in MQTT
   * 5 ({@code v5}) with a user property {@code k=v} and a Will Delay Interval of {@code delay}
   * seconds (0: none).
   */
  private static byte[] connect(boolean v5, String id, String topic, String payload, int delay) {
    return connect(v5, true, 0, id, topic, payload, delay);
  }

  /**
   * As {@link #connect(boolean, String, String, String, int)}, with Clean Start {@code cleanStart}
   * and, in MQTT 5, a Session Expiry Interval of {@code expiry} seconds (0: none).
   */
  private static byte[] connect(
      boolean v5,
      boolean cleanStart,
      int expiry,
      String id,
      String topic,
      String payload,
      int delay) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(
        new byte[] {
          0,
          4,
          'M',
          'Q',
          'T',
          'T',
          (byte) (v5 ? 5 : 4),
          (byte) ((cleanStart ? 0x02 : 0) | 0x04 | 0x08)
        });
    v.write(0);
    v.write(60); // keep-alive
    if (v5 && expiry > 0) {
      v.writeBytes(new byte[] {5, 0x11, 0, 0, (byte) (expiry >> 8), (byte) expiry});
    } else if (v5) {
      v.write(0); // no CONNECT properties
    }
    string(v, id);
    if (v5) {
      ByteArrayOutputStream p = new ByteArrayOutputStream();
      p.write(0x26);
      string(p, "k");
      string(p, "v");
      if (delay > 0) {
        p.writeBytes(new byte[] {0x18, 0, 0, (byte) (delay >> 8), (byte) delay});
      }
      v.write(p.size());
      v.writeBytes(p.toByteArray());
    }
    string(v, topic);
    string(v, payload);
    return MqttBadInputTest.packet(0x10, v.toByteArray());
  }

  /** A connected session with a will; its CONNACK read. */
  private Socket session(byte[] connect) throws IOException {
    Socket s = new Socket("127.0.0.1", router.mqttAddress().getPort());
    s.setSoTimeout(20_000);
    s.getOutputStream().write(connect);
    MqttBadInputTest.Packet ack = MqttBadInputTest.read(new DataInputStream(s.getInputStream()));
    assertEquals(0x20, ack.first(), "CONNACK");
    assertEquals(0, ack.rest()[1], "accepted");
    return s;
  }

  /** Sends {@code disconnect} and waits for the router to close the connection. */
  private static void disconnect(Socket s, byte[] disconnect) throws IOException {
    s.getOutputStream().write(disconnect);
    assertEquals(-1, s.getInputStream().read(), "closed by the router");
    s.close();
  }

  @Test
  void aWillIsPublishedWhenTheConnectionEndsWithoutADisconnect() throws Exception {
    session(connect(true, "w5", "will/w5", "gone 5", 0)).close();
    MqttClients.Received r = sub.next();
    assertEquals("will/w5", r.topic());
    assertEquals("gone 5", r.payload());
    assertEquals(1, r.message().getQos(), "the will's QoS");
    assertEquals("k", r.message().getProperties().getUserProperties().get(0).getKey());
    assertEquals("v", r.message().getProperties().getUserProperties().get(0).getValue());
    session(connect(false, "w3", "will/w3", "gone 3", 0)).close();
    r = sub.next();
    assertEquals("will/w3", r.topic());
    assertEquals("gone 3", r.payload());
    assertEquals(1, wills("mqtt5", "published"));
    assertEquals(1, wills("mqtt3", "published"));
  }

  @Test
  void aSessionTheRouterEndsOrAnotherConnectionTakesOverPublishesItsWill() throws Exception {
    try (Socket s = session(connect(true, "bad", "will/bad", "malformed", 0))) {
      s.getOutputStream().write(new byte[] {0x36, 0x03, 0, 1, 'a'}); // a PUBLISH with QoS 3
      assertEquals("malformed", sub.next().payload());
    }
    try (Socket first = session(connect(true, "same", "will/same", "taken over", 0));
        Socket second = session(connect(false, "same", "will/same", "second", 0))) {
      MqttBadInputTest.Packet p =
          MqttBadInputTest.read(new DataInputStream(first.getInputStream()));
      assertEquals(0xE0, p.first(), "DISCONNECT");
      assertEquals(0x8E, p.rest()[0] & 0xFF, "session taken over");
      assertEquals("taken over", sub.next().payload()); // MQTT-3.1.4-3
      disconnect(second, new byte[] {(byte) 0xE0, 0});
    }
    sub.publish("will/z", "z", 1);
    assertEquals("z", sub.next().payload(), "the second's DISCONNECT discarded its will");
  }

  @Test
  void aDisconnectDiscardsTheWillButAnMqtt5DisconnectWithWillMessageDoesNot() throws Exception {
    disconnect(session(connect(false, "a", "will/a", "a", 0)), new byte[] {(byte) 0xE0, 0});
    disconnect(session(connect(true, "b", "will/b", "b", 0)), new byte[] {(byte) 0xE0, 0});
    disconnect(session(connect(true, "c", "will/c", "c", 0)), new byte[] {(byte) 0xE0, 1, 0});
    disconnect(session(connect(true, "d", "will/d", "d", 0)), new byte[] {(byte) 0xE0, 1, 0x04});
    assertEquals("d", sub.next().payload(), "only the will of the DISCONNECT 0x04");
    sub.publish("will/z", "z", 1);
    assertEquals("z", sub.next().payload());
    assertEquals(0, sub.received.size());
  }

  @Test
  void aWillWithADelayIsPublishedAfterIt() throws Exception {
    Socket s = session(connect(true, true, 3600, "late", "will/late", "late", 1));
    long closed = System.nanoTime();
    s.close();
    assertEquals("late", sub.next().payload());
    long waitedMs = (System.nanoTime() - closed) / 1_000_000;
    assertTrue(waitedMs >= 1000, "published after its Will Delay Interval, not " + waitedMs);
  }

  @Test
  void aWillWithADelayIsPublishedWhenTheSessionEndsFirst() throws Exception {
    // Session Expiry Interval 0: the session ends with the connection, and the will goes at once.
    session(connect(true, "now", "will/now", "at once", 3600)).close();
    assertEquals("at once", sub.next().payload());
    // A session kept 1 s, a will delayed an hour: published when the session expires.
    Socket s = session(connect(true, true, 1, "soon", "will/soon", "at expiry", 3600));
    long closed = System.nanoTime();
    s.close();
    assertEquals("at expiry", sub.next().payload());
    long waitedMs = (System.nanoTime() - closed) / 1_000_000;
    assertTrue(waitedMs >= 1000, "published when the session expired, not " + waitedMs);
    // A kept session discarded by a Clean Start 1: its will goes then.
    session(connect(true, true, 3600, "gone", "will/gone", "discarded", 3600)).close();
    try (Socket again = session(connect(true, "gone", "will/other", "x", 0))) {
      assertEquals("discarded", sub.next().payload());
      disconnect(again, new byte[] {(byte) 0xE0, 0});
    }
    assertEquals(3, wills("mqtt5", "published"));
  }

  @Test
  void aWillWithADelayIsCancelledWhenTheClientReconnectsWithinIt() throws Exception {
    session(connect(true, true, 3600, "back", "will/back", "never", 3600)).close();
    try (Socket again = session(connect(true, false, 3600, "back", "will/other", "x", 0))) {
      // Its PINGRESP comes after the router has seen both connections' ends and starts.
      again.getOutputStream().write(new byte[] {(byte) 0xC0, 0});
      MqttBadInputTest.Packet p =
          MqttBadInputTest.read(new DataInputStream(again.getInputStream()));
      assertEquals(0xD0, p.first(), "PINGRESP");
      assertEquals(1, wills("mqtt5", "cancelled"));
      disconnect(again, new byte[] {(byte) 0xE0, 0});
    }
    sub.publish("will/z", "z", 1);
    assertEquals("z", sub.next().payload(), "no will came");
    assertEquals(0, wills("mqtt5", "published"));
  }
}
