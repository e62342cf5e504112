package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.topologies.Bundled;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.paho.mqttv5.client.IMqttToken;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Shared subscriptions ({@code $share/ShareName/filter}, MQTT 5 §4.8.2) with real clients: within a
 * router each message of a group goes to exactly one of its members, round robin among those that
 * can take it and whose subscribe permission it is within; across a federation one member at each
 * router that has members gets it; invalid share names and No Local are refused.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttSharedSubscriptionTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static long metric(Router r, String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static long shared(Router r, String result) {
    return metric(r, "bdrp_mqtt_shared_deliveries_total", "result=\"" + result + "\"");
  }

  private static Router lone() throws InterruptedException {
    return Router.start(Federation.loneRouter().withMqttListen(ANY));
  }

  /**
   * The payloads {@code c} received on the group's topics until the marker {@code end}, which it
   * subscribed to on its own: the router writes a session's deliveries in the order it forwards
   * them, so the marker comes after every message published before it.
   */
  private static List<String> until(MqttClients.Client c, String end) throws InterruptedException {
    List<String> got = new ArrayList<>();
    for (MqttClients.Received r = c.next(); !r.topic().equals(end); r = c.next()) {
      got.add(r.payload());
    }
    return got;
  }

  private static Set<String> numbered(int n) {
    Set<String> all = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      all.add("m" + i);
    }
    return all;
  }

  /** Every payload of {@code parts} once, and together {@code n} of them: m0 .. m(n-1). */
  private static void assertPartition(int n, List<List<String>> parts) {
    Set<String> union = new TreeSet<>();
    int total = 0;
    for (List<String> p : parts) {
      union.addAll(p);
      total += p.size();
    }
    assertEquals(numbered(n), union, "every message delivered");
    assertEquals(n, total, "each message to one member only");
  }

  @Test
  void twoMembersAtOneRouterShareAStreamRoundRobin() throws Exception {
    try (Router r = lone();
        MqttClients.Client a = new MqttClients.Client(r.mqttAddress(), "a");
        MqttClients.Client b = new MqttClients.Client(r.mqttAddress(), "b");
        MqttClients.Client all = new MqttClients.Client(r.mqttAddress(), "all");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      MqttConnectionOptions o = new MqttConnectionOptions();
      o.setCleanStart(true);
      IMqttToken t = a.paho.connect(o);
      t.waitForCompletion(10_000);
      assertTrue(
          t.getResponseProperties().isSharedSubscriptionAvailable(),
          "CONNACK: Shared Subscription Available");
      b.connect(null, null);
      all.connect(null, null);
      pub.connect(null, null);
      for (MqttClients.Client c : List.of(a, b)) {
        assertArrayEquals(new int[] {1}, c.subscribe("$share/workers/jobs/#", 1));
        assertArrayEquals(new int[] {0}, c.subscribe("end", 0));
      }
      assertArrayEquals(new int[] {1}, all.subscribe("jobs/#", 1), "an ordinary subscription");
      all.subscribe("end", 0);
      int n = 20;
      for (int i = 0; i < n; i++) {
        pub.publish("jobs/" + i, "m" + i, 1);
      }
      pub.publish("end", "", 0);
      List<String> toA = until(a, "end");
      List<String> toB = until(b, "end");
      assertPartition(n, List.of(toA, toB));
      assertEquals(n / 2, toA.size(), "round robin: both could take every message");
      assertEquals(numbered(n), new TreeSet<>(until(all, "end")), "the ordinary one got all");
      assertEquals(n, shared(r, "delivered"));
      assertEquals(0, shared(r, "no_member"));

      // a unsubscribes: b gets everything; then b leaves by disconnecting: none is left.
      assertArrayEquals(new int[] {0}, a.unsubscribe("$share/workers/jobs/#"));
      for (int i = n; i < n + 4; i++) {
        pub.publish("jobs/" + i, "m" + i, 1);
      }
      pub.publish("end", "", 0);
      assertEquals(List.of(), until(a, "end"));
      assertEquals(List.of("m20", "m21", "m22", "m23"), until(b, "end"));
      b.paho.disconnect().waitForCompletion(5_000);
      Federation.await("b's session to end", () -> clients(r) == 3);
      pub.publish("jobs/x", "to no one", 1);
      pub.publish("end", "", 0);
      assertEquals(List.of(), until(a, "end"));
      assertEquals(n + 4, shared(r, "delivered"));
      assertEquals(0, shared(r, "no_member"), "the group was removed with its last member");
    }
  }

  private static long clients(Router r) {
    Matcher m = Pattern.compile("(?m)^bdrp_clients (\\d+)").matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  @Test
  void twoGroupsOfOneFilterEachGetEveryMessageAndSubscriptionIdentifiersArePerMember()
      throws Exception {
    try (Router r = lone();
        MqttRawSession a = new MqttRawSession(r.mqttAddress(), "a");
        MqttClients.Client b = new MqttClients.Client(r.mqttAddress(), "b");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      b.connect(null, null);
      pub.connect(null, null);
      a.subscribe("$share/one/t", 1, MqttRawSession.subscriptionId(7));
      assertEquals(1, a.suback(1), "QoS 1 granted");
      assertArrayEquals(new int[] {1}, b.subscribe("$share/two/t", 1));
      pub.publish("t", "x", 0);
      MqttRawSession.Delivery d = a.delivery();
      assertEquals("x", d.payload());
      assertEquals(List.of(7), d.subscriptionIds(), "a's identifier for its shared subscription");
      assertEquals("x", b.next().payload(), "each group gets its copy");
    }
  }

  @Test
  void membersAtTwoRoutersEachRouterGivesOneOfItsMembersACopy() throws Exception {
    try (Federation f =
            new Federation(
                    Bundled.load("routers-4"),
                    RouterConfig.LinkTransport.TCP,
                    null,
                    c -> c.withMqttListen(ANY))
                .awaitRoutes();
        MqttClients.Client a0 = new MqttClients.Client(f.routers.get(0).mqttAddress(), "a0");
        MqttClients.Client b0 = new MqttClients.Client(f.routers.get(0).mqttAddress(), "b0");
        MqttClients.Client c2 = new MqttClients.Client(f.routers.get(2).mqttAddress(), "c2");
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(1).mqttAddress(), "pub")) {
      for (MqttClients.Client c : List.of(a0, b0, c2)) {
        c.connect(null, null);
        assertArrayEquals(
            new int[] {1}, c.subscribe("$share/g/sensors/+/temp?mqtt.user.value > 25", 1));
        c.subscribe("end", 0);
      }
      pub.connect(null, null);
      f.awaitPredicates();
      int n = 10;
      for (int i = 0; i < n; i++) {
        pub.publish("sensors/k" + i + "/temp", "m" + i, 1, "value", "30");
        pub.publish("sensors/k" + i + "/temp", "cold", 1, "value", "20"); // the content filter
      }
      pub.publish("end", "", 0);
      List<String> toA = until(a0, "end");
      List<String> toB = until(b0, "end");
      assertPartition(n, List.of(toA, toB));
      assertTrue(!toA.isEmpty() && !toB.isEmpty(), "both members at router 0 got some");
      assertPartition(n, List.of(until(c2, "end")));
      assertEquals(n, shared(f.routers.get(0), "delivered"));
      assertEquals(n, shared(f.routers.get(2), "delivered"));
    }
  }

  @Test
  void aMemberGetsOnlyWhatItsSubscribePermissionAllows() throws Exception {
    String siteA = ClientAuth.newToken();
    String any = ClientAuth.newToken();
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "siteA",
                    ClientAuth.hashLine(siteA),
                    new ClientAuth.Permissions(
                        "siteA", Predicate.parse("mqtt.user.site = \"a\""), null)),
                ClientAuth.user(
                    "any",
                    ClientAuth.hashLine(any),
                    new ClientAuth.Permissions("any", null, null))),
            null);
    try (Router r = Router.start(Federation.loneRouter().withClientAuth(auth).withMqttListen(ANY));
        MqttClients.Client restricted = new MqttClients.Client(r.mqttAddress(), "restricted");
        MqttClients.Client open = new MqttClients.Client(r.mqttAddress(), "open");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      restricted.connect("siteA", siteA);
      open.connect("any", any);
      pub.connect("any", any);
      assertArrayEquals(new int[] {1}, restricted.subscribe("$share/g/m/#", 1));
      assertArrayEquals(
          new int[] {0x87},
          restricted.subscribe("$share/g/m/x?mqtt.user.site = \"b\"", 1),
          "nothing of it within the subscribe permission");
      restricted.subscribe("end", 0);
      int n = 20;
      for (int i = 0; i < n; i++) {
        pub.publish("m/" + i, "m" + i, 1, "site", i % 4 == 0 ? "a" : "b");
      }
      pub.publish("end", "", 0, "site", "a");
      List<String> toRestricted = until(restricted, "end");
      // open subscribes to the group afterwards: the group's predicate widens to its permission.
      assertArrayEquals(new int[] {1}, open.subscribe("$share/g/m/#", 1));
      open.subscribe("end", 0);
      for (int i = n; i < 2 * n; i++) {
        pub.publish("m/" + i, "m" + i, 1, "site", i % 4 == 0 ? "a" : "b");
      }
      pub.publish("end", "", 0, "site", "a");
      List<String> later = until(restricted, "end");
      List<String> toOpen = until(open, "end");
      Set<String> siteAPayloads = new HashSet<>();
      for (int i = 0; i < 2 * n; i += 4) {
        siteAPayloads.add("m" + i);
      }
      List<String> before = new ArrayList<>();
      for (int i = 0; i < n; i += 4) {
        before.add("m" + i);
      }
      assertEquals(before, toRestricted, "alone, it got site a's messages only");
      assertTrue(siteAPayloads.containsAll(later), "never a message outside its permission");
      List<String> second = new ArrayList<>(later);
      second.addAll(toOpen);
      Set<String> expected = new TreeSet<>();
      for (int i = n; i < 2 * n; i++) {
        expected.add("m" + i);
      }
      assertEquals(expected, new TreeSet<>(second), "with open, every message");
      assertEquals(n, second.size(), "each to one member");
    }
  }

  @Test
  void invalidShareNamesAreRefusedAndNoLocalIsAProtocolError() throws Exception {
    try (Router r = lone();
        MqttRawSession c = new MqttRawSession(r.mqttAddress(), "c")) {
      int id = 1;
      for (String bad :
          List.of(
              "$share//t", "$share/a+b/t", "$share/a#/t", "$share/g", "$share/g/", "$share/g/a#")) {
        c.subscribe(bad, id, new byte[0]);
        assertEquals(0x8F, c.suback(id++), bad); // MQTT-4.8.2-1, MQTT-4.8.2-2
      }
      assertEquals(
          6,
          metric(
              r,
              "bdrp_mqtt_subscriptions_refused_total",
              "protocol=\"mqtt5\",reason=\"invalid_filter\""));
    }
    try (Router r = lone();
        Socket s = new Socket("127.0.0.1", r.mqttAddress().getPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      DataInputStream in = new DataInputStream(s.getInputStream());
      out.write(MqttBadInputTest.connect5("nl", 60));
      assertEquals(0x20, MqttBadInputTest.read(in).first(), "CONNACK");
      // SUBSCRIBE, packet 1, no properties, "$share/g/t" at QoS 1 with No Local (0x04).
      byte[] f = "$share/g/t".getBytes(StandardCharsets.UTF_8);
      byte[] v = new byte[2 + 1 + 2 + f.length + 1];
      v[1] = 1;
      v[4] = (byte) f.length;
      System.arraycopy(f, 0, v, 5, f.length);
      v[v.length - 1] = 0x05;
      out.write(MqttBadInputTest.packet(0x82, v));
      MqttBadInputTest.Packet d = MqttBadInputTest.read(in);
      assertEquals(0xE0, d.first(), "DISCONNECT");
      assertEquals(0x82, d.rest()[0] & 0xFF, "protocol error, MQTT-3.8.3-4");
    }
  }

  @Test
  void aGroupWhosePredicateALimitRefusesIsNotKept() throws Exception {
    RouterConfig c = Federation.loneRouter().withMqttListen(ANY);
    c =
        c.withLimits(
            c.limits()
                .withHosts(
                    new io.bdrp.router.config.HostLimits(
                        2, 16_384, 10, 1000, c.limits().hosts().keepAliveMs())));
    try (Router r = Router.start(c);
        MqttRawSession m = new MqttRawSession(r.mqttAddress(), "m");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      pub.connect(null, null);
      m.subscribe(
          "$share/g/a/b?mqtt.user.x = 1 || mqtt.user.y = 2 || mqtt.user.z = 3", 1, new byte[0]);
      assertEquals(0x97, m.suback(1), "3 filters, above limits.maxFiltersPerHost");
      m.subscribe("$share/h/a/b?mqtt.user.x = 1 || mqtt.user.y = 2", 2, new byte[0]);
      assertEquals(1, m.suback(2));
      pub.publish("a/b", "only the refused group's", 0, "z", "3");
      pub.publish("a/b", "to the member", 0, "y", "2");
      assertEquals("to the member", m.delivery().payload(), "the refused one was not kept");
    }
  }

  @Test
  void aMessageNoMemberCanTakeIsDroppedAndCounted() throws Exception {
    try (Router r = lone();
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
      byte[] f = "$share/g/w/#".getBytes(StandardCharsets.UTF_8);
      byte[] v = new byte[2 + 1 + 2 + f.length + 1];
      v[1] = 7;
      v[4] = (byte) f.length;
      System.arraycopy(f, 0, v, 5, f.length);
      v[v.length - 1] = 1;
      out.write(MqttBadInputTest.packet(0x82, v));
      assertEquals(0x90, MqttBadInputTest.read(in).first(), "SUBACK");
      pub.connect(null, null);
      pub.publish("w/1", "first", 1);
      pub.publish("w/2", "beyond the only member's window", 1);
      assertEquals(0x32, MqttBadInputTest.read(in).first(), "the first, at QoS 1");
      assertEquals(1, shared(r, "delivered"));
      assertEquals(1, shared(r, "no_member"));
    }
  }

  @Test
  void anMqtt311MosquittoSubAndAPahoClientShareAGroup() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub"),
        "mosquitto_sub is not installed (mosquitto-clients)");
    try (Router r = lone();
        MqttClients.Client paho = new MqttClients.Client(r.mqttAddress(), "paho");
        MqttClients.Client pub = new MqttClients.Client(r.mqttAddress(), "pub")) {
      paho.connect(null, null);
      pub.connect(null, null);
      paho.subscribe("$share/g/q/+", 1);
      paho.subscribe("end", 0);
      long before = predicateChanges(r);
      Process sub =
          new ProcessBuilder(
                  "mosquitto_sub",
                  "-h",
                  "127.0.0.1",
                  "-p",
                  Integer.toString(r.mqttAddress().getPort()),
                  "-V",
                  "311",
                  "-q",
                  "1",
                  "-C",
                  "5",
                  "-t",
                  "$share/g/q/+")
              .redirectErrorStream(true)
              .start();
      // Its own (empty) predicate, then nothing more: the group exists already.
      Federation.await("mosquitto_sub's subscription", () -> predicateChanges(r) > before);
      int n = 10;
      for (int i = 0; i < n; i++) {
        pub.publish("q/" + i, "m" + i, 1);
      }
      pub.publish("end", "", 0);
      List<String> toPaho = until(paho, "end");
      assertTrue(sub.waitFor(30, TimeUnit.SECONDS), "mosquitto_sub got its 5 and ended");
      String out = new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      List<String> toMosquitto = out.isEmpty() ? List.of() : List.of(out.strip().split("\n"));
      assertPartition(n, List.of(toPaho, toMosquitto));
      assertEquals(5, toPaho.size(), "round robin");
    }
  }

  private static long predicateChanges(Router r) {
    Matcher m =
        Pattern.compile("(?m)^bdrp_set_predicate_total (\\d+)(?:\\.0)?$").matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}
