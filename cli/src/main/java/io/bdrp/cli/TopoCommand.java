package io.bdrp.cli;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.BriteWriter;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.ReadResult;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.Frames;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IntSummaryStatistics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.ToDoubleFunction;
import java.util.function.ToIntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code bdrp topo}: inspects and generates BRITE topology files. */
@Command(
    name = "topo",
    mixinStandardHelpOptions = true,
    description =
        "Inspects and generates BRITE topology files, and writes router configurations for a"
            + " topology.",
    subcommands = {TopoCommand.Show.class, TopoCommand.Generate.class, TopoCommand.Configs.class})
final class TopoCommand {
  /** {@code bdrp topo show}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description =
          "Reads a BRITE file (or a bundled topology by name) and prints its size, degrees,"
              + " diameter and any warnings from reading it.")
  static final class Show implements Callable<Integer> {
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "FILE|NAME",
        description = "A BRITE file or one of ${COMPLETION-CANDIDATES}.",
        completionCandidates = Bundled.Names.class)
    String source;

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      ReadResult r = Bundled.loadOrRead(source);
      Topology t = r.topology();
      IntSummaryStatistics deg =
          IntStream.range(0, t.nodeCount()).map(t::degree).summaryStatistics();
      o.printf("%s: %d routers, %d links%n", source, t.nodeCount(), t.edgeCount());
      o.printf(
          "  degree: min %d, mean %.2f, max %d%n", deg.getMin(), deg.getAverage(), deg.getMax());
      if (t.isConnected()) {
        o.printf("  connected, diameter %d hops%n", t.diameter());
      } else {
        o.printf("  NOT connected: some routers cannot reach others%n");
      }
      for (String line : t.modelLines()) {
        o.printf("  model: %s%n", line.strip());
      }
      for (String w : r.warnings()) {
        o.printf("  warning: %s%n", w);
      }
      o.flush();
      return 0;
    }
  }

  /** {@code bdrp topo generate}. */
  @Command(
      name = "generate",
      mixinStandardHelpOptions = true,
      description =
          "Generates a router-level topology (Waxman or Barabasi-Albert) and writes it as a BRITE"
              + " file; the model line records the parameters and the seed.")
  static final class Generate implements Callable<Integer> {
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--model",
        defaultValue = "waxman",
        description = "waxman or ba (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--routers", required = true, description = "Number of routers.")
    int routers;

    @Option(
        names = "--links-per-router",
        defaultValue = "2",
        description = "Links each new router adds, m (default: ${DEFAULT-VALUE}).")
    int m;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--out", required = true, description = "The BRITE file to write.")
    Path out;

