package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * QoS 1 deliveries to an MQTT client are bounded by its Receive Maximum (MQTT-3.3.4-9): a client
 * that allows one unacknowledged message gets the next only after its PUBACK; deliveries beyond the
 * window are dropped (nothing is queued in this version) and counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttWindowTest {
  private static long metric(Router r, String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** The payload of a QoS 1 PUBLISH read, after its topic, packet id and properties. */
  private static String payload(MqttBadInputTest.Packet p) {
    assertEquals(0x32, p.first(), "PUBLISH, QoS 1");
    byte[] b = p.rest();
    int at = 2 + ((b[0] & 0xFF) << 8 | (b[1] & 0xFF)) + 2; // topic, packet identifier
    at += 1 + (b[at] & 0xFF); // properties (short here: one length byte)
    return new String(Arrays.copyOfRange(b, at, b.length), StandardCharsets.UTF_8);
  }

  private static int packetId(MqttBadInputTest.Packet p) {
    byte[] b = p.rest();
    int at = 2 + ((b[0] & 0xFF) << 8 | (b[1] & 0xFF));
    return (b[at] & 0xFF) << 8 | (b[at + 1] & 0xFF);
  }

  @Test
  void qos1DeliveriesWaitForThePubackWithinTheClientsReceiveMaximum() throws Exception {
    try (Router r =
            Router.start(
                Federation.loneRouter()
                    .withMqttListen(InetSocketAddress.createUnresolved("127.0.0.1", 0)));
        Socket s = new Socket("127.0.0.1", r.mqttAddress().getPort());
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      DataInputStream in = new DataInputStream(s.getInputStream());
      // CONNECT, MQTT 5, clean start, keep-alive 60 s, Receive Maximum 1, client "w".
      out.write(
          MqttBadInputTest.packet(
              0x10,
              new byte[] {0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 60, 3, 0x21, 0, 1, 0, 1, 'w'}));
      assertEquals(0x20, MqttBadInputTest.read(in).first(), "CONNACK");
      // SUBSCRIBE, packet 7, no properties, "w/#" at QoS 1.
      out.write(MqttBadInputTest.packet(0x82, new byte[] {0, 7, 0, 0, 3, 'w', '/', '#', 1}));
      MqttBadInputTest.Packet ack = MqttBadInputTest.read(in);
      assertEquals(0x90, ack.first(), "SUBACK");
      assertEquals(1, ack.rest()[ack.rest().length - 1], "QoS 1 granted");
      pub.connect(null, null);
      pub.publish("w/1", "first", 1);
      pub.publish("w/2", "beyond the window", 1);
      MqttBadInputTest.Packet first = MqttBadInputTest.read(in);
      assertEquals("first", payload(first));
      assertEquals(
          1,
          metric(
              r,
              "bdrp_mqtt_deliveries_dropped_total",
              "protocol=\"mqtt5\",reason=\"inflight_window\""));
      int id = packetId(first);
      ByteArrayOutputStream puback = new ByteArrayOutputStream();
      puback.write(id >> 8);
      puback.write(id);
      out.write(MqttBadInputTest.packet(0x40, puback.toByteArray()));
      pub.publish("w/3", "after the PUBACK", 1); // the window has room again
      assertEquals("after the PUBACK", payload(MqttBadInputTest.read(in)));
    }
  }
}
