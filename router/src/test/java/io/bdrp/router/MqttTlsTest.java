package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.router.security.ClientTls;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MQTT port speaks TLS with the client port's certificate when the router has one: Mosquitto's
 * clients, trusting the CA, subscribe and publish over it. Skipped, saying so, where the commands
 * are not installed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MqttTlsTest {
  @TempDir Path dir;

  private static long predicateChanges(Router r) {
    Matcher m =
        Pattern.compile("(?m)^bdrp_set_predicate_total (\\d+)(?:\\.0)?$").matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void mosquittoClientsSubscribeAndPublishOverTls() throws Exception {
    assumeTrue(
        ExternalClients.installed("mosquitto_sub") && ExternalClients.installed("mosquitto_pub"),
        "mosquitto_sub and mosquitto_pub are not installed (Debian: mosquitto-clients)");
    TestCerts ca = TestCerts.ca(dir, "mqtt-ca");
    Path[] leaf = ca.leaf("router-0", "IP:127.0.0.1");
    try (Router r =
        Router.start(
            Federation.loneRouter()
                .withClientTls(ClientTls.load(leaf[0], leaf[1]))
                .withMqttListen(InetSocketAddress.createUnresolved("127.0.0.1", 0)))) {
      String port = Integer.toString(r.mqttAddress().getPort());
      String cafile = ca.cert().toString();
      Process sub =
          new ProcessBuilder(
                  "mosquitto_sub",
                  "-h",
                  "127.0.0.1",
                  "-p",
                  port,
                  "--cafile",
                  cafile,
                  "-C",
                  "1",
                  "-t",
                  "secure/+")
              .redirectErrorStream(true)
              .start();
      try {
        Federation.await("the subscription set", () -> predicateChanges(r) > 0);
        Process pub =
            new ProcessBuilder(
                    "mosquitto_pub",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    port,
                    "--cafile",
                    cafile,
                    "-t",
                    "secure/1",
                    "-m",
                    "over TLS")
                .redirectErrorStream(true)
                .start();
        try {
          assertEquals(
              0, pub.waitFor(30, TimeUnit.SECONDS) ? pub.exitValue() : -1, "mosquitto_pub");
        } finally {
          pub.destroyForcibly(); // ended by the test, whatever its outcome
        }
        assertEquals(true, sub.waitFor(30, TimeUnit.SECONDS), "mosquitto_sub got its message");
        assertEquals(
            "over TLS\n", new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } finally {
        sub.destroyForcibly();
      }
    }
  }
}