    @Override
    public Integer call() throws IOException {
      BriteGenerator.Params p =
          switch (model) {
            case "waxman" -> BriteGenerator.Params.waxman(routers, m, seed);
            case "ba" -> BriteGenerator.Params.barabasiAlbert(routers, m, seed);
            default ->
                throw new IllegalArgumentException(
                    "--model must be waxman or ba, got '" + model + "'");
          };
      Topology t = BriteGenerator.generate(p);
      BriteWriter.write(t, out);
      spec.commandLine()
          .getOut()
          .printf("wrote %s: %d routers, %d links%n", out, t.nodeCount(), t.edgeCount());
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  /** {@code bdrp topo configs}. */
  @Command(
      name = "configs",
      mixinStandardHelpOptions = true,
      description = {
        "Writes the configuration of every router of a topology for a federation of router"
            + " processes on several hosts: DIR/router-N.yaml with the router's listen ports,"
            + " its neighbours, their addresses and the link costs, and DIR/README.md saying what"
            + " to run on which host. See docs/deploy.md.",
        "Of each link, the lower-numbered router dials the higher one, which waits for it.",
        "Hosts file: one line per router, ROUTER HOST[:CLIENT_PORT[:ROUTER_PORT[:METRICS_PORT]]],"
            + " # comments. Ports left out are 7400, 7500 and 9400, or the next free ones for"
            + " further routers on the same host.",
        "With --k8s instead of --hosts: a federation on Kubernetes, each router in its own pod"
            + " behind a Service named bdrp-router-N; DIR/k8s.yaml holds every object (kubectl"
            + " apply -f DIR/k8s.yaml)."
      })
  static final class Configs implements Callable<Integer> {
    /** With --cost delay or length, the costliest link costs this much. */
    static final int SCALED_MAX_COST = 100;

    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "FILE|NAME",
        description = "A BRITE file or one of ${COMPLETION-CANDIDATES}.",
        completionCandidates = Bundled.Names.class)
    String source;

    @Option(
        names = "--hosts",
        paramLabel = "FILE",
        description = "Where each router runs (see above and docs/deploy.md).")
    Path hosts;

    @Option(
        names = "--k8s",
        description =
            "Write Kubernetes manifests (DIR/k8s.yaml): the configurations in a ConfigMap (a"
                + " Secret with --token), and a Service and a Deployment per router. Instead of"
                + " --hosts.")
    boolean k8s;

    @Option(
        names = "--image",
        defaultValue = "bdrp:latest",
        paramLabel = "IMAGE",
        description =
            "With --k8s: the container image, whose entrypoint is the bdrp command (default:"
                + " ${DEFAULT-VALUE}; see docs/deploy.md).")
    String image;

    @Option(
        names = "--namespace",
        paramLabel = "NAME",
        description = "With --k8s: the namespace of every object (default: kubectl's current).")
    String namespace;

    @Option(
        names = "--out",
        required = true,
        paramLabel = "DIR",
        description = "Directory to write to; created if missing.")
    Path out;

    @Option(
        names = "--cost",
        defaultValue = "hops",
        description =
            "Link costs: hops (every link costs 1), delay or length (the BRITE edge's, scaled so"
                + " that the largest costs "
                + SCALED_MAX_COST
                + "; at least 1) (default: ${DEFAULT-VALUE}).")
    String cost;

    @Option(
        names = "--token",
        paramLabel = "SECRET",
        description =
            "Router token for auth.routerToken of every file; neighbours must present the same."
                + " Files holding it are readable by their owner only. Default: none.")
    String token;

    @Mixin BloomOption bloom;

    @Option(names = "--force", description = "Overwrite existing router-N.yaml and README.md.")
    boolean force;

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      ReadResult read = Bundled.loadOrRead(source);
      Topology t = read.topology();
      int n = t.nodeCount();
      ToIntFunction<Edge> costOf = costs(cost, t);
      BloomParameters bp = bloom.parameters();
      if (token != null) {
        if (token.isEmpty()) {
          throw new IllegalArgumentException("--token must not be empty; leave it out for none");
        }
        int bytes = token.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > Frames.MAX_TOKEN_BYTES) {
          throw new IllegalArgumentException(
              "--token is " + bytes + " bytes of UTF-8; at most " + Frames.MAX_TOKEN_BYTES);
        }
      }
      int defaultMaxRouters = RoutingConfig.builder().build().maxRouters();
      if (n > RoutingConfig.MAX_ROUTERS) {
        throw new IllegalArgumentException(
            source + " has " + n + " routers; a network has at most " + RoutingConfig.MAX_ROUTERS);
      }
      if (k8s == (hosts != null)) {
        throw new IllegalArgumentException(
            k8s
                ? "--k8s places every router in its own pod: leave out --hosts"
                : "say where the routers run: --hosts FILE, or --k8s for Kubernetes");
      }
      List<HostsFile.Placement> at = new ArrayList<>(n);
      if (k8s) {
        for (int r = 0; r < n; r++) {
          at.add(
              new HostsFile.Placement(
                  r,
                  KubernetesManifests.serviceName(r),
                  KubernetesManifests.CLIENT_PORT,
                  KubernetesManifests.ROUTER_PORT,
                  KubernetesManifests.METRICS_PORT,
                  0));
        }
      } else {
        at = HostsFile.read(hosts, n);
      }

      List<List<int[]>> links = new ArrayList<>(n);
      for (int r = 0; r < n; r++) {
        links.add(new ArrayList<>());
      }
      for (Edge e : t.edges()) {
        int a = t.routerOf(e.from());
        int b = t.routerOf(e.to());
        int c = costOf.applyAsInt(e);
        links.get(a).add(new int[] {b, c});
        links.get(b).add(new int[] {a, c});
      }
      for (List<int[]> l : links) {
        l.sort(Comparator.comparingInt(x -> x[0]));
      }

