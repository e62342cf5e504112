package io.bdrp.testbed.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.topologies.Bundled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The emulated wide-area network with real namespaces, veth pairs and HTB qdiscs, and real router
 * processes in it. Needs root (CI runs as root); the network it makes has a name of its own and is
 * removed afterwards whatever happens.
 */
class NetworkEmulationTest {
  private final String name = "x" + (ProcessHandle.current().pid() % 1000);

  @BeforeEach
  void root() {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "network namespaces need root; run as root to test the emulator");
  }

  private final String otherName = "y" + (ProcessHandle.current().pid() % 1000);

  @AfterEach
  void cleanUp() throws IOException {
    if ("root".equals(System.getProperty("user.name"))) {
      Emulator.down(name);
      Emulator.down(otherName);
    }
  }

  private static long bytesOverLinks(Emulator.Network n) throws IOException {
    long sum = 0;
    for (Emulator.LinkNet l : n.links()) {
      sum += Emulator.counters(Emulator.namespace(n.name(), l.a()), l.devA()).bytes();
      sum += Emulator.counters(Emulator.namespace(n.name(), l.b()), l.devB()).bytes();
    }
    return sum;
  }

  @Test
  void upMakesOneNamespacePerRouterAndDownRemovesEverything() throws Exception {
    Emulator.Network n =
        Emulator.plan(Bundled.load("routers-8"), name, Emulator.parseRate("1MB/s"));
    Emulator.up(n);
    assertEquals(8, Emulator.namespaces(name).size());
    assertEquals(8, Emulator.rootDevices(name).size());
    assertEquals(Bundled.load("routers-8").edgeCount(), n.links().size());
    for (Emulator.LinkNet l : n.links()) {
      assertEquals(8_000_000L, l.rateBits());
    }
    IOException again = assertThrows(IOException.class, () -> Emulator.up(n));
    assertTrue(again.getMessage().contains("already up"), again.getMessage());
    // A second network would reuse the first one's addresses: refused, nothing of it made.
    Emulator.Network second =
        Emulator.plan(Bundled.load("routers-2"), otherName, Emulator.parseRate("1MB/s"));
    IOException clash = assertThrows(IOException.class, () -> Emulator.up(second));
    assertTrue(clash.getMessage().contains("network '" + name + "' is up"), clash.getMessage());
    assertEquals(List.of(), Emulator.namespaces(otherName));
    assertEquals(List.of(), Emulator.rootDevices(otherName));
    assertEquals(8, Emulator.down(name));
    assertEquals(List.of(), Emulator.namespaces(name));
    assertEquals(List.of(), Emulator.rootDevices(name));
  }

  @Test
  void aNetworkWhoseRunEndedWithoutTakingItDownIsRemovedByTheNextUp() throws Exception {
    Process run = new ProcessBuilder("sleep", "60").start();
    Emulator.Owner ended = Emulator.Owner.of(run.toHandle());
    run.destroyForcibly().waitFor();
    assertFalse(ended.running());
    Emulator.up(Emulator.plan(Bundled.load("routers-2"), name, Emulator.parseRate("1MB/s")), ended);
    assertEquals(ended, Emulator.owner(name));
    // The run that made it is gone: the next network removes it and comes up in its place.
    Emulator.upForThisProcess(
        Emulator.plan(Bundled.load("routers-4"), otherName, Emulator.parseRate("1MB/s")));
    assertEquals(List.of(), Emulator.namespaces(name));
    assertEquals(List.of(), Emulator.rootDevices(name));
    assertFalse(Files.exists(Emulator.stateFile(name)));
    assertEquals(4, Emulator.namespaces(otherName).size());
    // One whose process is running is left alone, and the next network is refused.
    assertEquals(Emulator.Owner.current(), Emulator.owner(otherName));
    IOException clash =
        assertThrows(
            IOException.class,
            () ->
                Emulator.upForThisProcess(
                    Emulator.plan(Bundled.load("routers-2"), name, Emulator.parseRate("1MB/s"))));
    assertTrue(
        clash.getMessage().contains("network '" + otherName + "' is up"), clash.getMessage());
    assertEquals(4, Emulator.namespaces(otherName).size());
  }

  /** A client of router {@code r}, trusting the federation's CA if it has one. */
  private static BdrpClient.Builder client(NamespaceFederation f, int r) {
    BdrpClient.Builder b = BdrpClient.builder().router(f.clientAddress(r));
    return f.ca() == null ? b : b.tls(f.ca().ca());
  }

  /** DATA over TCP, over UDP, and over TCP with TLS on client ports and mutual TLS on links. */
  @ParameterizedTest(name = "DATA over {0}")
  @ValueSource(strings = {"tcp", "udp", "tcp with TLS"})
  @Timeout(180)
  void routersInTheNamespacesCarryMessagesOverTheShapedLinks(String transport, @TempDir Path dir)
      throws Exception {
    Emulator.Network n =
        Emulator.plan(Bundled.load("routers-4"), name, Emulator.parseRate("8mbit"));
    Emulator.upForThisProcess(n);
    List<ChildProcess> started;
    boolean tls = transport.endsWith("TLS");
    try (NamespaceFederation f =
        NamespaceFederation.start(
            n, dir, List.of("-Xmx256m"), null, tls ? "tcp" : transport, tls)) {
      started = f.processes();
      LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
      try (BdrpClient sub = client(f, 3).onMessage(got::add).connect();
          BdrpClient pub = client(f, 1).connect()) {
        sub.setPredicate(Predicate.parse("topic = \"t\"")).get(10, TimeUnit.SECONDS);
        // Routes and predicates spread with the routers' timers; probe until the path works.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (got.poll(200, TimeUnit.MILLISECONDS) == null) {
          assertTrue(System.nanoTime() < deadline, "no path from router 1 to router 3 in 60 s");
          pub.send(Message.builder().put("topic", "t").put("probe", true).build());
        }
        pub.flush().get(10, TimeUnit.SECONDS);
        while (got.poll(1, TimeUnit.SECONDS) != null) {} // late probes
        long before = bytesOverLinks(n);
        byte[] body = new byte[1000];
        for (int i = 0; i < 200; i++) {
          pub.send(Message.builder().put("topic", "t").put("n", i).body(body).build());
        }
        for (int i = 0; i < 200; i++) {
          Message m = got.poll(30, TimeUnit.SECONDS);
          assertTrue(m != null, "message " + i + " did not arrive");
          assertEquals(i, m.get("n").asLong(), "in order, once");
        }
        assertEquals(null, got.poll(500, TimeUnit.MILLISECONDS), "nothing more");
        long crossed = bytesOverLinks(n) - before;
        assertTrue(
            crossed >= 200 * 1000,
            "the messages crossed the shaped links: " + crossed + " bytes counted by HTB");
      }
      for (int r = 0; tls && r < 4; r++) {
        String log = Files.readString(dir.resolve("router-" + r + ".log"));
        assertTrue(log.contains("TLS engine"), log);
        assertFalse(log.contains("TLS handshake"), "no failed handshake: " + log);
      }
    }
    for (ChildProcess p : started) {
      assertTrue(ProcessHandle.of(p.pid()).isEmpty(), p + " ended");
    }
    assertEquals(4, Emulator.down(name));
  }
}
