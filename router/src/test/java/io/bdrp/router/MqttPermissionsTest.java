package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.Predicate;
import io.bdrp.router.security.ClientAuth;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.eclipse.paho.mqttv5.common.MqttException;
import org.eclipse.paho.mqttv5.common.MqttMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Users and permissions of {@code auth.clients} on the MQTT port: the password is the user's token,
 * the subscribe permission bounds every subscription (one with nothing within it is refused, 0x87),
 * and a PUBLISH outside the publish permission is refused (0x87 in its PUBACK) and counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttPermissionsTest {
  private static final String SENSOR = ClientAuth.newToken();
  private static final String OPS = ClientAuth.newToken();

  private Router router;

  @BeforeEach
  void start() throws InterruptedException {
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "sensor",
                    ClientAuth.hashLine(SENSOR),
                    new ClientAuth.Permissions(
                        "sensor",
                        Predicate.parse("mqtt.level.0 = \"alerts\""),
                        Predicate.parse("mqtt.level.0 = \"sensors\""))),
                ClientAuth.user(
                    "ops",
                    ClientAuth.hashLine(OPS),
                    new ClientAuth.Permissions("ops", null, null))),
            null); // anonymous clients refused
    router =
        Router.start(
            Federation.loneRouter()
                .withClientAuth(auth)
                .withMqttListen(InetSocketAddress.createUnresolved("127.0.0.1", 0)));
  }

  @AfterEach
  void stop() {
    router.close();
  }

  private long metric(String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private int refusal(String user, String password) throws MqttException {
    try (MqttClients.Client c = new MqttClients.Client(router.mqttAddress(), "x")) {
      MqttException e = assertThrows(MqttException.class, () -> c.connect(user, password));
      return e.getReasonCode();
    }
  }

  @Test
  void connectsWithoutAValidTokenAreRefused() throws Exception {
    assertEquals(0x86, refusal("sensor", "not-a-token"), "a token of no user");
    assertEquals(0x86, refusal("ops", SENSOR), "the token of another user than the name");
    assertEquals(0x87, refusal(null, null), "anonymous clients refused");
    assertEquals(
        2, metric("bdrp_mqtt_connections_total", "protocol=\"mqtt5\",result=\"bad_credentials\""));
    assertEquals(
        1, metric("bdrp_mqtt_connections_total", "protocol=\"mqtt5\",result=\"not_authorized\""));
  }

  @Test
  void subscriptionsAndPublishesStayWithinTheUsersPermissions() throws Exception {
    try (MqttClients.Client sensor =
            new MqttClients.Client(router.mqttAddress(), "s").connect("sensor", SENSOR);
        MqttClients.Client ops =
            new MqttClients.Client(router.mqttAddress(), "o").connect(null, OPS)) {
      assertArrayEquals(new int[] {0x87}, sensor.subscribe("admin/#", 1), "nothing within");
      assertArrayEquals(new int[] {1}, sensor.subscribe("#", 1), "granted, within the permission");
      assertArrayEquals(new int[] {0x87}, sensor.publish("admin/x", "no", 1), "outside");
      assertArrayEquals(new int[] {0}, sensor.publish("sensors/x", "yes", 1));
      ops.publish("admin/1", "not for the sensor", 1);
      ops.publish("alerts/1", "for the sensor", 1);
      assertEquals("alerts/1", sensor.next().topic(), "the admin message never reached it");
      assertEquals(0, sensor.received.size());
    }
    assertEquals(
        1,
        metric(
            "bdrp_mqtt_publishes_refused_total",
            "protocol=\"mqtt5\",reason=\"publish_permission\""));
    assertEquals(
        1,
        metric(
            "bdrp_mqtt_subscriptions_refused_total",
            "protocol=\"mqtt5\",reason=\"subscribe_permission\""));
  }

  private static void string(ByteArrayOutputStream o, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    o.write(b.length >> 8);
    o.write(b.length);
    o.writeBytes(b);
  }

  /** The CONNACK code of an MQTT 3.1.1 CONNECT as {@code user} with a will to {@code topic}. */
  private int willConnack311(String user, String token, String topic) throws Exception {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 4, (byte) (0x80 | 0x40 | 0x04 | 0x02)});
    v.writeBytes(new byte[] {0, 60});
    string(v, "w3");
    string(v, topic);
    string(v, "gone");
    string(v, user);
    string(v, token);
    try (Socket s = new Socket("127.0.0.1", router.mqttAddress().getPort())) {
      s.setSoTimeout(20_000);
      s.getOutputStream().write(MqttBadInputTest.packet(0x10, v.toByteArray()));
      MqttBadInputTest.Packet ack = MqttBadInputTest.read(new DataInputStream(s.getInputStream()));
      assertEquals(0x20, ack.first(), "CONNACK");
      return ack.rest()[1] & 0xFF;
    }
  }

  @Test
  void aWillOutsideThePublishPermissionRefusesTheConnect() throws Exception {
    try (MqttClients.Client c = new MqttClients.Client(router.mqttAddress(), "w5")) {
      MqttConnectionOptions o = new MqttConnectionOptions();
      o.setCleanStart(true);
      o.setUserName("sensor");
      o.setPassword(SENSOR.getBytes(StandardCharsets.UTF_8));
      o.setWill("admin/gone", new MqttMessage(new byte[] {1}));
      MqttException e =
          assertThrows(MqttException.class, () -> c.paho.connect(o).waitForCompletion(10_000));
      assertEquals(0x87, e.getReasonCode());
    }
    assertEquals(0x05, willConnack311("sensor", SENSOR, "admin/gone"), "3.1.1: not authorized");
    assertEquals(0x00, willConnack311("sensor", SENSOR, "sensors/gone"), "within: accepted");
    assertEquals(
        1,
        metric("bdrp_mqtt_connections_total", "protocol=\"mqtt5\",result=\"will_not_authorized\""));
  }
}