      if (Files.exists(out) && !Files.isDirectory(out)) {
        throw new IllegalArgumentException("--out " + out + " is a file, not a directory");
      }
      String label =
          Bundled.names().contains(source) ? source : String.valueOf(Path.of(source).getFileName());
      Map<Path, String> files = new LinkedHashMap<>();
      for (int r = 0; r < n; r++) {
        String name = fileName(r);
        String yaml =
            routerYaml(label, at, r, links.get(r), n > defaultMaxRouters ? n : 0, bp, token);
        try {
          RouterConfig.parse(yaml, name);
        } catch (IllegalArgumentException e) {
          throw new IllegalStateException("wrote an invalid configuration: " + e.getMessage(), e);
        }
        files.put(out.resolve(name), yaml);
      }
      files.put(out.resolve("README.md"), readme(label, t, at, links, bp, token != null));
      if (k8s) {
        Map<Integer, Map.Entry<String, String>> configs = new LinkedHashMap<>();
        for (int r = 0; r < n; r++) {
          configs.put(r, Map.entry(fileName(r), files.get(out.resolve(fileName(r)))));
        }
        files.put(
            out.resolve("k8s.yaml"),
            KubernetesManifests.write(configs, image, namespace, token != null));
      }
      if (!force) {
        List<Path> existing = files.keySet().stream().filter(Files::exists).toList();
        if (!existing.isEmpty()) {
          throw new IllegalArgumentException(
              existing.get(0)
                  + " exists"
                  + (existing.size() > 1 ? " (and " + (existing.size() - 1) + " more files)" : "")
                  + "; --force overwrites");
        }
      }
      Files.createDirectories(out);
      for (Map.Entry<Path, String> f : files.entrySet()) {
        write(f.getKey(), f.getValue(), token != null && !f.getKey().endsWith("README.md"));
      }

