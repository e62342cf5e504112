package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.config.MqttOptions;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * JSON payload fields as attributes ({@code mqtt.jsonFields}): with it on, a subscriber's content
 * filter on a field of publishers' JSON payloads selects their messages across a federation; off
 * (the default), the payload gives no attributes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttJsonFieldsTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static long json(Router r, String result) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_mqtt_json_payloads_total\\{result=\""
                    + result
                    + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void aContentFilterOnAJsonFieldSelectsMessagesOfAPublisherOnAnotherRouter() throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-4"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    c -> c.withMqttListen(ANY).withMqtt(new MqttOptions(true, 64 * 1024)))
                .awaitRoutes();
        MqttRawSession sub = new MqttRawSession(f.routers.get(0).mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      sub.subscribe("sensors/#?mqtt.json.temp > 25", 1, new byte[0]);
      assertEquals(1, sub.suback(1));
      sub.subscribe("end", 2, new byte[0]);
      assertEquals(1, sub.suback(2));
      pub.connect(null, null);
      f.awaitPredicates();
      pub.publish("sensors/k1", "{\"temp\": 21, \"site\": \"a\"}", 0);
      pub.publish("sensors/k2", "{\"temp\": 30.5, \"site\": {\"name\": \"b\"}}", 0);
      pub.publish("sensors/k3", "{\"temp\": \"hot\"}", 0); // a string: not > 25
      pub.publish("sensors/k4", "{\"temp\": 40", 0); // malformed: no fields
      pub.publish("sensors/k5", "26", 0); // not an object
      pub.publish("sensors/k6", "{\"temp\": 26}", 0);
      pub.publish("end", "", 0);
      MqttRawSession.Delivery d = sub.delivery();
      assertEquals("sensors/k2", d.topic());
      assertEquals("{\"temp\": 30.5, \"site\": {\"name\": \"b\"}}", d.payload(), "body unchanged");
      assertEquals("sensors/k6", sub.delivery().topic());
      assertEquals("end", sub.delivery().topic(), "nothing else matched");
      Router r2 = f.routers.get(2);
      assertEquals(4, json(r2, "parsed"), "k1, k2, k3, k6 (the end marker's payload is empty)");
      assertEquals(1, json(r2, "malformed"));
      assertEquals(2, json(r2, "not_object"));
    }
  }

  @Test
  void offByDefaultThePayloadGivesNoAttributes() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY));
        MqttRawSession sub = new MqttRawSession(r.mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      sub.subscribe("sensors/#?mqtt.json.temp > 25", 1, new byte[0]);
      sub.suback(1);
      sub.subscribe("end", 2, new byte[0]);
      sub.suback(2);
      pub.connect(null, null);
      pub.publish("sensors/k", "{\"temp\": 30}", 0);
      pub.publish("end", "", 0);
      assertEquals("end", sub.delivery().topic());
      assertFalse(r.metricsText().contains("bdrp_mqtt_json_payloads_total"));
    }
  }

  @Test
  void theMqttSectionOfTheConfigTurnsItOnAndBoundsIt() {
    RouterConfig c =
        RouterConfig.parse("router: 1\nmqtt: {jsonFields: true, jsonMaxBytes: 4096}\n", "t");
    assertEquals(new MqttOptions(true, 4096), c.mqtt());
    assertEquals(MqttOptions.DEFAULT, RouterConfig.parse("router: 1\n", "t").mqtt());
    assertTrue(
        assertThrows(
                RouterConfig.ConfigException.class,
                () -> RouterConfig.parse("router: 1\nmqtt: {jsonMaxBytes: 0}\n", "t"))
            .getMessage()
            .contains("mqtt.jsonMaxBytes"));
    assertThrows(
        IllegalArgumentException.class,
        () -> RouterConfig.parse("router: 1\nmqtt: {jsonFields: 1}\n", "t"));
    assertThrows(
        IllegalArgumentException.class,
        () -> RouterConfig.parse("router: 1\nmqtt: {jsonField: true}\n", "t"));
  }
}
