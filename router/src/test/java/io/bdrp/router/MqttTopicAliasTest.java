package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Topic aliases from MQTT 5 clients (MQTT 5 §3.3.2.3.4): the CONNACK announces the maximum, a
 * PUBLISH sets an alias with its topic name and a later one uses it with an empty name, and an
 * alias out of range or used before it is set ends the session with 0x94, counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttTopicAliasTest {
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

  private long aliasFaults() {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_mqtt_malformed_total\\{protocol=\"mqtt5\",reason=\"topic_alias\"\\}"
                    + " (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void aTopicAliasSetWithItsNameStandsForItInLaterPublishes() throws Exception {
    try (MqttClients.Client sub = new MqttClients.Client(router.mqttAddress(), "sub");
        MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "pub")) {
      assertEquals(64L, pub.connack.get(0x22), "Topic Alias Maximum");
      sub.connect(null, null);
      sub.subscribe("t/#", 1);
      pub.publish("t/a", 1, MqttRawSession.alias(1), "set");
      assertEquals(0, pub.puback(1));
      pub.publish("", 2, MqttRawSession.alias(1), "used");
      assertEquals(0, pub.puback(2));
      pub.publish("t/b", 3, MqttRawSession.alias(64), "highest");
      assertEquals(0, pub.puback(3));
      pub.publish("t/c", 4, MqttRawSession.alias(1), "set again"); // MQTT-3.3.2-12
      assertEquals(0, pub.puback(4));
      pub.publish("", 5, MqttRawSession.alias(1), "used again");
      assertEquals(0, pub.puback(5));
      pub.publish("", 6, MqttRawSession.alias(64), "the other");
      assertEquals(0, pub.puback(6));
      String[][] expected = {
        {"t/a", "set"},
        {"t/a", "used"},
        {"t/b", "highest"},
        {"t/c", "set again"},
        {"t/c", "used again"},
        {"t/b", "the other"}
      };
      for (String[] e : expected) {
        MqttClients.Received r = sub.next();
        assertEquals(e[0], r.topic());
        assertEquals(e[1], r.payload());
      }
    }
    assertEquals(0, aliasFaults());
  }

  @Test
  void aliasZeroEndsTheSessionWith0x94() throws Exception {
    try (MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "zero")) {
      pub.publish("t/a", 1, MqttRawSession.alias(0), "x"); // MQTT-3.3.2-8
      assertEquals(0x94, pub.disconnectReason());
    }
    assertEquals(1, aliasFaults());
  }

  @Test
  void anAliasAboveTheMaximumEndsTheSessionWith0x94() throws Exception {
    try (MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "high")) {
      pub.publish("t/a", 1, MqttRawSession.alias(65), "x"); // MQTT-3.3.2-9
      assertEquals(0x94, pub.disconnectReason());
    }
    assertEquals(1, aliasFaults());
  }

  @Test
  void anAliasNeverSetUsedWithAnEmptyTopicEndsTheSessionWith0x94() throws Exception {
    try (MqttClients.Client sub = new MqttClients.Client(router.mqttAddress(), "sub");
        MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "unset")) {
      sub.connect(null, null);
      sub.subscribe("t/#", 1);
      pub.publish("t/a", 1, MqttRawSession.alias(1), "set");
      assertEquals(0, pub.puback(1));
      pub.publish("", 2, MqttRawSession.alias(2), "x");
      assertEquals(0x94, pub.disconnectReason());
      assertEquals("set", sub.next().payload());
      sub.publish("t/z", "after", 1); // the router still serves others
      assertEquals("after", sub.next().payload());
      assertEquals(0, sub.received.size());
    }
    assertEquals(1, aliasFaults());
  }

  @Test
  void aliasesLiveAsLongAsTheirConnection() throws Exception {
    try (MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "first")) {
      pub.publish("t/a", 1, MqttRawSession.alias(1), "x");
      assertEquals(0, pub.puback(1));
    }
    try (MqttRawSession pub = new MqttRawSession(router.mqttAddress(), "first")) {
      pub.publish("", 1, MqttRawSession.alias(1), "x"); // MQTT-3.3.2-7
      assertEquals(0x94, pub.disconnectReason());
    }
    assertEquals(1, aliasFaults());
  }
}
