package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.router.config.MqttOptions;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.net.InetSocketAddress;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.common.MqttException;
import org.junit.jupiter.api.Test;

/**
 * {@code mqtt.confirmedAcks}: a QoS 1 or 2 PUBLISH goes out with the reliable service and its
 * PUBACK or PUBREC comes once every router of its D has it, or, with an error reason, once its
 * retention ended without; with a real MQTT 5 client (Paho) on routers on loopback.
 */
class MqttConfirmedAcksTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static long metric(Router r, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  private static UnaryOperator<RouterConfig> confirmed(int retentionMs) {
    return c ->
        c.withMqttListen(ANY)
            .withMqtt(new MqttOptions(false, 64 * 1024, true))
            .withLimits(
                c.limits()
                    .withHosts(
                        c.limits()
                            .hosts()
                            .withReliableRetention(
                                c.limits().hosts().reliableRetentionMessages(),
                                c.limits().hosts().reliableRetentionBytes(),
                                retentionMs)));
  }

  @Test
  void qos1And2PublishesAreAnsweredOnceTheRouterOfTheirSubscriberHasThem() throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-2"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    confirmed(60_000))
                .awaitRoutes();
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(1).mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "pub")) {
      sub.connect(null, null);
      sub.subscribe("t/#", 2);
      pub.connect(null, null);
      f.awaitPredicates();
      assertArrayEquals(new int[] {0}, pub.publish("t/1", "one", 1));
      assertArrayEquals(new int[] {0, 0}, pub.publish("t/2", "two", 2), "PUBREC, PUBCOMP");
      assertEquals("t/1", sub.next().topic());
      assertEquals("t/2", sub.next().topic());
      Router ingress = f.routers.get(0);
      assertEquals(2, metric(ingress, "bdrp_reliable_confirmed_total"), "sent reliably");
      assertEquals(0, metric(ingress, "bdrp_reliable_retained_messages"));
    }
  }

  @Test
  void aPublishWhoseSubscribersRouterIsGoneIsAnsweredWithAnErrorWhenItsRetentionEnds()
      throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-2"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    confirmed(1_000))
                .awaitRoutes();
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(1).mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "pub")) {
      sub.connect(null, null);
      sub.subscribe("t/#", 1);
      pub.connect(null, null);
      f.awaitPredicates();
      f.routers.get(1).close(); // its predicate stays in router 0's PREDICATES for a while
      int code;
      try {
        int[] codes = pub.publish("t/1", "one", 1);
        code = codes.length == 0 ? -1 : codes[0];
      } catch (MqttException e) {
        code = e.getReasonCode();
      }
      assertEquals(0x80, code, "Unspecified error: not every router of D has it");
      assertEquals(
          1,
          metric(
              f.routers.get(0),
              "bdrp_mqtt_publishes_refused_total{protocol=\"mqtt5\",reason=\"unreached\"}"));
    }
  }
}
