package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.fastpath.EbpfFastPath;
import io.bdrp.router.fastpath.EbpfNative;
import io.bdrp.router.security.ClientTls;
import io.bdrp.router.security.RouterTls;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import reactor.blockhound.BlockHound;

/**
 * The forwarding loop makes no blocking call (file or {@code /proc} reads, sleeps, waits):
 * BlockHound watches the event-loop threads of real routers in this JVM while they serve clients,
 * link up over TCP and UDP, lose and regain a neighbour, answer a metrics scrape and the admin API,
 * and reload rotated TLS files.
 *
 * <p>Tagged {@code loop-blocking}: it runs in a JVM of its own with the flags BlockHound needs (see
 * router/pom.xml).
 */
@Tag("loop-blocking")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LoopBlockingTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  /** The routers' event-loop threads: the only threads BlockHound checks. */
  private static final Set<Thread> loops = ConcurrentHashMap.newKeySet();

  /** Blocking calls made on them: the thread, the call, and where it came from. */
  private static final Queue<String> reports = new ConcurrentLinkedQueue<>();

  /** The natives of NIO's file channels. */
  private static final String NIO_FILES = "sun.nio.ch.UnixFileDispatcherImpl";

  @TempDir static Path dir;
  private static TestCerts ca;

  @BeforeAll
  static void install() throws Exception {
    BlockHound.Builder b =
        BlockHound.builder()
            .loadIntegrations() // Netty's: the waits inside its own loop (select, task queue)
            // Whether a thread is a loop's is asked at each call: a loop's thread is known only
            // once it runs.
            .nonBlockingThreadPredicate(p -> loops::contains)
            .dynamicThreadPredicate(p -> t -> true);
    // Files read or written through NIO channels (Files.readAllBytes and the like): BlockHound
    // knows the java.io streams' natives, not these.
    for (String m : List.of("read0", "write0")) {
      b.markAsBlocking(NIO_FILES, m, "(Ljava/io/FileDescriptor;JI)I");
    }
    for (String m : List.of("pread0", "pwrite0")) {
      b.markAsBlocking(NIO_FILES, m, "(Ljava/io/FileDescriptor;JIJ)I");
    }
    for (String m : List.of("readv0", "writev0")) {
      b.markAsBlocking(NIO_FILES, m, "(Ljava/io/FileDescriptor;JI)J");
    }
    b.markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "open0", "(JII)I");
    b.blockingMethodCallback(
            m -> {
              StringBuilder s =
                  new StringBuilder(Thread.currentThread().getName() + ": " + m + " at");
              StackTraceElement[] stack = new Throwable().getStackTrace();
              for (int i = 0; i < Math.min(stack.length, 40); i++) {
                s.append("\n    ").append(stack[i]);
              }
              reports.add(s.toString());
            })
        .install();
    ca = TestCerts.ca(dir, "net-ca");
  }

  private final List<Router> routers = new ArrayList<>(List.of());
  private final List<BdrpClient> clients = new ArrayList<>();

  @BeforeEach
  void clear() {
    reports.clear();
  }

  @AfterEach
  void stop() {
    clients.forEach(BdrpClient::close);
    routers.forEach(Router::close);
  }

  /**
   * The next message in {@code queue}, waiting up to 10 s; when none comes, fails with each live
   * router's counters of datagrams and drops, to tell where the message was lost.
   */
  private Message received(LinkedBlockingQueue<Message> queue) throws InterruptedException {
    Message m = queue.poll(10, TimeUnit.SECONDS);
    if (m == null) {
      StringBuilder s = new StringBuilder("no message within 10 s; the routers' counters:");
      for (Router r : routers) {
        s.append("\nrouter ").append(r.number()).append(':');
        try {
          r.metricsText()
              .lines()
              .filter(l -> !l.startsWith("#"))
              .filter(l -> l.contains("udp") || l.contains("drop") || l.contains("data_"))
              .forEach(l -> s.append("\n  ").append(l));
        } catch (RuntimeException e) {
          s.append(" (closed: ").append(e).append(')');
        }
      }
      throw new AssertionError(s.toString());
    }
    return m;
  }

  @Test
  void theDetectorReportsASleepAndAFileReadOnARoutersLoop() throws Exception {
    Router r = watched(Router.start(Federation.loneRouter()));
    r.loop()
        .submit(
            () -> {
              Thread.sleep(1);
              return java.nio.file.Files.readAllBytes(Path.of("/proc/self/stat"));
            })
        .get(10, TimeUnit.SECONDS);
    assertTrue(reports.stream().anyMatch(s -> s.contains("sleep")), String.join("\n", reports));
    assertTrue(reports.stream().anyMatch(s -> s.contains("read0")), String.join("\n", reports));
  }

  @Test
  void routersServeClientsLinksMetricsAndRotatedCertificatesWithoutBlockingTheirLoop()
      throws Exception {
    // A line 0 - 1 - 2: DATA over TCP between 0 and 1, over UDP between 1 and 2; mutual TLS on
    // the links and TLS on the client ports, from files; router 1 serves metrics over HTTP.
    Path[][] certs = new Path[3][];
    for (int r = 0; r < 3; r++) {
      certs[r] = leaf(r);
    }
    RouterConfig[] configs = {
      config(0, certs[0], null, neighbour(1, RouterConfig.LinkTransport.TCP)),
      config(
          1,
          certs[1],
          ANY,
          neighbour(0, RouterConfig.LinkTransport.TCP),
          neighbour(2, RouterConfig.LinkTransport.UDP)),
      config(2, certs[2], null, neighbour(1, RouterConfig.LinkTransport.UDP))
    };
    for (RouterConfig c : configs) {
      routers.add(watched(Router.start(c)));
    }
    routers.get(0).connect(1, routers.get(1).routerAddress());
    routers.get(1).connect(2, routers.get(2).routerAddress());
    awaitRoutes();
    Federation.await("DATA over UDP from 1 to 2", () -> routers.get(1).view().dataOverUdp(2));

    // Clients set predicates, publish and receive, across both links.
    LinkedBlockingQueue<Message> at0 = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<Message> at2 = new LinkedBlockingQueue<>();
    BdrpClient c0 = client(0, at0);
    BdrpClient c2 = client(2, at2);
    c0.setPredicate(Predicate.parse("y > 1")).get(10, TimeUnit.SECONDS);
    c2.setPredicate(Predicate.parse("x > 1")).get(10, TimeUnit.SECONDS);
    Federation.await("predicates everywhere", () -> RouterView.predicatesAgree(routers));
    c0.sendAcknowledged(Message.builder().put("x", 2L).build()).get(10, TimeUnit.SECONDS);
    assertEquals("2", received(at2).get("x").toString());
    c2.sendAcknowledged(Message.builder().put("y", 3L).build()).get(10, TimeUnit.SECONDS);
    assertEquals("3", received(at0).get("y").toString());

    // A metrics scrape over HTTP.
    HttpResponse<String> scrape =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:"
                                + routers.get(1).metricsAddress().getPort()
                                + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, scrape.statusCode());
    assertTrue(scrape.body().contains("bdrp_udp_receive_overflows_total"), scrape.body());
    // Every endpoint of the admin API, read on the loop.
    for (String e : List.of("router", "links", "hosts", "routes", "predicates", "neighbours")) {
      HttpResponse<String> admin =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create(
                              "http://127.0.0.1:"
                                  + routers.get(1).metricsAddress().getPort()
                                  + "/admin/v1/"
                                  + e))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertEquals(200, admin.statusCode(), e + ": " + admin.body());
    }

    // Router 2 goes down, and comes back on new ports (under a later epoch).
    routers.get(2).close();
    Federation.await(
        "router 1 to lose its route to 2", () -> routers.get(1).view().reachable().length == 1);
    routers.set(
        2,
        watched(
            Router.start(config(2, certs[2], null, neighbour(1, RouterConfig.LinkTransport.UDP)))));
    routers.get(1).connect(2, routers.get(2).routerAddress());
    awaitRoutes();

    // Router 1's certificate and key are renewed in place: its reloader takes them.
    ca.leaf("router-1", "URI:" + RouterTls.URN + 1 + ",IP:127.0.0.1");
    Federation.await("router 1 to reload its TLS files", () -> reloads(routers.get(1)) >= 1);
    LinkedBlockingQueue<Message> at1 = new LinkedBlockingQueue<>();
    BdrpClient c1 = client(1, at1);
    c1.setPredicate(Predicate.parse("x > 1")).get(10, TimeUnit.SECONDS);
    Federation.await("predicates everywhere", () -> RouterView.predicatesAgree(routers));
    awaitRoutes(); // router 1's renewed claims re-signed its routes: every one held again
    c0.sendAcknowledged(Message.builder().put("x", 4L).build()).get(10, TimeUnit.SECONDS);
    assertEquals("4", received(at1).get("x").toString());

    assertFalse(loops.isEmpty());
    assertTrue(
        reports.isEmpty(), "blocking calls on a router's loop:\n" + String.join("\n", reports));
  }

  @Test
  void mqttSessionsDoNotBlockTheirRoutersLoop() throws Exception {
    // A router with an MQTT port; MQTT clients subscribe with a content filter, publish at every
    // QoS, unsubscribe, and one sends a malformed packet.
    Router r0 = watched(Router.start(Federation.loneRouter().withMqttListen(ANY)));
    routers.add(r0);
    try (MqttClients.Client sub = new MqttClients.Client(r0.mqttAddress(), "sub");
        MqttClients.Client pub = new MqttClients.Client(r0.mqttAddress(), "pub")) {
      sub.connect(null, null);
      pub.connect(null, null);
      sub.subscribe("a/+/c?mqtt.user.v > 1", 1);
      sub.subscribe("q/#", 1);
      for (int qos = 0; qos <= 2; qos++) {
        pub.publish("a/b/c", "m" + qos, qos, "v", "2");
        assertEquals("m" + qos, sub.next().payload());
      }
      sub.unsubscribe("q/#");
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", r0.mqttAddress().getPort())) {
        s.setSoTimeout(20_000);
        s.getOutputStream().write(MqttBadInputTest.connect5("bad", 60));
        s.getOutputStream().write(new byte[] {0x36, 0x03, 0, 1, 'a'});
        while (s.getInputStream().read() >= 0) {
          // CONNACK, DISCONNECT, then the end
        }
      }
    }
    assertFalse(loops.isEmpty());
    assertTrue(
        reports.isEmpty(), "blocking calls on a router's loop:\n" + String.join("\n", reports));
  }

  /**
   * With the kernel fast path (root, and the eBPF toolchain), in a network namespace of its own so
   * that the program attaches to that namespace's loopback only: the loop hands the table's inputs
   * to the fast path's thread, which reads the ARP table and writes the maps.
   */
  @Test
  void theKernelFastPathsTablesAreWrittenOffTheLoop() throws Exception {
    if (!EbpfFastPath.isAvailable()) {
      String why = "kernel fast path unavailable: " + EbpfFastPath.unavailabilityReason();
      if (System.getenv("CI") != null) {
        org.junit.jupiter.api.Assertions.fail(
            why + " (CI installs the toolchain and runs as root)");
      }
      org.junit.jupiter.api.Assumptions.abort(why);
    }
    String ns = "bdrp-loop-" + ProcessHandle.current().pid();
    ip("netns", "add", ns);
    java.util.concurrent.ExecutorService inside =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      ip("-n", ns, "link", "set", "lo", "up");
      // Threads inherit the namespace of the thread that makes them: the routers' and the
      // clients' are made from this one.
      inside
          .submit(
              () -> {
                EbpfNative.enterNetworkNamespace("/var/run/netns/" + ns);
                fastPathScenario();
                return null;
              })
          .get(90, TimeUnit.SECONDS);
    } finally {
      inside.submit(this::stop).get(30, TimeUnit.SECONDS);
      routers.clear();
      clients.clear();
      inside.shutdownNow();
      ip("netns", "del", ns);
    }
    assertTrue(
        reports.isEmpty(), "blocking calls on a router's loop:\n" + String.join("\n", reports));
  }

  private void fastPathScenario() throws Exception {
    for (int r = 0; r < 2; r++) {
      RouterConfig c =
          new RouterConfig(
              r,
              System.currentTimeMillis(),
              ANY,
              ANY,
              null,
              null,
              List.of(neighbour(1 - r, RouterConfig.LinkTransport.UDP)),
              Federation.FAST,
              BloomParameters.DEFAULT,
              RouterLimits.DEFAULT,
              "secret",
              RouterConfig.FastPath.EBPF);
      routers.add(watched(Router.start(c)));
    }
    routers.get(0).connect(1, routers.get(1).routerAddress());
    awaitRoutes();
    Federation.await(
        "DATA over UDP both ways",
        () -> routers.get(0).view().dataOverUdp(1) && routers.get(1).view().dataOverUdp(0));
    LinkedBlockingQueue<Message> at1 = new LinkedBlockingQueue<>();
    BdrpClient c1 = plainClient(1, at1);
    BdrpClient c0 = plainClient(0, new LinkedBlockingQueue<>());
    c1.setPredicate(Predicate.parse("x > 1")).get(10, TimeUnit.SECONDS);
    Federation.await("predicates everywhere", () -> RouterView.predicatesAgree(routers));
    c0.sendAcknowledged(Message.builder().put("x", 2L).build()).get(10, TimeUnit.SECONDS);
    assertEquals("2", received(at1).get("x").toString());
    // The program is attached to the loopback and has seen the datagram (router 1's counters).
    Federation.await(
        "the fast path to count a datagram", () -> fastPathPackets(routers.get(1)) > 0);
  }

  private static long fastPathPackets(Router r) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^bdrp_fastpath_packets_total\\{[^}]*\\} (\\d+)")
            .matcher(r.metricsText());
    long sum = 0;
    while (m.find()) {
      sum += Long.parseLong(m.group(1));
    }
    return sum;
  }

  private static void ip(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new java.io.IOException(String.join(" ", cmd) + " failed: " + out.strip());
    }
  }

  private BdrpClient plainClient(int r, LinkedBlockingQueue<Message> into) throws Exception {
    BdrpClient c =
        BdrpClient.builder()
            .router(routers.get(r).clientAddress())
            .name("client-" + r)
            .onMessage(into::add)
            .connect();
    clients.add(c);
    return c;
  }

  /** {@code r}, its event-loop thread among those BlockHound checks. */
  private static Router watched(Router r) throws Exception {
    loops.add(r.loop().submit(Thread::currentThread).get(10, TimeUnit.SECONDS));
    return r;
  }

  private static Path[] leaf(int r) throws Exception {
    return ca.leaf("router-" + r, "URI:" + RouterTls.URN + r + ",IP:127.0.0.1");
  }

  private static RouterConfig.Neighbour neighbour(int n, RouterConfig.LinkTransport t) {
    return new RouterConfig.Neighbour(n, null, 1, t);
  }

  private static RouterConfig config(
      int r, Path[] leaf, InetSocketAddress metrics, RouterConfig.Neighbour... neighbours) {
    return new RouterConfig(
            r,
            System.currentTimeMillis(),
            ANY,
            ANY,
            metrics,
            List.of(neighbours),
            Federation.FAST,
            BloomParameters.DEFAULT,
            RouterLimits.DEFAULT,
            null)
        .withRouterTls(RouterTls.load(r, leaf[0], leaf[1], ca.cert()))
        .withClientTls(ClientTls.load(leaf[0], leaf[1]));
  }

  private BdrpClient client(int r, LinkedBlockingQueue<Message> into) throws Exception {
    BdrpClient c =
        BdrpClient.builder()
            .router(routers.get(r).clientAddress())
            .name("client-" + r)
            .tls(ca.cert())
            .onMessage(into::add)
            .connect();
    clients.add(c);
    return c;
  }

  private void awaitRoutes() throws InterruptedException {
    Federation.await(
        "routes between all routers",
        () -> routers.stream().allMatch(r -> r.view().reachable().length == routers.size() - 1));
  }

  private static long reloads(Router r) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^bdrp_tls_reloads_total\\{result=\"ok\"\\} (\\d+)")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}
