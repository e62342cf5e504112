package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Subscription identifiers (MQTT 5 §3.8.2.1.2, §3.3.4): the CONNACK says they are available, a
 * SUBSCRIBE may carry one, and the one copy of a message a session gets carries the identifiers of
 * every subscription of the session that the message matches.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MqttSubscriptionIdTest {
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

  /**
   * Subscribes {@code filter} at QoS 1 with subscription identifier {@code id} (0: none), on a
   * plain socket: the SUBSCRIBE carries exactly the identifier given.
   */
  private void subscribe(MqttRawSession s, String filter, int id) throws Exception {
    int packet = ++packets;
    s.subscribe(filter, packet, id == 0 ? new byte[0] : MqttRawSession.subscriptionId(id));
    assertEquals(1, s.suback(packet), filter);
  }

  private int packets;

  /** The subscription identifiers of the next message {@code s} receives, sorted. */
  private static int[] nextIds(MqttRawSession s, String payload) throws Exception {
    MqttRawSession.Delivery d = s.delivery();
    assertEquals(payload, d.payload());
    return d.subscriptionIds().stream().mapToInt(Integer::intValue).sorted().toArray();
  }

  @Test
  void theConnackSaysSubscriptionIdentifiersAreAvailable() throws Exception {
    try (MqttRawSession s = new MqttRawSession(router.mqttAddress(), "raw")) {
      assertEquals(1L, s.connack.get(0x29), "Subscription Identifier Available");
    }
  }

  @Test
  void aDeliveryCarriesTheIdentifiersOfEveryMatchingSubscription() throws Exception {
    try (MqttRawSession sub = new MqttRawSession(router.mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(router.mqttAddress(), "pub")) {
      pub.connect(null, null);
      subscribe(sub, "a/+", 1);
      subscribe(sub, "a/b?mqtt.user.v > 5", 268_435_455); // the largest identifier
      subscribe(sub, "a/#", 0);
      subscribe(sub, "c/#", 7);
      subscribe(sub, "c/+", 7);
      subscribe(sub, "x/#", 3); // matches none of the messages below
      pub.publish("a/b", "both", 0, "v", "10");
      assertArrayEquals(new int[] {1, 268_435_455}, nextIds(sub, "both"));
      pub.publish("a/b", "one", 0, "v", "1");
      assertArrayEquals(new int[] {1}, nextIds(sub, "one"));
      pub.publish("a/c/d", "none", 0);
      assertArrayEquals(new int[0], nextIds(sub, "none"));
      pub.publish("c/d", "shared", 0);
      assertArrayEquals(new int[] {7}, nextIds(sub, "shared"), "an identifier once");
      // Subscribing again without an identifier takes it away (MQTT 5 §3.8.2.1.2).
      subscribe(sub, "a/+", 0);
      pub.publish("a/b", "replaced", 0, "v", "1");
      assertArrayEquals(new int[0], nextIds(sub, "replaced"));
      // Each message came once: the next PUBLISH is the last one.
      subscribe(sub, "z", 0);
      pub.publish("z", "last", 0);
      assertEquals("last", sub.delivery().payload());
    }
  }

  @Test
  void aSubscriptionIdentifierOfZeroIsAProtocolError() throws Exception {
    try (MqttRawSession s = new MqttRawSession(router.mqttAddress(), "zero")) {
      s.subscribe("a/#", 1, MqttRawSession.subscriptionId(0));
      assertEquals(0x82, s.disconnectReason());
    }
  }

  @Test
  void twoSubscriptionIdentifiersInOneSubscribeAreAProtocolError() throws Exception {
    try (MqttRawSession s = new MqttRawSession(router.mqttAddress(), "two")) {
      ByteArrayOutputStream p = new ByteArrayOutputStream();
      p.writeBytes(MqttRawSession.subscriptionId(1));
      p.writeBytes(MqttRawSession.subscriptionId(2));
      s.subscribe("a/#", 1, p.toByteArray());
      assertEquals(0x82, s.disconnectReason());
    }
  }
}
