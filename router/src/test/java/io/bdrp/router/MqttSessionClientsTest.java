package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kept MQTT sessions with unmodified clients: a Python client on paho-mqtt 2.x (MQTT 5, Clean Start
 * 0 with a Session Expiry Interval) and {@code mosquitto_sub -c -i} (MQTT 3.1.1, Clean Session 0)
 * subscribe, go away, and get what was published meanwhile on another router of a federation, once
 * and in order, when they come back. The interpreter is {@code BDRP_PYTHON} if set, else {@code
 * python3}; each case is skipped, saying so, where its client is missing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttSessionClientsTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static Federation federation() throws InterruptedException {
    return new Federation(
            Bundled.load("routers-4"),
            RouterConfig.LinkTransport.TCP,
            null,
            c -> c.withMqttListen(ANY))
        .awaitRoutes();
  }

  private static String port(Federation f, int r) {
    return Integer.toString(f.routers.get(r).mqttAddress().getPort());
  }

  /** Runs a command to its end (at most 30 s) with status 0; returns its output. */
  private static String run(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(command + " still running after 30 s");
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), () -> command + ": " + out);
    return out;
  }

  private static long kept(Router r, String protocol) {
    return MqttSessionTest.metric(
        r, "bdrp_mqtt_sessions_total", "event=\"kept\",protocol=\"" + protocol + "\"");
  }

  @Test
  void aPythonClientGetsWhatWasPublishedWhileItWasAwayOnceInOrder(@TempDir Path dir)
      throws Exception {
    assumeTrue(
        ExternalClients.paho2(),
        "paho-mqtt 2 is not installed for " + ExternalClients.python() + " (pip: paho-mqtt)");
    Path script = dir.resolve("paho_session.py");
    try (InputStream in =
        MqttSessionClientsTest.class.getResourceAsStream("/mqtt/paho_session.py")) {
      Files.write(script, in.readAllBytes());
    }
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      Router r1 = f.routers.get(1);
      List<String> session =
          List.of(
              ExternalClients.python(),
              script.toString(),
              "127.0.0.1",
              port(f, 1),
              "py-keeper",
              "py/#");
      List<String> first = new java.util.ArrayList<>(session);
      first.add("0");
      assertEquals("present 0\nsubscribed\n", run(first), "a new session, subscribed at QoS 2");
      Federation.await("the session kept at router 1", () -> kept(r1, "mqtt5") == 1);
      f.awaitPredicates();
      pub.connect(null, null);
      for (int i = 0; i < 3; i++) {
        pub.publish("py/" + i, "qos1-" + i, 1);
      }
      for (int i = 3; i < 6; i++) {
        pub.publish("py/" + i, "qos2-" + i, 2);
      }
      Federation.await(
          "six deliveries queued at router 1", () -> MqttSessionTest.queued(r1, "mqtt5") == 6);
      List<String> again = new java.util.ArrayList<>(session);
      again.add("6");
      assertEquals(
          "present 1\npy/0 qos1-0 1\npy/1 qos1-1 1\npy/2 qos1-2 1\n"
              + "py/3 qos2-3 2\npy/4 qos2-4 2\npy/5 qos2-5 2\n",
          run(again));
    }
  }

  @Test
  void mosquittoSubWithoutACleanSessionGetsWhatWasPublishedWhileItWasAway() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub"),
        "mosquitto_sub is not installed (Debian: mosquitto-clients)");
    try (Federation f = federation();
        MqttClients.Client pub = new MqttClients.Client(f.routers.get(2).mqttAddress(), "pub")) {
      Router r0 = f.routers.get(0);
      List<String> sub =
          List.of(
              "mosquitto_sub",
              "-h",
              "127.0.0.1",
              "-p",
              port(f, 0),
              "-V",
              "311",
              "-c",
              "-i",
              "mosq-keeper",
              "-q",
              "1",
              "-F",
              "%t %p",
              "-t",
              "m3/#",
              "-C");
      List<String> once = new java.util.ArrayList<>(sub);
      once.add("1");
      long before = f.predicateChanges(0);
      Process first = new ProcessBuilder(once).redirectErrorStream(true).start();
      Federation.await("mosquitto_sub's subscription", () -> f.predicateChanges(0) > before);
      f.awaitPredicates();
      pub.connect(null, null);
      pub.publish("m3/0", "zero", 1);
      assertTrue(first.waitFor(30, TimeUnit.SECONDS), "mosquitto_sub exits after one message");
      assertEquals(
          "m3/0 zero\n", new String(first.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      Federation.await("the 3.1.1 session kept", () -> kept(r0, "mqtt3") == 1);
      pub.publish("m3/1", "one", 1);
      pub.publish("m3/2", "two", 2);
      Federation.await(
          "two deliveries queued at router 0", () -> MqttSessionTest.queued(r0, "mqtt3") == 2);
      List<String> twice = new java.util.ArrayList<>(sub);
      twice.add("2");
      assertEquals("m3/1 one\nm3/2 two\n", run(twice));
    }
  }
}
