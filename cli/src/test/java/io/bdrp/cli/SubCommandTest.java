package io.bdrp.cli;

import static io.bdrp.cli.ChildProcesses.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.cli.ChildProcesses.Proc;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bdrp sub} as a process, against a {@code bdrp router} process, on loopback. */
@Timeout(value = 110, unit = TimeUnit.SECONDS)
class SubCommandTest {
  private final ChildProcesses processes = new ChildProcesses();

  @AfterEach
  void endEveryProcessStarted() throws InterruptedException {
    processes.endAll();
  }

  /** A router 0 without neighbours taking clients on {@code clientPort} (0: any). */
  private ChildProcesses.Router loneRouter(Path dir, int clientPort) throws Exception {
    return processes.startRouter(
        dir,
        0,
        "router: 0\nlisten: {clients: \"127.0.0.1:"
            + clientPort
            + "\", routers: \"127.0.0.1:0\", metrics: \"127.0.0.1:0\"}\n");
  }

  /**
   * {@code bdrp sub ... | head -1}: once the reader of its stdout has gone, sub exits with status 0
   * at the next message it would print, rather than printing into the void for ever.
   */
  @Test
  void subExitsWhenTheReaderOfItsStdoutHasGone(@TempDir Path dir) throws Exception {
    ChildProcesses.Router router = loneRouter(dir, 0);
    Proc sub =
        processes.start(
            dir,
            false,
            "sub",
            "--router",
            "127.0.0.1:" + router.clientPort(),
            "--predicate",
            "kind = \"tick\"");
    await(
        "sub to subscribe", sub, () -> sub.err().stream().anyMatch(l -> l.contains("subscribed")));
    try (BdrpClient pub =
        BdrpClient.builder()
            .router("127.0.0.1", router.clientPort())
            .name("pub")
            .reconnect(false)
            .connect()) {
      pub.sendAcknowledged(tick(1)).get(10, TimeUnit.SECONDS);
      BufferedReader stdout =
          new BufferedReader(
              new InputStreamReader(sub.process().getInputStream(), StandardCharsets.UTF_8));
      String first = stdout.readLine(); // as head -1 does; bounded by the test's timeout
      assertNotNull(first, "sub printed a line before exiting; stderr " + sub.err());
      assertTrue(first.contains("\"n\":1"), first);
      stdout.close(); // the pipe has no reader any more: sub's next write fails with EPIPE
      assertTrue(sub.process().isAlive(), "sub still runs before its next write");

      for (int n = 2; n <= 4; n++) {
        pub.sendAcknowledged(tick(n)).get(10, TimeUnit.SECONDS);
      }
      assertTrue(
          sub.process().waitFor(20, TimeUnit.SECONDS),
          "sub exits once its stdout is closed; stderr " + sub.err());
      assertEquals(0, sub.process().exitValue(), "stderr " + sub.err());
    }
  }

  /**
   * {@code bdrp pub --topic T --body B}: the message carries the MQTT topic's attributes, so that a
   * subscription with an MQTT topic filter's predicate receives it, with the body; a topic that is
   * not a valid MQTT topic name is a usage error.
   */
  @Test
  void pubWithATopicReachesAnMqttTopicFilter(@TempDir Path dir) throws Exception {
    ChildProcesses.Router router = loneRouter(dir, 0);
    String at = "127.0.0.1:" + router.clientPort();
    java.util.concurrent.BlockingQueue<Message> got =
        new java.util.concurrent.LinkedBlockingQueue<>();
    try (BdrpClient sub =
        BdrpClient.builder()
            .router("127.0.0.1", router.clientPort())
            .name("sub")
            .reconnect(false)
            .connect()) {
      sub.subscribe(io.bdrp.encoding.mqtt.MqttTopic.filter("sensors/+/temp"), got::add)
          .get(10, TimeUnit.SECONDS);
      Proc pub =
          processes.start(
              dir,
              "pub",
              "-r",
              at,
              "--topic",
              "sensors/k1/temp",
              "--attr",
              "mqtt.user.value=26.5",
              "--body",
              "26.5 C");
      assertTrue(pub.process().waitFor(60, TimeUnit.SECONDS), "pub exited");
      assertEquals(0, pub.process().exitValue(), () -> "stderr " + pub.err());
      Message m = got.poll(10, TimeUnit.SECONDS);
      assertNotNull(m, "the subscriber of sensors/+/temp received the message");
      assertEquals("sensors/k1/temp", io.bdrp.encoding.mqtt.MqttTopic.of(m));
      assertEquals("26.5 C", new String(m.body(), StandardCharsets.UTF_8));

      Proc wildcard = processes.start(dir, "pub", "-r", at, "--topic", "sensors/#", "--body", "x");
      assertTrue(wildcard.process().waitFor(60, TimeUnit.SECONDS), "pub exited");
      assertEquals(2, wildcard.process().exitValue(), () -> "a usage error: " + wildcard.err());
      assertTrue(
          wildcard.err().stream().anyMatch(l -> l.contains("--topic")),
          () -> wildcard.err().toString());
    }
  }

