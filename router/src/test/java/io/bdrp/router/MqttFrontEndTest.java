package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MQTT clients (Eclipse Paho, MQTT 5) on the MQTT ports of a federation of in-process routers: what
 * one publishes on one router reaches the subscribers whose topic and content filters it matches on
 * another, with its QoS acknowledged, and bdrp and MQTT clients see each other's messages through
 * the mapping.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttFrontEndTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  /** A square of four routers with a diagonal 0-2, each with an MQTT port. */
  private static Federation federation() throws InterruptedException {
    return new Federation(
        Bundled.load("routers-4"),
        RouterConfig.LinkTransport.TCP,
        null,
        c -> c.withMqttListen(ANY));
  }

  @Test
  void aSubscriberOnOneRouterGetsWhatAPublisherOnAnotherSendsThatItsFiltersMatch()
      throws Exception {
    try (Federation f = federation().awaitRoutes();
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      sub.connect(null, null);
      pub.connect(null, null);
      assertArrayEquals(
          new int[] {1}, sub.subscribe("sensors/+/temp?mqtt.user.value > 25", 1), "QoS 1 granted");
      assertArrayEquals(new int[] {2}, sub.subscribe("alarms/#", 2), "QoS 2 asked and granted");
      f.awaitPredicates();
      // Not matched: a level short, the wrong last level, a value too low.
      assertArrayEquals(new int[] {0}, pub.publish("sensors/temp", "a", 1, "value", "30"));
      assertArrayEquals(new int[] {0}, pub.publish("sensors/a/humidity", "b", 1, "value", "30"));
      assertArrayEquals(new int[] {0}, pub.publish("sensors/a/temp", "c", 1, "value", "20"));
      // Matched; the earlier ones would have come first, on the same path.
      assertArrayEquals(new int[] {0}, pub.publish("sensors/a/temp", "d", 1, "value", "30.5"));
      MqttClients.Received r = sub.next();
      assertEquals("sensors/a/temp", r.topic());
      assertEquals("d", r.payload());
      assertEquals(1, r.message().getQos());
      assertEquals("value", r.message().getProperties().getUserProperties().get(0).getKey());
      assertEquals("30.5", r.message().getProperties().getUserProperties().get(0).getValue());
      // QoS 0 published: delivered at QoS 0; QoS 2 published: delivered once, at QoS 2.
      pub.publish("alarms/fire", "e", 0);
      assertEquals("e", sub.next().payload());
      pub.publish("alarms/fire/floor/2", "f", 2);
      r = sub.next();
      assertEquals("f", r.payload());
      assertEquals(2, r.message().getQos());
      pub.publish("alarms", "g", 1); // '#' matches its parent level too
      assertEquals("g", sub.next().payload());
      assertEquals(0, sub.received.size());
    }
  }

  @Test
  void bdrpAndMqttClientsSeeEachOthersMessagesThroughTheMapping() throws Exception {
    try (Federation f = federation().awaitRoutes();
        MqttClients.Client mqtt = new MqttClients.Client(f.routers.get(0).mqttAddress(), "m")) {
      mqtt.connect(null, null);
      mqtt.subscribe("cmd/+", 1);
      BdrpClient bdrp = f.client(1, "b");
      LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
      bdrp.subscribe(Predicate.parse("mqtt.level.0 = \"telemetry\""), got::add)
          .get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      bdrp.sendAcknowledged(
              MqttTopic.put(Message.builder(), "cmd/reboot")
                  .put("mqtt.user.reason", "update")
                  .body("now".getBytes(StandardCharsets.UTF_8))
                  .build())
          .get(10, TimeUnit.SECONDS);
      MqttClients.Received r = mqtt.next();
      assertEquals("cmd/reboot", r.topic());
      assertEquals("now", r.payload());
      assertEquals(0, r.message().getQos(), "a bdrp client's message counts as QoS 0");
      assertEquals("reason", r.message().getProperties().getUserProperties().get(0).getKey());
      mqtt.publish("telemetry/a", "42", 1, "unit", "C");
      Message m = got.poll(20, TimeUnit.SECONDS);
      assertTrue(m != null, "the bdrp client got the MQTT client's message");
      assertEquals("telemetry/a", MqttTopic.of(m));
      assertEquals("42", new String(m.body(), StandardCharsets.UTF_8));
      assertEquals(1L, m.get("mqtt.qos").asLong());
      assertEquals("C", m.get("mqtt.user.unit").asString());
    }
  }

  @Test
  void requestResponsePropertiesPassThroughAndUnsubscribingStopsDeliveries() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY));
        MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      sub.connect(null, null);
      pub.connect(null, null);
      sub.subscribe("req/+", 1);
      org.eclipse.paho.mqttv5.common.MqttMessage m =
          new org.eclipse.paho.mqttv5.common.MqttMessage("ask".getBytes(StandardCharsets.UTF_8));
      m.setQos(1);
      org.eclipse.paho.mqttv5.common.packet.MqttProperties p =
          new org.eclipse.paho.mqttv5.common.packet.MqttProperties();
      p.setContentType("text/plain");
      p.setResponseTopic("resp/7");
      p.setCorrelationData(new byte[] {0, 1, (byte) 0xFF});
      p.setUserProperties(
          java.util.List.of(
              new org.eclipse.paho.mqttv5.common.packet.UserProperty("k", "1"),
              new org.eclipse.paho.mqttv5.common.packet.UserProperty("k", "2")));
      m.setProperties(p);
      pub.publish("req/1", m);
      org.eclipse.paho.mqttv5.common.packet.MqttProperties got =
          sub.next().message().getProperties();
      assertEquals("text/plain", got.getContentType());
      assertEquals("resp/7", got.getResponseTopic());
      assertArrayEquals(new byte[] {0, 1, (byte) 0xFF}, got.getCorrelationData());
      assertEquals(
          "[k=1, k=2]",
          got.getUserProperties().stream()
              .map(u -> u.getKey() + "=" + u.getValue())
              .toList()
              .toString(),
          "duplicates kept, in order");
      assertArrayEquals(new int[] {0}, sub.unsubscribe("req/+"));
      assertArrayEquals(new int[] {0x11}, sub.unsubscribe("req/+"), "no subscription existed");
      sub.subscribe("other", 0); // answered after the UNSUBSCRIBE's change is made
      pub.publish("req/2", "after", 1);
      pub.publish("other", "marker", 1);
      assertEquals("marker", sub.next().payload(), "nothing of req/+ any more");
    }
  }

  @Test
  void aSecondConnectionWithTheSameClientIdentifierTakesTheSessionOver() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY));
        MqttClients.Client first = new MqttClients.Client(r.mqttAddress(), "same");
        MqttClients.Client second = new MqttClients.Client(r.mqttAddress(), "same")) {
      first.connect(null, null);
      second.connect(null, null);
      Federation.await("the first session to be disconnected", () -> first.disconnected != null);
      assertEquals(0x8E, first.disconnected.getReturnCode(), "MQTT-3.1.4-2: session taken over");
      assertArrayEquals(new int[] {1}, second.subscribe("t", 1));
    }
  }

  @Test
  void aNoLocalSubscriptionDoesNotGetTheSessionsOwnMessages() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY));
        MqttClients.Client c = new MqttClients.Client(r.mqttAddress(), "c");
        MqttClients.Client other = new MqttClients.Client(r.mqttAddress(), "other")) {
      c.connect(null, null);
      other.connect(null, null);
      org.eclipse.paho.mqttv5.common.MqttSubscription noLocal =
          new org.eclipse.paho.mqttv5.common.MqttSubscription("loop", 1);
      noLocal.setNoLocal(true); // MQTT-3.8.3-3
      c.paho.subscribe(noLocal).waitForCompletion(10_000);
      c.subscribe("mine", 1);
      c.publish("loop", "own", 1);
      c.publish("mine", "own, subscribed without No Local", 1);
      assertEquals("mine", c.next().topic(), "its own message on loop never came");
      other.publish("loop", "another's", 1);
      assertEquals("another's", c.next().payload());
    }
  }

  /**
   * The {@code bdrp.filter} user property of a SUBSCRIBE is ANDed to each of its topic filters, to
   * a {@code ?} content filter too; one that does not parse refuses the filters (0x8F).
   */
  @Test
  void aSubscribeUserPropertyAddsAContentFilterToEachTopicFilter() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY));
        MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      sub.connect(null, null);
      pub.connect(null, null);
      org.eclipse.paho.mqttv5.common.packet.MqttProperties bad =
          new org.eclipse.paho.mqttv5.common.packet.MqttProperties();
      bad.setUserProperties(
          java.util.List.of(
              new org.eclipse.paho.mqttv5.common.packet.UserProperty("bdrp.filter", "x >")));
      org.eclipse.paho.mqttv5.client.IMqttToken t =
          sub.paho.subscribe(
              new org.eclipse.paho.mqttv5.common.MqttSubscription[] {
                new org.eclipse.paho.mqttv5.common.MqttSubscription("a/#", 1)
              },
              null,
              null,
              bad);
      t.waitForCompletion(10_000);
      assertArrayEquals(new int[] {0x8F}, t.getReasonCodes(), "Topic Filter invalid");
      org.eclipse.paho.mqttv5.common.packet.MqttProperties good =
          new org.eclipse.paho.mqttv5.common.packet.MqttProperties();
      good.setUserProperties(
          java.util.List.of(
              new org.eclipse.paho.mqttv5.common.packet.UserProperty(
                  "bdrp.filter", "mqtt.user.site = \"a\"")));
      t =
          sub.paho.subscribe(
              new org.eclipse.paho.mqttv5.common.MqttSubscription[] {
                new org.eclipse.paho.mqttv5.common.MqttSubscription("a/#", 1),
                new org.eclipse.paho.mqttv5.common.MqttSubscription(
                    "b/+/x?mqtt.user.v > 1 || mqtt.user.v < -1", 1)
              },
              null,
              null,
              good);
      t.waitForCompletion(10_000);
      assertArrayEquals(new int[] {1, 1}, t.getReasonCodes());
      pub.publish("a/x", "no: site b", 1, "site", "b");
      pub.publish("b/k/x", "no: v 2, site b", 1, "site", "b", "v", "2");
      pub.publish("b/k/x", "no: v 0, site a", 1, "site", "a", "v", "0");
      pub.publish("a/y/z", "yes 1", 1, "site", "a");
      pub.publish("b/k/x", "yes 2", 1, "site", "a", "v", "-5");
      assertEquals("yes 1", sub.next().payload());
      assertEquals("yes 2", sub.next().payload());
      pub.publish("a/end", "end", 1, "site", "a");
      assertEquals("end", sub.next().payload(), "nothing else came");
    }
  }
}
