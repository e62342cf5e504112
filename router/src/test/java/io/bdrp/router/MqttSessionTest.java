package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.topologies.Bundled;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.client.IMqttToken;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MQTT sessions kept after their connection (MQTT 5 Clean Start 0 with a Session Expiry Interval,
 * §4.1) and QoS 2 deliveries to subscribers (§4.3.3): what was published while the client was away
 * reaches it once, in order, when it comes back; a session expires, a Clean Start 1 discards it,
 * its queue is bounded; the QoS 2 flow and what is sent again after a reconnection, packet by
 * packet.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MqttSessionTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  static long metric(Router r, String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  static long clients(Router r) {
    Matcher m = Pattern.compile("(?m)^bdrp_clients (\\d+)(?:\\.0)?$").matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  static long sessions(Router r, String event) {
    return metric(r, "bdrp_mqtt_sessions_total", "event=\"" + event + "\",protocol=\"mqtt5\"");
  }

  static long queued(Router r, String protocol) {
    return metric(r, "bdrp_mqtt_queued_total", "protocol=\"" + protocol + "\",qos=\"1\"")
        + metric(r, "bdrp_mqtt_queued_total", "protocol=\"" + protocol + "\",qos=\"2\"");
  }

  static long dropped(Router r, String reason) {
    return metric(
        r, "bdrp_mqtt_deliveries_dropped_total", "protocol=\"mqtt5\",reason=\"" + reason + "\"");
  }

  /** Connects {@code c} with Clean Start {@code cleanStart}, the session kept {@code expiry} s. */
  private static IMqttToken connect(MqttClients.Client c, boolean cleanStart, long expiry)
      throws Exception {
    MqttConnectionOptions o = new MqttConnectionOptions();
    o.setCleanStart(cleanStart);
    o.setSessionExpiryInterval(expiry);
    o.setAutomaticReconnect(false);
    IMqttToken t = c.paho.connect(o);
    t.waitForCompletion(10_000);
    return t;
  }

  private static RouterConfig lone(int queuedMessages) {
    RouterConfig c = Federation.loneRouter().withMqttListen(ANY);
    RouterLimits l = c.limits();
    return c.withLimits(
        l.withHosts(l.hosts().withMqttSessions(3600, queuedMessages, 1 << 20, 1000)));
  }

  @Test
  void qos1AndQos2PublishedWhileTheSubscriberIsAwayReachItOnceInOrderWhenItComesBack()
      throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-4"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    c -> c.withMqttListen(ANY))
                .awaitRoutes();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      Router r0 = f.routers.get(0);
      try (MqttClients.Client sub = new MqttClients.Client(r0.mqttAddress(), "keeper")) {
        assertFalse(connect(sub, false, 3600).getSessionPresent(), "no session yet");
        assertEquals(2, sub.subscribe("orders/#", 2)[0], "QoS 2 granted");
        f.awaitPredicates();
        sub.paho.disconnect().waitForCompletion(10_000);
      }
      Federation.await("the session kept", () -> sessions(r0, "kept") == 1);
      pub.connect(null, null);
      for (int i = 0; i < 10; i++) {
        pub.publish("orders/" + i, "order " + i, 1 + i % 2);
      }
      Federation.await("ten deliveries queued at router 0", () -> queued(r0, "mqtt5") == 10);
      try (MqttClients.Client sub = new MqttClients.Client(r0.mqttAddress(), "keeper")) {
        assertTrue(connect(sub, false, 3600).getSessionPresent(), "MQTT-3.2.2-2");
        for (int i = 0; i < 10; i++) {
          MqttClients.Received m = sub.next();
          assertEquals("order " + i, m.payload(), "in the order published");
          assertEquals(1 + i % 2, m.message().getQos());
        }
        pub.publish("orders/last", "last", 2); // the subscription was kept
        assertEquals("last", sub.next().payload(), "nothing came twice");
        assertEquals(1, sessions(r0, "resumed"));
      }
    }
  }

  @Test
  void aSessionExpiresAfterItsIntervalAndTheRouterCapsTheIntervalItKeeps() throws Exception {
    RouterConfig c = Federation.loneRouter().withMqttListen(ANY);
    RouterLimits l = c.limits();
    try (Router r =
            Router.start(
                c.withLimits(l.withHosts(l.hosts().withMqttSessions(1, 1000, 1 << 20, 1000))));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect(null, null);
      try (Socket s = new Socket("127.0.0.1", r.mqttAddress().getPort())) {
        s.setSoTimeout(20_000);
        s.getOutputStream().write(connect5("brief", false, 3600, 0));
        MqttBadInputTest.Packet ack =
            MqttBadInputTest.read(new DataInputStream(s.getInputStream()));
        assertEquals(0x20, ack.first(), "CONNACK");
        assertEquals(0, ack.rest()[0], "Session Present 0");
        assertTrue(
            contains(ack.rest(), new byte[] {0x11, 0, 0, 0, 1}),
            "Session Expiry Interval 1: the router's limit, told to the client");
        s.getOutputStream().write(subscribe(1, "gone/#", 1));
        assertEquals(0x90, MqttBadInputTest.read(new DataInputStream(s.getInputStream())).first());
        s.getOutputStream().write(new byte[] {(byte) 0xE0, 0});
        assertEquals(-1, s.getInputStream().read(), "closed after the DISCONNECT");
      }
      Federation.await("the session expired", () -> sessions(r, "expired") == 1);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "brief")) {
        assertFalse(connect(sub, false, 3600).getSessionPresent(), "expired: no session");
        sub.subscribe("marker", 1);
        pub.publish("gone/1", "to the expired subscription", 1);
        pub.publish("marker", "marker", 1);
        assertEquals("marker", sub.next().payload(), "the expired session's filter was removed");
      }
    }
  }

  private static boolean contains(byte[] b, byte[] part) {
    outer:
    for (int i = 0; i + part.length <= b.length; i++) {
      for (int k = 0; k < part.length; k++) {
        if (b[i + k] != part[k]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  @Test
  void cleanStart1DiscardsTheSessionAndWhatItQueued() throws Exception {
    try (Router r = Router.start(lone(1000));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect(null, null);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "fresh")) {
        connect(sub, false, 3600);
        sub.subscribe("old/#", 1);
        sub.paho.disconnect().waitForCompletion(10_000);
      }
      Federation.await("the session kept", () -> sessions(r, "kept") == 1);
      pub.publish("old/1", "queued", 1);
      Federation.await("one delivery queued", () -> queued(r, "mqtt5") == 1);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "fresh")) {
        assertFalse(connect(sub, true, 3600).getSessionPresent(), "MQTT-3.1.2-4");
        assertEquals(1, sessions(r, "discarded"));
        assertEquals(1, dropped(r, "session_ended"), "the queued delivery let go, counted");
        sub.subscribe("marker", 1);
        pub.publish("old/2", "to the discarded subscription", 1);
        pub.publish("marker", "marker", 1);
        assertEquals("marker", sub.next().payload(), "neither the queue nor the filter survived");
      }
    }
  }

  @Test
  void theQueueIsBoundedAndQos0ToAnAbsentSessionIsDropped() throws Exception {
    try (Router r = Router.start(lone(3));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect(null, null);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "bounded")) {
        connect(sub, false, 3600);
        sub.subscribe("q/#", 1);
        sub.paho.disconnect().waitForCompletion(10_000);
      }
      Federation.await("the session kept", () -> sessions(r, "kept") == 1);
      pub.publish("q/zero", "qos 0", 0);
      for (int i = 0; i < 5; i++) {
        pub.publish("q/" + i, "m" + i, 1);
      }
      Federation.await(
          "three queued, two dropped",
          () -> queued(r, "mqtt5") == 3 && dropped(r, "queue_messages") == 2);
      assertEquals(1, dropped(r, "absent_qos0"));
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "bounded")) {
        assertTrue(connect(sub, false, 3600).getSessionPresent());
        for (int i = 0; i < 3; i++) {
          assertEquals("m" + i, sub.next().payload(), "the first three, in order");
        }
        pub.publish("q/after", "after", 1);
        assertEquals("after", sub.next().payload(), "the two beyond the bound were dropped");
      }
    }
  }

  /** Connects {@code c} as {@code user} with {@code token}, Clean Start 0, kept an hour. */
  private static IMqttToken connectAs(MqttClients.Client c, String user, String token)
      throws Exception {
    MqttConnectionOptions o = new MqttConnectionOptions();
    o.setCleanStart(false);
    o.setSessionExpiryInterval(3600L);
    o.setAutomaticReconnect(false);
    o.setUserName(user);
    o.setPassword(token.getBytes(StandardCharsets.UTF_8));
    IMqttToken t = c.paho.connect(o);
    t.waitForCompletion(10_000);
    return t;
  }

  @Test
  void queuedDeliveriesStayWithinTheSubscribePermissionAndAnotherUserDiscardsTheSession()
      throws Exception {
    String watcher = ClientAuth.newToken();
    String other = ClientAuth.newToken();
    String ops = ClientAuth.newToken();
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "watcher",
                    ClientAuth.hashLine(watcher),
                    new ClientAuth.Permissions(
                        "watcher", Predicate.parse("mqtt.level.1 = \"public\""), null)),
                ClientAuth.user(
                    "other",
                    ClientAuth.hashLine(other),
                    new ClientAuth.Permissions("other", null, null)),
                ClientAuth.user(
                    "ops",
                    ClientAuth.hashLine(ops),
                    new ClientAuth.Permissions("ops", null, null))),
            null);
    try (Router r = Router.start(lone(1000).withClientAuth(auth));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect("ops", ops);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "watch")) {
        connectAs(sub, "watcher", watcher);
        assertEquals(1, sub.subscribe("feed/#", 1)[0], "granted: part of it is permitted");
        sub.paho.disconnect().waitForCompletion(10_000);
      }
      Federation.await("the session kept", () -> sessions(r, "kept") == 1);
      pub.publish("feed/secret/1", "secret", 1);
      pub.publish("feed/public/1", "public", 1);
      Federation.await("one delivery queued", () -> queued(r, "mqtt5") == 1);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "watch")) {
        assertTrue(connectAs(sub, "watcher", watcher).getSessionPresent());
        assertEquals("public", sub.next().payload(), "only what the permission lets through");
        sub.paho.disconnect().waitForCompletion(10_000);
      }
      Federation.await("the session kept again", () -> sessions(r, "kept") == 2);
      try (MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "watch")) {
        assertFalse(
            connectAs(sub, "other", other).getSessionPresent(),
            "another user's CONNECT does not take the session up");
        assertEquals(1, sessions(r, "discarded"));
      }
    }
  }

  @Test
  void beyondTheAbsentSessionsLimitASessionEndsWithItsConnection() throws Exception {
    RouterConfig c = Federation.loneRouter().withMqttListen(ANY);
    RouterLimits l = c.limits();
    try (Router r =
        Router.start(
            c.withLimits(l.withHosts(l.hosts().withMqttSessions(3600, 1000, 1 << 20, 1))))) {
      try (MqttClients.Client a = new MqttClients.Client(r.mqttAddress(), "a");
          MqttClients.Client b = new MqttClients.Client(r.mqttAddress(), "b")) {
        connect(a, false, 3600);
        connect(b, false, 3600);
        a.paho.disconnect().waitForCompletion(10_000);
        Federation.await("a kept", () -> sessions(r, "kept") == 1);
        b.paho.disconnect().waitForCompletion(10_000);
        Federation.await("b not kept", () -> sessions(r, "limit") == 1);
      }
      try (MqttClients.Client a = new MqttClients.Client(r.mqttAddress(), "a");
          MqttClients.Client b = new MqttClients.Client(r.mqttAddress(), "b")) {
        assertTrue(connect(a, false, 3600).getSessionPresent(), "a was kept");
        assertFalse(connect(b, false, 3600).getSessionPresent(), "b ended with its connection");
      }
    }
  }

  // ---- Raw packets ----

  /**
   * An MQTT 5 CONNECT of {@code id}, keep-alive 60 s, with Clean Start {@code cleanStart}, a
   * Session Expiry Interval of {@code expiry} s and a Receive Maximum of {@code receiveMaximum} (0:
   * none of either).
   */
  static byte[] connect5(String id, boolean cleanStart, int expiry, int receiveMaximum) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 5, (byte) (cleanStart ? 0x02 : 0), 0, 60});
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    if (expiry > 0) {
      p.writeBytes(
          new byte[] {0x11, (byte) (expiry >> 24), (byte) (expiry >> 16), (byte) (expiry >> 8)});
      p.write(expiry);
    }
    if (receiveMaximum > 0) {
      p.writeBytes(new byte[] {0x21, (byte) (receiveMaximum >> 8), (byte) receiveMaximum});
    }
    v.write(p.size());
    v.writeBytes(p.toByteArray());
    v.write(0);
    v.write(id.length());
    v.writeBytes(id.getBytes(StandardCharsets.US_ASCII));
    return MqttBadInputTest.packet(0x10, v.toByteArray());
  }

  /** An MQTT 5 SUBSCRIBE with packet {@code id} of {@code filter} at {@code qos}. */
  static byte[] subscribe(int id, String filter, int qos) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    v.writeBytes(new byte[] {(byte) (id >> 8), (byte) id, 0});
    byte[] f = filter.getBytes(StandardCharsets.UTF_8);
    v.write(f.length >> 8);
    v.write(f.length);
    v.writeBytes(f);
    v.write(qos);
    return MqttBadInputTest.packet(0x82, v.toByteArray());
  }

  /** A PUBACK, PUBREC, PUBREL or PUBCOMP ({@code first}) of {@code id}, with {@code reason}. */
  static byte[] reply(int first, int id, int reason) {
    return MqttBadInputTest.packet(
        first,
        reason == 0
            ? new byte[] {(byte) (id >> 8), (byte) id}
            : new byte[] {(byte) (id >> 8), (byte) id, (byte) reason});
  }

  /** A PUBLISH the router sent: its first byte, topic, packet identifier and payload. */
  record Publish(int first, String topic, int packetId, String payload) {
    int qos() {
      return (first >> 1) & 3;
    }

    boolean dup() {
      return (first & 0x08) != 0;
    }
  }

  static Publish publish(MqttBadInputTest.Packet p) {
    assertEquals(0x30, p.first() & 0xF0, "PUBLISH");
    byte[] b = p.rest();
    int n = (b[0] & 0xFF) << 8 | (b[1] & 0xFF);
    String topic = new String(b, 2, n, StandardCharsets.UTF_8);
    int at = 2 + n;
    int id = 0;
    if ((p.first() & 0x06) != 0) {
      id = (b[at] & 0xFF) << 8 | (b[at + 1] & 0xFF);
      at += 2;
    }
    int props = 0;
    int shift = 0;
    while (true) {
      int x = b[at++] & 0xFF;
      props |= (x & 0x7F) << shift;
      shift += 7;
      if ((x & 0x80) == 0) {
        break;
      }
    }
    at += props;
    return new Publish(
        p.first(), topic, id, new String(b, at, b.length - at, StandardCharsets.UTF_8));
  }

  /** The packet identifier of a PUBREL or PUBCOMP, and its reason code (0 if absent). */
  static int[] idAndReason(MqttBadInputTest.Packet p) {
    byte[] b = p.rest();
    return new int[] {(b[0] & 0xFF) << 8 | (b[1] & 0xFF), b.length > 2 ? b[2] & 0xFF : 0};
  }

  /**
   * A raw MQTT 5 connection: its CONNACK read, Session Present returned through {@link #present}.
   */
  private static final class Raw implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    final OutputStream out;
    final boolean present;

    Raw(Router r, byte[] connect) throws IOException {
      socket = new Socket("127.0.0.1", r.mqttAddress().getPort());
      socket.setSoTimeout(20_000);
      in = new DataInputStream(socket.getInputStream());
      out = socket.getOutputStream();
      out.write(connect);
      MqttBadInputTest.Packet ack = MqttBadInputTest.read(in);
      assertEquals(0x20, ack.first(), "CONNACK");
      assertEquals(0, ack.rest()[1], "accepted");
      present = ack.rest()[0] == 1;
    }

    MqttBadInputTest.Packet read() throws IOException {
      return MqttBadInputTest.read(in);
    }

    /** A PINGREQ and its PINGRESP: the router has read what was sent before. */
    void sync() throws IOException {
      out.write(new byte[] {(byte) 0xC0, 0});
      assertEquals(0xD0, read().first(), "PINGRESP");
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  void qos2DeliveriesGoPublishPubrecPubrelPubcompWithinTheReceiveMaximum() throws Exception {
    try (Router r = Router.start(lone(1000));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub");
        Raw sub = new Raw(r, connect5("q2", true, 0, 1))) {
      pub.connect(null, null);
      sub.out.write(subscribe(1, "x/#", 2));
      MqttBadInputTest.Packet ack = sub.read();
      assertEquals(0x90, ack.first(), "SUBACK");
      assertEquals(2, ack.rest()[ack.rest().length - 1], "QoS 2 granted");
      pub.publish("x/1", "one", 2);
      pub.publish("x/2", "two", 2); // beyond the Receive Maximum of 1: dropped, no session kept
      Publish one = publish(sub.read());
      assertEquals(2, one.qos());
      assertEquals("one", one.payload());
      Federation.await("the second beyond the window", () -> dropped(r, "inflight_window") == 1);
      sub.out.write(reply(0x50, one.packetId(), 0)); // PUBREC
      MqttBadInputTest.Packet rel = sub.read();
      assertEquals(0x62, rel.first(), "PUBREL");
      assertEquals(one.packetId(), idAndReason(rel)[0]);
      // The identifier is held until the PUBCOMP: still no room for another.
      pub.publish("x/3", "three", 2);
      Federation.await("the third beyond the window", () -> dropped(r, "inflight_window") == 2);
      sub.out.write(reply(0x70, one.packetId(), 0)); // PUBCOMP
      sub.sync();
      pub.publish("x/4", "four", 2);
      Publish four = publish(sub.read());
      assertEquals("four", four.payload());
      // A PUBREC with a failure reason ends the flow: no PUBREL, the identifier free (MQTT-4.3.3).
      sub.out.write(reply(0x50, four.packetId(), 0x80));
      sub.sync();
      pub.publish("x/5", "five", 2);
      Publish five = publish(sub.read());
      assertEquals("five", five.payload());
      // A PUBREC for an identifier not in flight: PUBREL 0x92.
      sub.out.write(reply(0x50, 999, 0));
      MqttBadInputTest.Packet unknown = sub.read();
      assertEquals(0x62, unknown.first(), "PUBREL");
      assertEquals(999, idAndReason(unknown)[0]);
      assertEquals(0x92, idAndReason(unknown)[1], "Packet Identifier not found");
      // A PUBREL for an identifier the router does not hold: PUBCOMP 0x92.
      sub.out.write(reply(0x62, 998, 0));
      MqttBadInputTest.Packet comp = sub.read();
      assertEquals(0x70, comp.first(), "PUBCOMP");
      assertEquals(0x92, idAndReason(comp)[1], "Packet Identifier not found");
    }
  }

  @Test
  void whatWasInFlightIsSentAgainAfterAReconnectionPublishWithDupThenPubrel() throws Exception {
    try (Router r = Router.start(lone(1000));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect(null, null);
      int rel;
      int unacked;
      try (Raw sub = new Raw(r, connect5("again", true, 3600, 0))) {
        sub.out.write(subscribe(1, "y/#", 2));
        assertEquals(0x90, sub.read().first(), "SUBACK");
        pub.publish("y/2", "two", 2);
        pub.publish("y/1", "one", 1);
        Publish two = publish(sub.read());
        Publish one = publish(sub.read());
        assertEquals("two", two.payload());
        assertEquals("one", one.payload());
        sub.out.write(reply(0x50, two.packetId(), 0)); // PUBREC: the PUBREL comes
        MqttBadInputTest.Packet p = sub.read();
        assertEquals(0x62, p.first(), "PUBREL");
        rel = two.packetId();
        unacked = one.packetId();
        // Gone without a PUBCOMP for the first, a PUBACK for the second.
      }
      Federation.await("the session kept", () -> sessions(r, "kept") == 1);
      pub.publish("y/3", "three", 1);
      Federation.await("one delivery queued", () -> queued(r, "mqtt5") == 1);
      try (Raw sub = new Raw(r, connect5("again", false, 3600, 0))) {
        assertTrue(sub.present, "Session Present 1");
        MqttBadInputTest.Packet p = sub.read();
        assertEquals(0x62, p.first(), "the PUBREL again, first: it was sent first");
        assertEquals(rel, idAndReason(p)[0]);
        Publish one = publish(sub.read());
        assertTrue(one.dup(), "DUP set (MQTT-4.4.0-1)");
        assertEquals(unacked, one.packetId(), "the same packet identifier");
        assertEquals("one", one.payload());
        Publish three = publish(sub.read());
        assertFalse(three.dup());
        assertEquals("three", three.payload(), "then the queue");
        sub.out.write(reply(0x70, rel, 0));
        sub.out.write(reply(0x40, unacked, 0));
        sub.out.write(reply(0x40, three.packetId(), 0));
        pub.publish("y/4", "four", 1);
        assertEquals("four", publish(sub.read()).payload(), "the session goes on");
      }
    }
  }

  /** An MQTT 5 QoS 2 PUBLISH of {@code payload} to {@code topic}, packet {@code id}. */
  static byte[] publish2(String topic, int id, String payload, boolean dup) {
    ByteArrayOutputStream v = new ByteArrayOutputStream();
    byte[] t = topic.getBytes(StandardCharsets.UTF_8);
    v.write(t.length >> 8);
    v.write(t.length);
    v.writeBytes(t);
    v.writeBytes(new byte[] {(byte) (id >> 8), (byte) id, 0});
    v.writeBytes(payload.getBytes(StandardCharsets.UTF_8));
    return MqttBadInputTest.packet(dup ? 0x3C : 0x34, v.toByteArray());
  }

  @Test
  void theClientsQos2IdentifiersAwaitingPubrelSurviveAReconnection() throws Exception {
    try (Router r = Router.start(lone(1000));
        MqttClients.Client sub = new MqttClients.Client(r.mqttAddress(), "sub")) {
      sub.connect(null, null);
      sub.subscribe("in/#", 1);
      try (Raw pub = new Raw(r, connect5("sender", true, 3600, 0))) {
        pub.out.write(publish2("in/once", 5, "once", false));
        MqttBadInputTest.Packet rec = pub.read();
        assertEquals(0x50, rec.first(), "PUBREC");
        assertEquals(5, idAndReason(rec)[0]);
        // Gone before its PUBREL.
      }
      assertEquals("once", sub.next().payload());
      Federation.await("the session kept", () -> sessions(r, "kept") == 1);
      try (Raw pub = new Raw(r, connect5("sender", false, 3600, 0))) {
        assertTrue(pub.present);
        pub.out.write(publish2("in/once", 5, "once", true)); // sent again, DUP
        MqttBadInputTest.Packet rec = pub.read();
        assertEquals(0x50, rec.first(), "PUBREC, and not forwarded again");
        assertEquals(0, idAndReason(rec)[1]);
        pub.out.write(reply(0x62, 5, 0)); // PUBREL
        MqttBadInputTest.Packet comp = pub.read();
        assertEquals(0x70, comp.first(), "PUBCOMP");
        assertEquals(0, idAndReason(comp)[1], "the identifier was held (not 0x92)");
        pub.out.write(publish2("in/next", 6, "next", false));
        assertEquals(0x50, pub.read().first());
        assertEquals("next", sub.next().payload(), "the first came once");
      }
    }
  }

  @Test
  void aDisconnectMayChangeTheSessionExpiryButNotFromZero() throws Exception {
    try (Router r = Router.start(lone(1000))) {
      try (Raw s = new Raw(r, connect5("zero", true, 0, 0))) {
        // DISCONNECT 0x00 with a Session Expiry Interval of 60 after a CONNECT with none.
        s.out.write(new byte[] {(byte) 0xE0, 7, 0, 5, 0x11, 0, 0, 0, 60});
        MqttBadInputTest.Packet p = s.read();
        assertEquals(0xE0, p.first(), "DISCONNECT from the router");
        assertEquals(0x82, p.rest()[0] & 0xFF, "protocol error (MQTT-3.14.2-2)");
      }
      try (Raw s = new Raw(r, connect5("ends", true, 3600, 0))) {
        // DISCONNECT with a Session Expiry Interval of 0: the session ends with the connection.
        s.out.write(new byte[] {(byte) 0xE0, 7, 0, 5, 0x11, 0, 0, 0, 0});
        assertEquals(-1, s.in.read(), "closed");
      }
      Federation.await("the session ended", () -> clients(r) == 0);
      try (Raw s = new Raw(r, connect5("ends", false, 3600, 0))) {
        assertFalse(s.present, "the DISCONNECT's 0 ended it");
        assertEquals(0, sessions(r, "kept"));
      }
    }
  }

  @Test
  void aTakeoverWithCleanStart0KeepsTheSession() throws Exception {
    try (Router r = Router.start(lone(1000));
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub");
        Raw first = new Raw(r, connect5("taken", true, 3600, 0))) {
      pub.connect(null, null);
      first.out.write(subscribe(1, "z/#", 1));
      assertEquals(0x90, first.read().first(), "SUBACK");
      pub.publish("z/1", "one", 1);
      Publish one = publish(first.read());
      try (Raw second = new Raw(r, connect5("taken", false, 3600, 0))) {
        assertTrue(second.present, "the live session, taken over");
        Publish again = publish(second.read());
        assertTrue(again.dup());
        assertEquals(one.packetId(), again.packetId());
        second.out.write(reply(0x40, again.packetId(), 0));
        MqttBadInputTest.Packet d = first.read();
        assertEquals(0xE0, d.first(), "the first disconnected");
        assertEquals(0x8E, d.rest()[0] & 0xFF, "session taken over");
        pub.publish("z/2", "two", 1);
        assertEquals("two", publish(second.read()).payload(), "subscriptions kept");
      }
    }
  }
}
