package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.mqtt.MqttPublish;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.common.MqttMessage;
import org.eclipse.paho.mqttv5.common.packet.MqttProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Message expiry (MQTT 5 §3.3.2.3.3) across a federation: a PUBLISH's Message Expiry Interval
 * becomes the absolute deadline {@code mqtt.expiresAt}, a delivery before it carries the interval
 * that remains, and a delivery after it is dropped and counted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttExpiryTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static long expiredDrops(Router r) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_mqtt_deliveries_dropped_total\\{protocol=\"mqtt5\",reason=\"expired\"\\}"
                    + " (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void theExpiryIntervalBecomesADeadlineThatDeliveriesHonour() throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-4"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    c -> c.withMqttListen(ANY))
                .awaitRoutes();
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      sub.connect(null, null);
      pub.connect(null, null);
      sub.subscribe("e/#", 1);
      BdrpClient bdrp = f.client(1, "b");
      LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
      bdrp.subscribe(Predicate.parse("mqtt.level.0 = \"e\""), got::add).get(10, TimeUnit.SECONDS);
      f.awaitPredicates();

      MqttMessage m = new MqttMessage("soon".getBytes(StandardCharsets.UTF_8));
      m.setQos(1);
      MqttProperties p = new MqttProperties();
      p.setMessageExpiryInterval(3600L);
      m.setProperties(p);
      long before = System.currentTimeMillis();
      pub.publish("e/1", m);
      long after = System.currentTimeMillis();

      MqttClients.Received r = sub.next();
      assertEquals("soon", r.payload());
      long remaining = r.message().getProperties().getMessageExpiryInterval();
      assertTrue(remaining > 3500 && remaining <= 3600, "the interval that remains: " + remaining);
      Message b = got.poll(20, TimeUnit.SECONDS);
      assertTrue(b != null, "the bdrp client got the message");
      long deadline = b.get(MqttPublish.EXPIRES_AT).asLong();
      assertTrue(
          deadline >= before + 3_600_000 && deadline <= after + 3_600_000,
          "mqtt.expiresAt " + deadline + " is the arrival plus the interval");

      // A message whose deadline has passed is not delivered; one without a deadline is, without
      // an interval.
      bdrp.sendAcknowledged(
              MqttTopic.put(Message.builder(), "e/2")
                  .put(MqttPublish.EXPIRES_AT, 1_000L)
                  .body("late".getBytes(StandardCharsets.UTF_8))
                  .build())
          .get(10, TimeUnit.SECONDS);
      // From the same client as the expired one, so it comes by the same path, after it.
      bdrp.sendAcknowledged(
              MqttTopic.put(Message.builder(), "e/3")
                  .body("timeless".getBytes(StandardCharsets.UTF_8))
                  .build())
          .get(10, TimeUnit.SECONDS);
      r = sub.next();
      assertEquals("timeless", r.payload(), "the expired message was dropped");
      assertEquals(null, r.message().getProperties().getMessageExpiryInterval());
      assertEquals(1, expiredDrops(f.routers.get(0)));
    }
  }
}