  private static Message tick(long n) {
    return Message.builder().put("kind", "tick").put("n", n).build();
  }

  @Test
  void bdrpRouterNamesTheRouterAndDashRTheSame(@TempDir Path dir) throws Exception {
    ChildProcesses.Router router = loneRouter(dir, 0);
    String at = "127.0.0.1:" + router.clientPort();
    Proc byEnv =
        processes.start(
            dir, true, List.of("env", "BDRP_ROUTER=" + at), "sub", "--predicate", "exists(x)");
    Proc byFlag = processes.start(dir, "sub", "-r", at, "--predicate", "exists(x)");
    for (Proc p : List.of(byEnv, byFlag)) {
      await("sub to subscribe", p, () -> p.err().stream().anyMatch(l -> l.contains("subscribed")));
    }
  }

  @Test
  void aRouterThatCannotBeReachedIsAFailureNotAUsageError(@TempDir Path dir) throws Exception {
    Proc sub =
        processes.start(dir, "sub", "-r", "127.0.0.1:1", "--wait", "0", "--predicate", "exists(x)");
    assertTrue(sub.process().waitFor(60, TimeUnit.SECONDS), "sub exited");
    assertEquals(1, sub.process().exitValue(), () -> "exit code; stderr " + sub.err());
    assertTrue(
        sub.err().stream().anyMatch(l -> l.contains("cannot connect to 127.0.0.1:1")),
        () -> sub.err().toString());

    Proc typo =
        processes.start(dir, "sub", "-r", "127.0.0.1:1", "--wait", "0", "--predicat", "exists(x)");
    assertTrue(typo.process().waitFor(60, TimeUnit.SECONDS), "sub exited");
    assertEquals(2, typo.process().exitValue(), () -> "a usage error; stderr " + typo.err());
  }

  @Test
  void anUnknownLogLevelIsRefused(@TempDir Path dir) throws Exception {
    Proc p =
        processes.start(dir, true, List.of("env", "BDRP_LOG_LEVEL=LOUD"), "predicate", "exists(x)");
    assertTrue(p.process().waitFor(60, TimeUnit.SECONDS), "bdrp exited");
    assertEquals(2, p.process().exitValue(), () -> "exit code; stderr " + p.err());
    assertTrue(
        p.err().stream().anyMatch(l -> l.contains("BDRP_LOG_LEVEL=LOUD is not a log level")),
        () -> p.err().toString());
  }

  @Test
  void anUnknownLogFormatIsRefused(@TempDir Path dir) throws Exception {
    Proc p =
        processes.start(dir, true, List.of("env", "BDRP_LOG_FORMAT=xml"), "predicate", "exists(x)");
    assertTrue(p.process().waitFor(60, TimeUnit.SECONDS), "bdrp exited");
    assertEquals(2, p.process().exitValue(), () -> "exit code; stderr " + p.err());
    assertTrue(
        p.err().stream().anyMatch(l -> l.contains("BDRP_LOG_FORMAT=xml is not a log format")),
        () -> p.err().toString());
  }

  @Test
  void subStartedBeforeItsRouterWaitsForIt(@TempDir Path dir) throws Exception {
    // The router's port, held (bound, not listening: a connection to it is refused) until the
    // router starts, so that nothing else takes it while the sub waits.
    java.net.Socket held = new java.net.Socket();
    held.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
    int port = held.getLocalPort();
    Proc sub;
    try (held) {
      sub =
          processes.start(
              dir, "sub", "-r", "127.0.0.1:" + port, "--wait", "60s", "--predicate", "exists(x)");
      await(
          "sub to say it waits",
          sub,
          () -> sub.err().stream().anyMatch(l -> l.contains("(--wait)")));
    }
    loneRouter(dir, port);
    await(
        "sub to connect and subscribe",
        sub,
        () -> sub.err().stream().anyMatch(l -> l.contains("subscribed")));
    assertTrue(
        sub.err().stream().anyMatch(l -> l.contains("connected to router 0")),
        () -> sub.err().toString());
  }

  @Test
  void aRouterWhosePortIsTakenSaysSoInOneLineAndExits1(@TempDir Path dir) throws Exception {
    try (java.net.ServerSocket taken =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      java.nio.file.Files.writeString(
          dir.resolve("r.yaml"),
          "router: 0\nlisten: {clients: \"127.0.0.1:"
              + taken.getLocalPort()
              + "\", routers: \"127.0.0.1:0\"}\n");
      Proc r = processes.start(dir, "router", "--config", dir.resolve("r.yaml").toString());
      assertTrue(r.process().waitFor(60, TimeUnit.SECONDS), "the router exited");
      assertEquals(1, r.process().exitValue(), () -> r.err().toString());
      String want =
          "bdrp: listen.clients: cannot listen on 127.0.0.1:"
              + taken.getLocalPort()
              + ": the address is in use";
      assertTrue(r.err().stream().anyMatch(l -> l.startsWith(want)), () -> r.err().toString());
      assertTrue(
          r.err().stream().noneMatch(l -> l.startsWith("\tat ")),
          () -> "no stack trace: " + r.err());
    }
  }
}
