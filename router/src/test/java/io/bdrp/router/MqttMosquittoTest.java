package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unmodified Mosquitto command-line clients ({@code mosquitto_sub}, {@code mosquitto_pub}, Debian
 * {@code mosquitto-clients}) on the MQTT ports of different routers of a federation, in MQTT 3.1.1
 * and 5. Skipped, saying so, where the commands are not installed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttMosquittoTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static Process start(String... command) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** Runs a command to its end (at most 30 s); returns its output. */
  private static String run(Process p) throws Exception {
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("still running after 30 s");
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  private static long predicateChanges(Router r) {
    Matcher m =
        Pattern.compile("(?m)^bdrp_set_predicate_total (\\d+)(?:\\.0)?$").matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /**
   * Starts {@code mosquitto_sub} on router {@code r} and waits until its subscription is known to
   * every router.
   */
  private static Process subscriber(Federation f, int r, String... args) throws Exception {
    long before = predicateChanges(f.routers.get(r));
    List<String> c = new ArrayList<>(List.of("mosquitto_sub", "-h", "127.0.0.1", "-p"));
    c.add(Integer.toString(f.routers.get(r).mqttAddress().getPort()));
    c.addAll(List.of(args));
    Process p = start(c.toArray(new String[0]));
    Federation.await(
        "the subscription set at router " + r, () -> predicateChanges(f.routers.get(r)) > before);
    f.awaitPredicates();
    return p;
  }

  private static void publish(Federation f, int r, String... args) throws Exception {
    List<String> c = new ArrayList<>(List.of("mosquitto_pub", "-h", "127.0.0.1", "-p"));
    c.add(Integer.toString(f.routers.get(r).mqttAddress().getPort()));
    c.addAll(List.of(args));
    run(start(c.toArray(new String[0])));
  }

  @Test
  void mosquittoClientsOnTwoRoutersExchangeAContentFilteredMessage() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    try (Federation f =
        new Federation(
                Bundled.load("routers-4"),
                RouterConfig.LinkTransport.TCP,
                null,
                c -> c.withMqttListen(ANY))
            .awaitRoutes()) {
      Process sub =
          subscriber(
              f,
              0,
              "-V",
              "5",
              "-q",
              "1",
              "-C",
              "1",
              "-F",
              "%t %p",
              "-t",
              "sensors/+/temp?mqtt.user.value > 25");
      publish(
          f,
          2,
          "-V",
          "5",
          "-q",
          "1",
          "-t",
          "sensors/k1/temp",
          "-m",
          "21",
          "-D",
          "publish",
          "user-property",
          "value",
          "21");
      publish(
          f,
          2,
          "-V",
          "5",
          "-q",
          "1",
          "-t",
          "sensors/k1/temp",
          "-m",
          "30.5",
          "-D",
          "publish",
          "user-property",
          "value",
          "30.5");
      assertEquals("sensors/k1/temp 30.5\n", run(sub));
    }
  }

  @Test
  void mqtt311ClientsExchangeMessagesByTopicWildcards() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    try (Federation f =
        new Federation(
                Bundled.load("routers-4"),
                RouterConfig.LinkTransport.TCP,
                null,
                c -> c.withMqttListen(ANY))
            .awaitRoutes()) {
      Process sub =
          subscriber(
              f, 3, "-V", "311", "-q", "1", "-C", "2", "-F", "%t %p", "-t", "plant/+/line/#");
      publish(f, 1, "-V", "311", "-q", "1", "-t", "plant/a/belt", "-m", "no");
      publish(f, 1, "-V", "311", "-q", "1", "-t", "plant/a/line", "-m", "one");
      publish(f, 1, "-V", "311", "-q", "0", "-t", "plant/b/line/3/speed", "-m", "two");
      assertEquals("plant/a/line one\nplant/b/line/3/speed two\n", run(sub));
    }
  }

  /**
   * A content filter in the SUBSCRIBE's {@code bdrp.filter} user property, for a topic filter that
   * ends in {@code #} (which mosquitto_sub allows nothing after).
   */
  @Test
  void aContentFilterRidesInASubscribeUserProperty() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    try (Federation f =
        new Federation(
                Bundled.load("routers-4"),
                RouterConfig.LinkTransport.TCP,
                null,
                c -> c.withMqttListen(ANY))
            .awaitRoutes()) {
      Process sub =
          subscriber(
              f,
              1,
              "-V",
              "5",
              "-C",
              "1",
              "-F",
              "%t %p",
              "-t",
              "alarms/#",
              "-D",
              "subscribe",
              "user-property",
              "bdrp.filter",
              "mqtt.user.level >= 3");
      for (String level : new String[] {"1", "2", "4"}) {
        publish(
            f,
            3,
            "-V",
            "5",
            "-t",
            "alarms/hall/" + level,
            "-m",
            "level " + level,
            "-D",
            "publish",
            "user-property",
            "level",
            level);
      }
      assertEquals("alarms/hall/4 level 4\n", run(sub));
    }
  }
}
