package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.mqtt.MqttRetained;
import io.bdrp.encoding.mqtt.MqttTopic;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.topologies.Bundled;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.client.IMqttToken;
import org.eclipse.paho.mqttv5.common.MqttMessage;
import org.eclipse.paho.mqttv5.common.MqttSubscription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Retained messages, federation-wide (docs/mqtt.md, "Retained messages"): a subscriber at any
 * router gets the retained messages its filter matches (its content filter and its permission
 * included), wherever they were published; an empty retained message deletes; a router that starts
 * later is handed them; Retain Handling and Retain As Published; retained wills; Mosquitto's
 * clients; and a bdrp client cannot forge a retained message.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttRetainedTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  /** A square of four routers with a diagonal 0-2, each with an MQTT port. */
  private static Federation federation() throws InterruptedException {
    return new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withMqttListen(ANY))
        .awaitRoutes();
  }

  /** Retained messages in router {@code r}'s store ({@code bdrp_mqtt_retained_messages}). */
  private static long stored(Router r) {
    Matcher m =
        Pattern.compile("(?m)^bdrp_mqtt_retained_messages (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  private static void awaitStored(List<Router> routers, long n) throws InterruptedException {
    Federation.await(
        n + " retained messages at every router",
        () -> routers.stream().allMatch(r -> stored(r) == n));
  }

  private static MqttMessage retained(String payload, int qos, String... userProperties) {
    MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
    m.setQos(qos);
    m.setRetained(true);
    org.eclipse.paho.mqttv5.common.packet.MqttProperties p =
        new org.eclipse.paho.mqttv5.common.packet.MqttProperties();
    List<org.eclipse.paho.mqttv5.common.packet.UserProperty> users = new ArrayList<>();
    for (int i = 0; i < userProperties.length; i += 2) {
      users.add(
          new org.eclipse.paho.mqttv5.common.packet.UserProperty(
              userProperties[i], userProperties[i + 1]));
    }
    p.setUserProperties(users);
    m.setProperties(p);
    return m;
  }

  private static void subscribe(
      MqttClients.Client c, String filter, int retainHandling, boolean retainAsPublished)
      throws Exception {
    MqttSubscription s = new MqttSubscription(filter, 1);
    s.setRetainHandling(retainHandling);
    s.setRetainAsPublished(retainAsPublished);
    IMqttToken t = c.paho.subscribe(new MqttSubscription[] {s});
    t.waitForCompletion(10_000);
    assertEquals(1, t.getReasonCodes()[0], "granted QoS 1");
  }

  @Test
  void aSubscriberAtAnyRouterGetsTheRetainedMessagesItsFilterMatches() throws Exception {
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub");
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "sub")) {
      pub.connect(null, null);
      assertEquals(0, pub.publish("sensors/a/temp", retained("30", 1, "value", "30"))[0]);
      assertEquals(0, pub.publish("sensors/b/temp", retained("20", 1, "value", "20"))[0]);
      assertEquals(0, pub.publish("sensors/b/temp", retained("21", 1, "value", "21"))[0]);
      awaitStored(f.routers, 2);
      sub.connect(null, null);
      // The content filter applies to retained messages too: only sensors/a/temp is above 25.
      subscribe(sub, "sensors/+/temp?mqtt.user.value > 25", 0, false);
      MqttClients.Received r = sub.next();
      assertEquals("sensors/a/temp", r.topic());
      assertEquals("30", r.payload());
      assertTrue(r.message().isRetained(), "RETAIN 1 on a delivery for a new subscription");
      assertEquals(1, r.message().getQos());
      // Then the live messages; a retained one published now arrives without the RETAIN flag.
      f.awaitPredicates();
      pub.publish("sensors/c/temp", retained("40", 1, "value", "40"));
      r = sub.next();
      assertEquals("sensors/c/temp", r.topic());
      assertFalse(r.message().isRetained(), "RETAIN 0 on a live delivery (MQTT-3.3.1-12)");
      // A second subscriber to every topic gets the latest of each: 21 for sensors/b/temp.
      awaitStored(f.routers, 3);
      try (MqttClients.Client all = new MqttClients.Client(f.routers.get(3).mqttAddress(), "all")) {
        all.connect(null, null);
        subscribe(all, "sensors/#", 0, false);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          MqttClients.Received x = all.next();
          assertTrue(x.message().isRetained());
          got.add(x.topic() + "=" + x.payload());
        }
        got.sort(null);
        assertEquals(List.of("sensors/a/temp=30", "sensors/b/temp=21", "sensors/c/temp=40"), got);
      }
    }
  }

  @Test
  void anEmptyRetainedMessageDeletesTheTopicsMessageEverywhere() throws Exception {
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(1).mqttAddress(), "pub");
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(3).mqttAddress(), "sub")) {
      pub.connect(null, null);
      pub.publish("a/b", retained("x", 1));
      pub.publish("a/c", retained("y", 1));
      awaitStored(f.routers, 2);
      pub.publish("a/b", retained("", 1)); // MQTT-3.3.1-6: deletes a/b's retained message
      awaitStored(f.routers, 1);
      sub.connect(null, null);
      subscribe(sub, "a/#", 0, false);
      MqttClients.Received r = sub.next();
      assertEquals("a/c", r.topic());
      f.awaitPredicates();
      pub.publish("a/marker", "m", 1);
      assertEquals("a/marker", sub.next().topic(), "nothing retained for a/b");
    }
  }

  @Test
  void retainHandlingAndRetainAsPublishedAreObeyed() throws Exception {
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(0).mqttAddress(), "pub");
        MqttClients.Client sub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "sub")) {
      pub.connect(null, null);
      pub.publish("k/1", retained("one", 1));
      awaitStored(f.routers, 1);
      sub.connect(null, null);
      subscribe(sub, "k/#", 2, true); // Retain Handling 2: none sent (MQTT-3.3.1-11)
      subscribe(sub, "k/+", 1, false); // 1: sent, the subscription being new (MQTT-3.3.1-10)
      MqttClients.Received r = sub.next();
      assertEquals("one", r.payload());
      assertTrue(r.message().isRetained());
      subscribe(sub, "k/+", 1, false); // 1 again: it exists now, so none
      f.awaitPredicates();
      // Live: k/# keeps the RETAIN flag (Retain As Published, MQTT-3.3.1-13), one copy.
      pub.publish("k/2", retained("two", 1));
      r = sub.next();
      assertEquals("two", r.payload());
      assertTrue(r.message().isRetained(), "Retain As Published");
      pub.publish("k/3", "three", 1);
      r = sub.next();
      assertEquals("three", r.payload(), "nothing between: no retained copy for the second k/+");
      assertFalse(r.message().isRetained());
    }
  }

  /** A router that starts after retained messages were published is handed them. */
  @Test
  void aRouterThatStartsLaterIsHandedTheRetainedMessages() throws Exception {
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(1).mqttAddress(), "pub")) {
      pub.connect(null, null);
      pub.publish("fleet/truck-7/state", retained("parked", 1));
      awaitStored(f.routers, 1);
      Router old = f.routers.get(3);
      old.close();
      Federation.await(
          "the others to lose router 3",
          () ->
              f.routers.stream()
                  .filter(r -> r != old)
                  .allMatch(r -> r.view().reachable().length == 2));
      List<RouterConfig.Neighbour> ns = new ArrayList<>();
      for (int n : f.topology.neighbours(3)) {
        ns.add(new RouterConfig.Neighbour(n, null, 1, RouterConfig.LinkTransport.TCP));
      }
      Router fresh =
          Router.start(
              new RouterConfig(
                      3,
                      5_000,
                      ANY,
                      ANY,
                      null,
                      ns,
                      Federation.FAST,
                      BloomParameters.DEFAULT,
                      RouterLimits.DEFAULT,
                      "secret")
                  .withMqttListen(ANY));
      f.routers.set(3, fresh);
      for (int n : f.topology.neighbours(3)) {
        if (n < 3) {
          f.routers.get(n).connect(3, fresh.routerAddress());
        }
      }
      f.awaitRoutes();
      awaitStored(List.of(fresh), 1);
      try (MqttClients.Client sub = new MqttClients.Client(fresh.mqttAddress(), "sub")) {
        sub.connect(null, null);
        subscribe(sub, "fleet/+/state", 0, false);
        MqttClients.Received r = sub.next();
        assertEquals("parked", r.payload());
        assertTrue(r.message().isRetained());
      }
    }
  }

  @Test
  void retainedMessagesReachOnlyWhatTheSubscribePermissionAllows() throws Exception {
    String viewer = ClientAuth.newToken();
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "viewer",
                    ClientAuth.hashLine(viewer),
                    new ClientAuth.Permissions(
                        "viewer", Predicate.parse("mqtt.level.0 = \"public\""), null))),
            ClientAuth.Permissions.ALL);
    try (Router r = Router.start(Federation.loneRouter().withClientAuth(auth).withMqttListen(ANY));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub");
        MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "sub")) {
      pub.connect(null, null);
      pub.publish("secret/plan", retained("s", 1));
      pub.publish("public/news", retained("p", 1));
      awaitStored(List.of(r), 2);
      sub.connect("viewer", viewer);
      subscribe(sub, "#", 0, false);
      assertEquals("public/news", sub.next().topic());
      pub.publish("public/marker", "m", 1);
      assertEquals("public/marker", sub.next().topic(), "secret/plan was not sent");
    }
  }

  @Test
  void aRetainedWillIsKeptLikeARetainedPublish() throws Exception {
    try (Router r = Router.start(Federation.loneRouter().withMqttListen(ANY))) {
      ByteArrayOutputStream v = new ByteArrayOutputStream();
      // MQTT 5 CONNECT: clean start, will flag, will QoS 1, will retain; no properties.
      v.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 5, 0x02 | 0x04 | 0x08 | 0x20, 0, 60, 0});
      string(v, "w");
      v.write(0); // no will properties
      string(v, "status/w");
      string(v, "offline");
      try (Socket s = new Socket("127.0.0.1", r.mqttAddress().getPort())) {
        s.setSoTimeout(20_000);
        s.getOutputStream().write(MqttBadInputTest.packet(0x10, v.toByteArray()));
        MqttBadInputTest.Packet ack =
            MqttBadInputTest.read(new DataInputStream(s.getInputStream()));
        assertEquals(0, ack.rest()[1], "accepted, though its will is retained");
      } // closed without a DISCONNECT: the will is published
      awaitStored(List.of(r), 1);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "sub")) {
        sub.connect(null, null);
        subscribe(sub, "status/+", 0, false);
        MqttClients.Received got = sub.next();
        assertEquals("offline", got.payload());
        assertTrue(got.message().isRetained());
      }
    }
  }

  private static void string(ByteArrayOutputStream o, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    o.write(b.length >> 8);
    o.write(b.length);
    o.writeBytes(b);
  }

  @Test
  void aBdrpClientCannotForgeARetainedMessage() throws Exception {
    try (Federation f = federation()) {
      BdrpClient c = f.client(0, "forger");
      Message forged =
          MqttRetained.stamp(
              MqttTopic.put(Message.builder(), "x/y").body(new byte[] {1}).build(),
              Long.MAX_VALUE,
              0);
      ExecutionException e =
          assertThrows(
              ExecutionException.class, () -> c.sendAcknowledged(forged).get(10, TimeUnit.SECONDS));
      assertTrue(
          e.getCause().getMessage().contains("set by routers only"), e.getCause().getMessage());
      Message wrapped = MqttRetained.wrap(forged, 1);
      assertThrows(
          ExecutionException.class, () -> c.sendAcknowledged(wrapped).get(10, TimeUnit.SECONDS));
      assertEquals(0, stored(f.routers.get(0)));
      assertEquals(0, stored(f.routers.get(1)));
    }
  }

  @Test
  void mosquittoClientsRetainOnOneRouterAndReceiveOnAnother() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    try (Federation f = federation()) {
      Process pub =
          new ProcessBuilder(
                  "mosquitto_pub",
                  "-h",
                  "127.0.0.1",
                  "-p",
                  Integer.toString(f.routers.get(0).mqttAddress().getPort()),
                  "-V",
                  "mqttv311",
                  "-q",
                  "1",
                  "-r",
                  "-t",
                  "plant/line-2/mode",
                  "-m",
                  "maintenance")
              .redirectErrorStream(true)
              .start();
      assertTrue(pub.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, pub.exitValue(), new String(pub.getInputStream().readAllBytes()));
      awaitStored(f.routers, 1);
      Process sub =
          new ProcessBuilder(
                  "mosquitto_sub",
                  "-h",
                  "127.0.0.1",
                  "-p",
                  Integer.toString(f.routers.get(2).mqttAddress().getPort()),
                  "-V",
                  "mqttv311",
                  "-t",
                  "plant/+/mode",
                  "-C",
                  "1",
                  "-W",
                  "20",
                  "-v",
                  "--retained-only")
              .redirectErrorStream(true)
              .start();
      assertTrue(sub.waitFor(30, TimeUnit.SECONDS));
      String out = new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, sub.exitValue(), out);
      assertEquals("plant/line-2/mode maintenance", out.strip());
    }
  }
}
