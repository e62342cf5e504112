package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.topologies.BriteWriter;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Node;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

class TopoConfigsTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @TempDir Path dir;

  private int run(String... args) {
    out.getBuffer().setLength(0);
    err.getBuffer().setLength(0);
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  /** Runs {@code bdrp topo configs TOPOLOGY --hosts HOSTS --out OUT MORE...}. */
  private int configs(String topology, Path hosts, Path out, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "topo", "configs", topology, "--hosts", hosts.toString(), "--out", out.toString()));
    args.addAll(List.of(more));
    return run(args.toArray(String[]::new));
  }

  private Path hosts(String... lines) throws IOException {
    Path f = dir.resolve("hosts.txt");
    Files.writeString(f, String.join("\n", lines) + "\n");
    return f;
  }

  private Map<Integer, RouterConfig> load(Path out, int routers) throws IOException {
    Map<Integer, RouterConfig> cs = new HashMap<>();
    for (int r = 0; r < routers; r++) {
      RouterConfig c = RouterConfig.load(out.resolve("router-" + r + ".yaml"));
      assertEquals(r, c.router(), "router-" + r + ".yaml names its router");
      cs.put(r, c);
    }
    return cs;
  }

  private static String hostPort(InetSocketAddress a) {
    String h = a.getHostString();
    return (h.contains(":") ? "[" + h + "]" : h) + ":" + a.getPort();
  }

  private static RouterConfig.Neighbour neighbour(RouterConfig c, int router) {
    return c.neighbours().stream().filter(n -> n.router() == router).findFirst().orElseThrow();
  }

  @Test
  void aBundledTopologyGivesOneLoadableConfigPerRouterWithItsLinks() throws IOException {
    Topology t = Bundled.load("routers-8");
    Path h =
        hosts(
            "# routers-8 on four machines",
            "0 10.0.0.1",
            "",
            "1 10.0.0.1      # second router on the host: ports + 1",
            "2 10.0.0.2:7000:7100:9000",
            "3 10.0.0.2",
            "4 node4.example.org",
            "5   [fd00::5]",
            "6 10.0.0.1",
            "7 10.0.0.7:7401");
    Path o = dir.resolve("cfg");
    assertEquals(0, configs("routers-8", h, o));
    assertEquals("", err.toString());
    assertTrue(out.toString().contains("8 routers on 5 hosts, 13 links, cost hops"), out::toString);
    assertFalse(out.toString().contains("warning"), out::toString);

    Map<Integer, RouterConfig> cs = load(o, 8);
    String[] dialAt = {
      "10.0.0.1:7500",
      "10.0.0.1:7501",
      "10.0.0.2:7100",
      "10.0.0.2:7500",
      "node4.example.org:7500",
      "[fd00::5]:7500",
      "10.0.0.1:7502",
      "10.0.0.7:7500"
    };
    int[][] listen = {
      {7400, 7500, 9400},
      {7401, 7501, 9401},
      {7000, 7100, 9000},
      {7400, 7500, 9400},
      {7400, 7500, 9400},
      {7400, 7500, 9400},
      {7402, 7502, 9402},
      {7401, 7500, 9400}
    };
    for (int r = 0; r < 8; r++) {
      RouterConfig c = cs.get(r);
      String any = r == 5 ? "::" : "0.0.0.0";
      assertEquals(any, c.clientListen().getHostString());
      assertEquals(any, c.routerListen().getHostString());
      assertEquals(any, c.metricsListen().getHostString());
      assertEquals(listen[r][0], c.clientListen().getPort(), "client port of " + r);
      assertEquals(listen[r][1], c.routerListen().getPort(), "router port of " + r);
      assertEquals(listen[r][2], c.metricsListen().getPort(), "metrics port of " + r);
      assertEquals(BloomParameters.DEFAULT, c.bloom());
      assertNull(c.routerToken());
      assertEquals(4096, c.routing().maxRouters());

      Set<Integer> expected = new TreeSet<>();
      for (int n : t.neighbours(r)) {
        expected.add(n);
      }
      Set<Integer> got =
          c.neighbours().stream().map(RouterConfig.Neighbour::router).collect(Collectors.toSet());
      assertEquals(expected, new TreeSet<>(got), "neighbours of " + r);
      for (RouterConfig.Neighbour n : c.neighbours()) {
        assertEquals(1, n.cost());
        RouterConfig.Neighbour back = neighbour(cs.get(n.router()), r);
        assertEquals(n.cost(), back.cost(), "cost of link " + r + "-" + n.router());
        if (r < n.router()) {
          // The lower-numbered end dials the higher, at the address its hosts line gives.
          assertEquals(dialAt[n.router()], hostPort(n.address()));
          assertNull(back.address(), n.router() + " waits for " + r);
        }
      }
    }
    int links = cs.values().stream().mapToInt(c -> c.neighbours().size()).sum();
    assertEquals(2 * t.edgeCount(), links);

    String readme = Files.readString(o.resolve("README.md"));
    assertTrue(
        readme.contains(
            "### 10.0.0.1\n\nCopy `router-0.yaml`, `router-1.yaml` and `router-6.yaml` there"
                + " and run each:\n\n"
                + "    java -jar bdrp.jar router --config router-0.yaml\n"
                + "    java -jar bdrp.jar router --config router-1.yaml\n"
                + "    java -jar bdrp.jar router --config router-6.yaml\n"),
        readme);
    assertTrue(
        readme.contains(
            "### fd00::5\n\nCopy `router-5.yaml` there and run:\n\n"
                + "    java -jar bdrp.jar router --config router-5.yaml\n"),
        readme);
    assertTrue(
        readme.contains("| 2 | 10.0.0.2 | 7000 | 7100 | 9000 | 0 (1), 1 (1), 3 (1), 4 (1) |"),
        readme);
    assertTrue(readme.contains("http://10.0.0.1:9400/metrics"), readme);
    try (Stream<Path> files = Files.list(o)) {
      assertEquals(9, files.count(), "eight configs and README.md");
    }
  }

  /** Routers 0, 1, 2 as file ids 10, 20, 30, with known lengths and delays. */
  private Path triangle() throws IOException {
    Topology t =
        Topology.of(
            List.of("Model (0 - Manual): a triangle"),
            List.of(
                new Node(30, 0, 0, 2, 2, Node.NO_AS, Node.ROUTER),
                new Node(10, 1, 0, 2, 2, Node.NO_AS, Node.ROUTER),
                new Node(20, 0, 1, 2, 2, Node.NO_AS, Node.ROUTER)),
            List.of(
                edge(0, 10, 20, 400, 2.0), edge(1, 20, 30, 100, 0.5), edge(2, 30, 10, 50, 0.001)));
    Path f = dir.resolve("triangle.brite");
    BriteWriter.write(t, f);
    return f;
  }

  private static Edge edge(int id, int from, int to, double length, double delay) {
    return new Edge(
        id,
        from,
        to,
        length,
        delay,
        10,
        Node.NO_AS,
        Node.NO_AS,
        Edge.ROUTER_LINK,
        Edge.Direction.UNDIRECTED);
  }

  private int[] costs(String model) throws IOException {
    Path h = hosts("0 a", "1 b", "2 c");
    Path o = dir.resolve("cost-" + model);
    String[] more = model.isEmpty() ? new String[0] : new String[] {"--cost", model};
    assertEquals(0, configs(triangle().toString(), h, o, more), err::toString);
    Map<Integer, RouterConfig> cs = load(o, 3);
    int[] c = {
      neighbour(cs.get(0), 1).cost(), neighbour(cs.get(1), 2).cost(), neighbour(cs.get(2), 0).cost()
    };
    // Both ends of a link carry the same cost.
    assertEquals(c[0], neighbour(cs.get(1), 0).cost());
    assertEquals(c[1], neighbour(cs.get(2), 1).cost());
    assertEquals(c[2], neighbour(cs.get(0), 2).cost());
    return c;
  }

  @Test
  void costsComeFromTheBriteEdgesScaledSoTheLargestIs100() throws IOException {
    // Links 0-1, 1-2, 2-0 (file ids 10-20, 20-30, 30-10).
    assertEquals(List.of(1, 1, 1), box(costs("")));
    assertEquals(List.of(1, 1, 1), box(costs("hops")));
    assertEquals(List.of(100, 25, 1), box(costs("delay")), "2.0, 0.5 and 0.001 ms");
    assertEquals(List.of(100, 25, 13), box(costs("length")), "400, 100 and 50");
    assertEquals(2, configs("routers-2", hosts("0 a", "1 b"), dir.resolve("y"), "--cost", "ms"));
    assertEquals("bdrp: --cost must be hops, delay or length, got 'ms'\n", err.toString());
  }

  private static List<Integer> box(int[] a) {
    return IntStream.of(a).boxed().toList();
  }

  @Test
  void tokenAndBloomParametersReachEveryFile() throws IOException {
    Path h = hosts("0 10.0.0.1", "1 10.0.0.2", "2 10.0.0.3", "3 10.0.0.4");
    Path o = dir.resolve("cfg");
    String token = "s3cr\"t: #not a comment \\ é";
    assertEquals(
        0, configs("routers-4", h, o, "--token", token, "--bloom", "1024/3"), err::toString);
    for (RouterConfig c : load(o, 4).values()) {
      assertEquals(token, c.routerToken());
      assertEquals(new BloomParameters(1024, 3), c.bloom());
    }
    if (o.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      assertEquals(
          "rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(o.resolve("router-0.yaml"))),
          "a file holding the token is for its owner only");
    }
    assertFalse(Files.readString(o.resolve("README.md")).contains("s3cr"));

    assertEquals(2, configs("routers-4", h, o, "--token", ""));
    assertEquals("bdrp: --token must not be empty; leave it out for none\n", err.toString());
  }

  @Test
  void existingConfigsAreKeptUnlessForced() throws IOException {
    Path h = hosts("0 a", "1 b");
    Path o = dir.resolve("cfg");
    assertEquals(0, configs("routers-2", h, o));
    Files.writeString(o.resolve("router-1.yaml"), "router: 1\n");
    Files.writeString(o.resolve("router-5.yaml"), "router: 5\n");

    assertEquals(2, configs("routers-2", h, o));
    assertEquals(
        "bdrp: " + o.resolve("router-0.yaml") + " exists (and 2 more files); --force overwrites\n",
        err.toString());
    assertEquals("router: 1\n", Files.readString(o.resolve("router-1.yaml")));

    assertEquals(0, configs("routers-2", h, o, "--force"));
    assertEquals(1, load(o, 2).get(1).neighbours().size());
    assertTrue(
        out.toString().contains("also holds router-5.yaml, which is not a router of routers-2"),
        out::toString);

    Path file = dir.resolve("plain");
    Files.writeString(file, "");
    assertEquals(2, configs("routers-2", h, file));
    assertEquals("bdrp: --out " + file + " is a file, not a directory\n", err.toString());
  }

  static Stream<Arguments> badHostsFiles() {
    return Stream.of(
        Arguments.of(
            List.of("0 a", "1 b", "3 d"),
            "hosts.txt: no line for router 2 of the topology (routers 0..3; each needs one line:"
                + " ROUTER HOST[:CLIENT_PORT[:ROUTER_PORT[:METRICS_PORT]]])"),
        Arguments.of(
            List.of("# nothing yet"), "hosts.txt: no line for routers 0, 1, 2, 3 of the topology"),
        Arguments.of(
            List.of("0 a", "1 b", "2 c", "1 d", "3 e"),
            "hosts.txt:4: router 1 is listed twice (first on line 2)"),
        Arguments.of(
            List.of("0 a", "1 b", "2 c", "3 d", "4 e"),
            "hosts.txt:5: router 4 is not in the topology (routers 0..3)"),
        Arguments.of(
            List.of("0 a", "one b", "2 c", "3 d"),
            "hosts.txt:2: router 'one' is not a number (expected ROUTER HOST"),
        Arguments.of(List.of("0 a", "1", "2 c", "3 d"), "hosts.txt:2: expected ROUTER HOST"),
        Arguments.of(List.of("0 a b", "1 b", "2 c", "3 d"), "hosts.txt:1: expected ROUTER HOST"),
        Arguments.of(
            List.of("0 a", "1 b", "2 c:74x0", "3 d"),
            "hosts.txt:3: client port '74x0' in 'c:74x0' is not a number"),
        Arguments.of(
            List.of("0 a", "1 b:7400:70000", "2 c", "3 d"),
            "hosts.txt:2: router port 70000 in 'b:7400:70000' is outside 1..65535"),
        Arguments.of(
            List.of("0 a:1:2:0", "1 b", "2 c", "3 d"),
            "hosts.txt:1: metrics port 0 in 'a:1:2:0' is outside 1..65535"),
        Arguments.of(
            List.of("0 a:1:2:3:4", "1 b", "2 c", "3 d"),
            "hosts.txt:1: too many ':' in 'a:1:2:3:4'"),
        Arguments.of(
            List.of("0 fd00::1", "1 b", "2 c", "3 d"),
            "hosts.txt:1: empty client port in 'fd00::1' (an IPv6 address goes in brackets"),
        Arguments.of(
            List.of("0 [fd00::1", "1 b", "2 c", "3 d"),
            "hosts.txt:1: '[fd00::1' lacks the closing ']'"),
        Arguments.of(
            List.of("0 a,b", "1 b", "2 c", "3 d"),
            "hosts.txt:1: 'a,b' is not a host name or address"),
        Arguments.of(
            List.of("0 a:7400", "1 b", "2 c", "3 A:8000:7400"),
            "hosts.txt:4: router port 7400 on host A is already taken by router 0's client port"
                + " (line 1)"),
        Arguments.of(
            List.of("0 a:7400:7400", "1 b", "2 c", "3 d"),
            "hosts.txt:1: router port 7400 on host a is already taken by router 0's client port"
                + " (line 1)"));
  }

  @ParameterizedTest
  @MethodSource("badHostsFiles")
  void badHostsFilesGiveOneLineErrorsNamingFileAndLine(List<String> lines, String expected)
      throws IOException {
    Path h = hosts(lines.toArray(String[]::new));
    Path o = dir.resolve("cfg");
    assertEquals(2, configs("routers-4", h, o));
    String e = err.toString();
    String want = "bdrp: " + h + expected.substring("hosts.txt".length());
    assertTrue(e.startsWith(want), () -> "want " + want + "\ngot  " + e);
    assertEquals(1, e.lines().count(), e);
    assertFalse(Files.exists(o), "nothing is written");
    assertEquals("", out.toString());
  }

  @Test
  void missingInputsAreNamed() throws IOException {
    Path h = hosts("0 a", "1 b");
    assertEquals(2, configs("routers-3", h, dir.resolve("o")));
    assertTrue(
        err.toString().startsWith("bdrp: 'routers-3' is neither a file nor a bundled topology"),
        err::toString);
    Path none = dir.resolve("none.txt");
    assertEquals(2, configs("routers-2", none, dir.resolve("o")));
    assertEquals("bdrp: --hosts: no such file: " + none + "\n", err.toString());
  }

  @Test
  void aDisconnectedTopologyIsWrittenWithAWarning() throws IOException {
    Topology t =
        Topology.of(
            List.of(),
            List.of(
                new Node(0, 0, 0, 0, 0, Node.NO_AS, Node.ROUTER),
                new Node(1, 1, 0, 0, 0, Node.NO_AS, Node.ROUTER)),
            List.of());
    Path f = dir.resolve("apart.brite");
    BriteWriter.write(t, f);
    Path o = dir.resolve("cfg");
    assertEquals(0, configs(f.toString(), hosts("0 a", "1 a"), o));
    assertTrue(out.toString().contains("warning: apart.brite is not connected"), out::toString);
    List<Integer> counts = new ArrayList<>();
    load(o, 2).values().forEach(c -> counts.add(c.neighbours().size()));
    assertEquals(List.of(0, 0), counts);
  }
}
