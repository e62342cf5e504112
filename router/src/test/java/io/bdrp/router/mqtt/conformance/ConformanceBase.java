package io.bdrp.router.mqtt.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.router.Federation;
import io.bdrp.router.Router;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * What the conformance tests share: one router with an MQTT port on loopback per test class (each
 * test uses client identifiers and topics of its own, so tests do not see each other's traffic),
 * its metrics, and the check that a session's fault disturbed no one else.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class ConformanceBase {
  private static final AtomicInteger NEXT = new AtomicInteger();

  static Router router;

  @BeforeAll
  static void startRouter() throws InterruptedException {
    router =
        Router.start(
            Federation.loneRouter()
                .withMqttListen(InetSocketAddress.createUnresolved("127.0.0.1", 0)));
  }

  @AfterAll
  static void stopRouter() {
    router.close();
  }

  /** A name no other test uses: for client identifiers and topics. */
  static String unique(String prefix) {
    return prefix + NEXT.incrementAndGet();
  }

  static RawClient client(Wire.Version version, String idPrefix) throws IOException {
    return RawClient.connected(router, version, unique(idPrefix));
  }

  /** The value of a counter of the router's metrics with exactly {@code labels}, or 0. */
  static long metric(String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + "\\} (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** A session of each protocol connects, subscribes, publishes and gets its message. */
  static void othersAreServed() throws IOException {
    for (Wire.Version v : Wire.Version.values()) {
      String topic = unique("served/");
      try (RawClient c = client(v, "served")) {
        assertEquals(1, c.subscribe(1, topic, 1));
        c.send(Wire.publish(v, 1, topic, 2, "ok"));
        // The PUBACK and the delivery, in either order.
        Wire.Packet a = c.read();
        Wire.Packet b = c.read();
        Wire.Packet delivery = a.type() == Wire.PUBLISH ? a : b;
        Wire.Packet puback = a.type() == Wire.PUBLISH ? b : a;
        assertEquals(Wire.PUBACK, puback.type());
        assertEquals("ok", Wire.readPublish(delivery, v).payload());
      }
    }
  }
}