      long hostCount = at.stream().map(p -> p.host().toLowerCase(Locale.ROOT)).distinct().count();
      o.printf(
          "wrote %s: %d routers %s, %d links, cost %s%n",
          n == 1 ? "router-0.yaml" : "router-0.yaml .. " + fileName(n - 1),
          n,
          k8s ? "each in its own pod" : "on " + hostCount + (hostCount == 1 ? " host" : " hosts"),
          t.edgeCount(),
          cost);
      if (k8s) {
        o.printf(
            "  %s holds the Kubernetes objects: kubectl apply -f %s%n",
            out.resolve("k8s.yaml"), out.resolve("k8s.yaml"));
      } else {
        o.printf("  %s says what to run on each host%n", out.resolve("README.md"));
      }
      for (String w : read.warnings()) {
        o.printf("  warning: %s%n", w);
      }
      if (!t.isConnected()) {
        o.printf("  warning: %s is not connected: some routers will not reach others%n", label);
      }
      for (String stale : staleFiles(out, n)) {
        o.printf("  warning: %s also holds %s, which is not a router of %s%n", out, stale, label);
      }
      o.flush();
      return 0;
    }

    static String fileName(int router) {
      return "router-" + router + ".yaml";
    }

    /**
     * The cost of each edge: 1 for hops; for delay and length the edge's value scaled so that the
     * largest in the topology costs {@link #SCALED_MAX_COST}, rounded, at least 1 (all 1 if every
     * value is 0). Keeping link costs small leaves a path's metric, their sum, far below the
     * unreachable metric 65535.
     */
    static ToIntFunction<Edge> costs(String model, Topology t) {
      ToDoubleFunction<Edge> value =
          switch (model) {
            case "hops" -> null;
            case "delay" -> Edge::delay;
            case "length" -> Edge::length;
            default ->
                throw new IllegalArgumentException(
                    "--cost must be hops, delay or length, got '" + model + "'");
          };
      if (value == null) {
        return e -> 1;
      }
      double max = t.edges().stream().mapToDouble(value).max().orElse(0);
      if (!(max > 0)) {
        return e -> 1;
      }
      return e -> (int) Math.max(1, Math.round(SCALED_MAX_COST * value.applyAsDouble(e) / max));
    }

    private static String routerYaml(
        String label,
        List<HostsFile.Placement> at,
        int r,
        List<int[]> links,
        int maxRouters,
        BloomParameters bp,
        String token) {
      HostsFile.Placement me = at.get(r);
      String any = me.ipv6() ? "[::]" : "0.0.0.0";
      StringBuilder y = new StringBuilder();
      y.append("# Router ")
          .append(r)
          .append(" of ")
          .append(label)
          .append(", on host ")
          .append(me.host())
          .append(": bdrp router --config ")
          .append(fileName(r))
          .append('\n');
      y.append(
          "# Written by bdrp topo configs. Of each link, the lower-numbered router dials the"
              + " higher one.\n");
      y.append("router: ").append(r).append('\n');
      y.append("listen:                        # all interfaces\n");
      line(
          y, "  clients: " + quoted(any + ":" + me.clientPort()), "clients: " + me.clientAddress());
      line(
          y,
          "  routers: " + quoted(any + ":" + me.routerPort()),
          "neighbours dial " + me.routerAddress());
      line(
          y,
          "  metrics: " + quoted(any + ":" + me.metricsPort()),
          "http://" + me.metricsAddress() + "/metrics");
      if (links.isEmpty()) {
        y.append("neighbours: []\n");
      } else {
        y.append("neighbours:\n");
      }
      for (int[] l : links) {
        HostsFile.Placement other = at.get(l[0]);
        if (r < l[0]) {
          line(y, "  - router: " + l[0], "this router dials it");
          y.append("    address: ").append(quoted(other.routerAddress())).append('\n');
        } else {
          line(y, "  - router: " + l[0], "on " + other.host() + "; it dials this router");
        }
        y.append("    cost: ").append(l[1]).append('\n');
      }
      if (maxRouters > 0) {
        y.append("routing:\n");
        line(y, "  maxRouters: " + maxRouters, "router numbers are below this");
      }
      line(y, "bloom:", "must be the same on every router of the network");
      y.append("  bits: ").append(bp.bits()).append('\n');
      y.append("  hashes: ").append(bp.hashes()).append('\n');
      y.append("  categories: ").append(bp.categories().configName()).append('\n');
      if (token != null) {
        line(y, "auth:", "neighbours must present the same token");
        y.append("  routerToken: ").append(quoted(token)).append('\n');
      }
      return y.toString();
    }

    private static void line(StringBuilder y, String text, String comment) {
      y.append(text);
      y.append(" ".repeat(Math.max(1, 31 - text.length())));
      y.append("# ").append(comment).append('\n');
    }

    /**
     * A YAML double-quoted scalar: backslash escapes for the quote, the backslash and every
     * character YAML does not allow unescaped.
     */
    static String quoted(String s) {
      StringBuilder b = new StringBuilder("\"");
      s.codePoints()
          .forEach(
              c -> {
                if (c == '"' || c == '\\') {
                  b.append('\\').appendCodePoint(c);
                } else if (c < 0x20
                    || (c >= 0x7f && c < 0xa0)
                    || (c >= 0xd800 && c < 0xe000)
                    || c == 0xfffe
                    || c == 0xffff) {
                  b.append(String.format("\\u%04x", c));
                } else {
                  b.appendCodePoint(c);
                }
              });
      return b.append('"').toString();
    }

    private static String readme(
        String label,
        Topology t,
        List<HostsFile.Placement> at,
        List<List<int[]>> links,
        BloomParameters bp,
        boolean withToken) {
      Map<String, List<HostsFile.Placement>> byHost = new LinkedHashMap<>();
      Map<String, String> shown = new LinkedHashMap<>();
      for (HostsFile.Placement p : at) {
        String key = p.host().toLowerCase(Locale.ROOT);
        shown.putIfAbsent(key, p.host());
        byHost.computeIfAbsent(key, k -> new ArrayList<>()).add(p);
      }
      StringBuilder m = new StringBuilder();
      m.append("# Router configurations for ").append(label).append("\n\n");
      m.append(t.nodeCount())
          .append(" routers on ")
          .append(byHost.size())
          .append(byHost.size() == 1 ? " host" : " hosts")
          .append(", ")
          .append(t.edgeCount())
          .append(" links, written by `bdrp topo configs`. Of each link, the lower-numbered")
          .append(" router dials the higher one, which waits for it; a lost link is redialled")
          .append(" every second, so the routers can start in any order.\n\n");
      m.append("Every router listens on all interfaces. Each host must accept TCP connections on")
          .append(" its routers' router ports from neighbouring hosts, on the client ports from")
          .append(" clients, and on the metrics ports from whoever reads the metrics.\n\n");
      m.append("Every file has the same Bloom parameters (")
          .append(bp.bits())
          .append(" bits, ")
          .append(bp.hashes())
          .append(" hashes, ")
          .append(bp.categories().configName())
          .append(
              withToken ? " categories) and the same router token" : " categories) and no token")
          .append("; a neighbour that differs in either is refused.\n\n");
      m.append("## What to run where\n");
      for (Map.Entry<String, List<HostsFile.Placement>> h : byHost.entrySet()) {
        m.append("\n### ").append(shown.get(h.getKey())).append("\n\nCopy ");
        List<HostsFile.Placement> ps = h.getValue();
        for (int i = 0; i < ps.size(); i++) {
          m.append(i == 0 ? "" : i == ps.size() - 1 ? " and " : ", ")
              .append('`')
              .append(fileName(ps.get(i).router()))
              .append('`');
        }
        m.append(ps.size() == 1 ? " there and run:\n\n" : " there and run each:\n\n");
        for (HostsFile.Placement p : ps) {
          m.append("    java -jar bdrp.jar router --config ").append(fileName(p.router()));
          m.append('\n');
        }
      }
      m.append("\n## Routers\n\n");
      m.append("| router | host | clients | routers | metrics | neighbours (cost) |\n");
      m.append("|---|---|---|---|---|---|\n");
      for (HostsFile.Placement p : at) {
        StringBuilder ns = new StringBuilder();
        for (int[] l : links.get(p.router())) {
          ns.append(ns.isEmpty() ? "" : ", ").append(l[0]).append(" (").append(l[1]).append(')');
        }
        m.append("| ")
            .append(p.router())
            .append(" | ")
            .append(p.host())
            .append(" | ")
            .append(p.clientPort())
            .append(" | ")
            .append(p.routerPort())
            .append(" | ")
            .append(p.metricsPort())
            .append(" | ")
            .append(ns.isEmpty() ? "none" : ns)
            .append(" |\n");
      }
      HostsFile.Placement first = at.get(0);
      m.append("\n## Checking\n\n");
      m.append("Once every router runs, each has a route to the ")
          .append(t.nodeCount() - 1)
          .append(" others:\n\n");
      m.append("    curl -s http://")
          .append(first.metricsAddress())
          .append("/metrics | grep bdrp_unicast_routes\n\n");
      m.append("Clients attach to any router at its client port:\n\n");
      m.append("    java -jar bdrp.jar sub --router ")
          .append(first.clientAddress())
          .append(" --predicate 'price > 20'\n");
      m.append("    echo '{\"price\":21}' | java -jar bdrp.jar pub --router ")
          .append(at.get(at.size() - 1).clientAddress())
          .append('\n');
      return m.toString();
    }

    /** Writes {@code text}; a file holding the token is readable by its owner only. */
    private static void write(Path p, String text, boolean secret) throws IOException {
      if (secret && p.getFileSystem().supportedFileAttributeViews().contains("posix")) {
        Set<PosixFilePermission> ownerOnly = PosixFilePermissions.fromString("rw-------");
        if (Files.exists(p)) {
          Files.setPosixFilePermissions(p, ownerOnly);
        } else {
          Files.createFile(p, PosixFilePermissions.asFileAttribute(ownerOnly));
        }
      }
      Files.writeString(p, text);
    }

    /** Names of router-N.yaml files in {@code dir} for N outside this topology. */
    private static List<String> staleFiles(Path dir, int routers) throws IOException {
      Pattern name = Pattern.compile("router-(\\d{1,9})\\.yaml");
      try (Stream<Path> s = Files.list(dir)) {
        return s.map(p -> p.getFileName().toString())
            .filter(
                f -> {
                  Matcher m = name.matcher(f);
                  return m.matches() && Integer.parseInt(m.group(1)) >= routers;
                })
            .sorted()
            .toList();
      }
    }
  }
}
