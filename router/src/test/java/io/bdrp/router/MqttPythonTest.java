package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.Bundled;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Python client on paho-mqtt 2.x (PyPI) and Mosquitto's command-line clients on different routers
 * of a federation exchanging content-filtered messages, both ways. The interpreter is {@code
 * BDRP_PYTHON} if set (CI makes a virtual environment with paho-mqtt), else {@code python3};
 * skipped, saying so, where paho-mqtt 2 or the Mosquitto clients are missing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttPythonTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  private static Path script(Path dir) throws Exception {
    Path s = dir.resolve("paho_client.py");
    try (InputStream in = MqttPythonTest.class.getResourceAsStream("/mqtt/paho_client.py")) {
      Files.write(s, in.readAllBytes());
    }
    return s;
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

  @Test
  void pythonAndMosquittoClientsOnDifferentRoutersExchangeContentFilteredMessages(@TempDir Path dir)
      throws Exception {
    assumeTrue(
        ExternalClients.paho2(),
        "paho-mqtt 2 is not installed for " + ExternalClients.python() + " (pip: paho-mqtt)");
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    Path script = script(dir);
    try (Federation f =
        new Federation(
                Bundled.load("routers-4"),
                RouterConfig.LinkTransport.TCP,
                null,
                c -> c.withMqttListen(ANY))
            .awaitRoutes()) {
      // A Python subscriber with a content filter on router 1; Mosquitto publishes on router 3.
      Process pySub =
          new ProcessBuilder(
                  ExternalClients.python(),
                  script.toString(),
                  "sub",
                  "127.0.0.1",
                  port(f, 1),
                  "alarms/+/level?mqtt.user.value >= 3",
                  "1")
              .redirectErrorStream(true)
              .start();
      BufferedReader pyOut =
          new BufferedReader(new InputStreamReader(pySub.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("subscribed", pyOut.readLine(), "the Python client's SUBACK");
      f.awaitPredicates();
      for (String v : List.of("2", "4")) {
        run(
            List.of(
                "mosquitto_pub",
                "-h",
                "127.0.0.1",
                "-p",
                port(f, 3),
                "-V",
                "5",
                "-q",
                "1",
                "-t",
                "alarms/pump/level",
                "-m",
                "level " + v,
                "-D",
                "publish",
                "user-property",
                "value",
                v));
      }
      assertEquals("alarms/pump/level level 4 4", pyOut.readLine());
      assertTrue(pySub.waitFor(30, TimeUnit.SECONDS), "the Python subscriber exits");

      // Mosquitto subscribes with a content filter on router 0; Python publishes on router 2.
      List<String> sub =
          new ArrayList<>(
              List.of(
                  "mosquitto_sub",
                  "-h",
                  "127.0.0.1",
                  "-p",
                  port(f, 0),
                  "-V",
                  "5",
                  "-q",
                  "1",
                  "-C",
                  "1",
                  "-F",
                  "%t %p",
                  "-t",
                  "sensors/+/temp?mqtt.user.value > 25"));
      long before = f.predicateChanges(0);
      Process mSub = new ProcessBuilder(sub).redirectErrorStream(true).start();
      Federation.await("mosquitto_sub's subscription", () -> f.predicateChanges(0) > before);
      f.awaitPredicates();
      for (String v : List.of("21", "30.5")) {
        run(
            List.of(
                ExternalClients.python(),
                script.toString(),
                "pub",
                "127.0.0.1",
                port(f, 2),
                "sensors/k1/temp",
                v,
                v));
      }
      assertTrue(mSub.waitFor(30, TimeUnit.SECONDS), "mosquitto_sub exits after one message");
      assertEquals(
          "sensors/k1/temp 30.5\n",
          new String(mSub.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}
