package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.net.NamespaceFederation;
import io.bdrp.topologies.Bundled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel fast path's programs come and go with their routers, on routers in namespaces: each
 * router's filter is on the interfaces of its UDP links once they are up; after kill -9 it stays
 * (the filter holds the program), and the next start of the same router number removes it and
 * attaches a new one; a router that stops removes its own.
 *
 * <p>Needs root and the sidecar library (CI has both: there it fails without them).
 */
class FastPathLifecycleTest {
  private final String name = "l" + (ProcessHandle.current().pid() % 1000);

  @BeforeEach
  void needsTheFastPath() {
    TestbedTests.requireFastPath();
  }

  @AfterEach
  void down() throws IOException, InterruptedException {
    Emulator.down(name);
  }

  /** The id of router r's program in the ingress filter of {@code dev} in {@code ns}, or 0. */
  private static int filter(String ns, String dev, int router)
      throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("tc", "-n", ns, "filter", "show", "dev", dev, "ingress")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(10, TimeUnit.SECONDS);
    // "filter protocol all pref 189 bpf chain 0 handle 0x2 bdrp_ingress direct-action ... id 57"
    Matcher m =
        Pattern.compile("handle 0x" + Integer.toHexString(router + 1) + " bdrp_ingress.* id (\\d+)")
            .matcher(out);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** Router r's (namespace, device) pairs, one per link. */
  private static List<String[]> devices(Emulator.Network n, int r) {
    List<String[]> d = new ArrayList<>();
    for (Emulator.LinkNet l : n.links()) {
      if (l.a() == r) {
        d.add(new String[] {Emulator.namespace(n.name(), r), l.devA()});
      } else if (l.b() == r) {
        d.add(new String[] {Emulator.namespace(n.name(), r), l.devB()});
      }
    }
    return d;
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  private static int[] filters(List<String[]> devs, int router) {
    int[] ids = new int[devs.size()];
    for (int i = 0; i < ids.length; i++) {
      try {
        ids[i] = filter(devs.get(i)[0], devs.get(i)[1], router);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return ids;
  }

  private static boolean allAttached(int[] ids) {
    for (int id : ids) {
      if (id == 0) {
        return false;
      }
    }
    return true;
  }

  @Test
  @Timeout(300)
  void programsComeAndGoWithTheirRouters(@TempDir Path dir) throws Exception {
    Emulator.Network n =
        Emulator.plan(Bundled.load("routers-4"), name, Emulator.parseRate("8mbit"));
    Emulator.upForThisProcess(n);
    List<String[]> devs = devices(n, 1);
    try (NamespaceFederation f =
        NamespaceFederation.start(n, dir, List.of("-Xmx256m"), "fastPath: ebpf\n", "udp")) {
      await("router 1's filters on its links", () -> allAttached(filters(devs, 1)));
      int[] first = filters(devs, 1);
      int id = first[0];
      for (int x : first) {
        assertEquals(id, x, "one program on every interface of the router");
      }

      f.kill(1);
      assertEquals(id, filters(devs, 1)[0], "after kill -9 the filter still holds the program");

      f.restart(1, Duration.ofSeconds(60));
      // The new run removed the old filters before it listened; it attaches its own as links
      // come up.
      int[] gone = filters(devs, 1);
      for (int x : gone) {
        assertNotEquals(id, x, "the earlier run's program was removed before the router listened");
      }
      await(
          "router 1's new filters",
          () -> Arrays.stream(filters(devs, 1)).allMatch(x -> x != 0 && x != id));
      String log = Files.readString(f.process(1).log());
      assertTrue(
          log.contains("removed the fast-path program (id " + id + ") an earlier run left on"),
          "the restart says what it removed:\n" + log);
    }
    // The routers stopped (SIGTERM): each removed its filters.
    for (int r = 0; r < 4; r++) {
      int[] left = filters(devices(n, r), r);
      for (int x : left) {
        assertEquals(0, x, "router " + r + " removed its filter when it stopped");
      }
    }
  }
}
