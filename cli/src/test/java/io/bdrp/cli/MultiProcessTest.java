package io.bdrp.cli;

import static io.bdrp.cli.ChildProcesses.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.cli.ChildProcesses.Proc;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Four {@code bdrp router} processes (the bundled 4-router topology: a square with a diagonal)
 * configured from YAML files, two {@code bdrp sub} processes and one {@code bdrp pub} process, on
 * loopback; every delivery is checked. Every process the test starts is ended by its PID.
 */
@Timeout(value = 110, unit = TimeUnit.SECONDS)
class MultiProcessTest {
  // The square 0-1-2-3-0 with the diagonal 0-2 (as topologies' routers-4).
  private static final int[][] EDGES = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}};

  private final ChildProcesses processes = new ChildProcesses();

  @AfterEach
  void endEveryProcessStarted() throws InterruptedException {
    processes.endAll();
  }

  private Proc start(Path dir, String... args) throws IOException {
    return processes.start(dir, args);
  }

  @ParameterizedTest(name = "DATA over {0}")
  @ValueSource(strings = {"tcp", "udp"})
  void fourRouterProcessesDeliverExactly(String transport, @TempDir Path dir) throws Exception {
    int[] clientPort = new int[4];
    int[] routerPort = new int[4];
    int[] metricsPort = new int[4];
    Proc[] routers = new Proc[4];
    // Start the highest number first: each router dials its higher-numbered neighbours, whose
    // ports are known by then; the others dial it.
    for (int r = 3; r >= 0; r--) {
      StringBuilder yaml = new StringBuilder();
      yaml.append("router: ").append(r).append('\n');
      yaml.append(
          "listen: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
              + " metrics: \"127.0.0.1:0\"}\n");
      yaml.append(
          "routing: {helloIntervalMs: 250, deadIntervalMs: 3000, updateIntervalMs: 1000,"
              + " routeExpiryMs: 4000}\n");
      yaml.append("auth: {routerToken: test-token}\n");
      yaml.append("neighbours:\n");
      for (int[] e : EDGES) {
        int n = e[0] == r ? e[1] : e[1] == r ? e[0] : -1;
        if (n < 0) {
          continue;
        }
        yaml.append("  - router: ").append(n).append('\n');
        yaml.append("    transport: ").append(transport).append('\n');
        if (n > r) {
          yaml.append("    address: \"127.0.0.1:").append(routerPort[n]).append("\"\n");
        }
      }
      ChildProcesses.Router router = processes.startRouter(dir, r, yaml.toString());
      clientPort[r] = router.clientPort();
      routerPort[r] = router.routerPort();
      metricsPort[r] = router.metricsPort();
      routers[r] = router.proc();
    }

    String control = " || kind = \"probe\" || kind = \"end\"";
    Proc subA =
        start(
            dir,
            "sub",
            "--router",
            "127.0.0.1:" + clientPort[0],
            "--name",
            "A",
            "--predicate",
            "kind = \"data\" && n < 10" + control);
    Proc subB =
        start(
            dir,
            "sub",
            "--router",
            "127.0.0.1:" + clientPort[2],
            "--name",
            "B",
            "--predicate",
            "kind = \"data\" && n >= 5 && tag prefix \"ok\"" + control);
    await(
        "A to subscribe", subA, () -> subA.err().stream().anyMatch(l -> l.contains("subscribed")));
    await(
        "B to subscribe", subB, () -> subB.err().stream().anyMatch(l -> l.contains("subscribed")));

    Proc pub = start(dir, "pub", "--router", "127.0.0.1:" + clientPort[3], "--name", "P");
    Writer in = new OutputStreamWriter(pub.process().getOutputStream(), StandardCharsets.UTF_8);
    // Probe until both subscribers' predicates have reached router 3 and messages flow.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!(has(subA, "probe") && has(subB, "probe"))) {
      if (System.nanoTime() > deadline) {
        fail("probes never arrived: A " + subA.out() + " B " + subB.out() + " pub " + pub.err());
      }
      in.write("{\"kind\":\"probe\"}\n");
      in.flush();
      Thread.sleep(100);
    }
    for (int n = 0; n < 20; n++) {
      in.write(
          "{\"kind\":\"data\",\"n\":"
              + n
              + ",\"tag\":\""
              + (n % 3 == 0 ? "no" : "ok-" + n)
              + "\",\"$body\":\"aGVsbG8=\"}\n");
    }
    in.write("this line is not JSON\n");
    in.write("{\"kind\":\"end\"}\n");
    in.close();
    assertTrue(pub.process().waitFor(30, TimeUnit.SECONDS), "pub exits at the end of its input");
    assertEquals(1, pub.process().exitValue(), "one bad line: exit status 1; stderr " + pub.err());
    assertTrue(
        pub.err().stream().anyMatch(l -> l.contains("line") && l.contains("not JSON")),
        pub.err().toString());
    await("A to see the end", subA, () -> has(subA, "end"));
    await("B to see the end", subB, () -> has(subB, "end"));

    Set<Integer> wantA = new TreeSet<>();
    Set<Integer> wantB = new TreeSet<>();
    for (int n = 0; n < 20; n++) {
      if (n < 10) {
        wantA.add(n);
      }
      if (n >= 5 && n % 3 != 0) {
        wantB.add(n);
      }
    }
    assertEquals(wantA, data(subA), "A's deliveries");
    assertEquals(wantB, data(subB), "B's deliveries");
    assertTrue(
        subA.out().stream()
            .filter(l -> l.contains("\"data\""))
            .allMatch(l -> l.contains("\"$body\":\"aGVsbG8=\"")),
        "bodies arrive intact: " + subA.out());
    for (Proc r : routers) {
      assertTrue(r.process().isAlive(), "routers keep running: " + r.err());
    }
    // Router 3 (the publisher's) sends to 0 and 2 over its direct links, by the transport asked.
    long datagrams = 0;
    for (int r : new int[] {0, 2}) {
      datagrams += metric(metricsPort[r], "bdrp_udp_datagrams_received_total");
    }
    if (transport.equals("udp")) {
      assertTrue(datagrams >= 20, "DATA arrived in datagrams: " + datagrams);
    } else {
      assertEquals(0, datagrams, "no datagrams when every link says tcp");
    }
  }

  /** The value of an unlabelled metric of the router whose metrics port is {@code port}. */
  private static long metric(int port, String name) throws IOException, InterruptedException {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    Matcher m = Pattern.compile("(?m)^" + name + " (\\d+)(?:\\.0)?$").matcher(r.body());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static boolean has(Proc p, String kind) {
    return p.out().stream().anyMatch(l -> l.contains("\"kind\":\"" + kind + "\""));
  }

  /** The n of every data message printed, failing on a duplicate. */
  private static Set<Integer> data(Proc p) {
    Set<Integer> got = new TreeSet<>();
    Pattern n = Pattern.compile("\"n\":(\\d+)");
    for (String line : p.out()) {
      if (line.contains("\"kind\":\"data\"")) {
        Matcher m = n.matcher(line);
        assertTrue(m.find(), line);
        assertTrue(got.add(Integer.parseInt(m.group(1))), "duplicate delivery: " + line);
      }
    }
    return got;
  }
}
