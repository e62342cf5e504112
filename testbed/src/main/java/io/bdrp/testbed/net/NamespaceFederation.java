package io.bdrp.testbed.net;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.DevCa;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * bdrp routers on an emulated network: one {@code bdrp router} process in each router's namespace,
 * configured from the network (neighbours at their addresses on the shared links, the
 * lower-numbered end dialling), serving clients and metrics on its host address.
 */
public final class NamespaceFederation implements AutoCloseable {
  /** The client port of every router, on its host address. */
  public static final int CLIENT_PORT = 7400;

  /** The router port, on every address of the namespace. */
  public static final int ROUTER_PORT = 7500;

  /** The metrics port, on the host address. */
  public static final int METRICS_PORT = 9400;

  /** The router process: the router module's own main (a dependency of this module). */
  private static final String MAIN = io.bdrp.router.RouterMain.class.getName();

  private final Emulator.Network network;
  private final List<ChildProcess> routers = new ArrayList<>();
  private final List<List<String>> commands = new ArrayList<>();
  private Path dir;
  private DevCa ca;

  private NamespaceFederation(Emulator.Network network) {
    this.network = network;
  }

  /** The configuration of router {@code r}, as YAML, without TLS. */
  public static String config(Emulator.Network n, int r, String routingYaml, String linkTransport) {
    return config(n, r, routingYaml, linkTransport, null);
  }

  /**
   * The configuration of router {@code r}, as YAML: with {@code ca} (or null), TLS on its client
   * port and mutual TLS on its links, with its certificate from that CA.
   */
  public static String config(
      Emulator.Network n, int r, String routingYaml, String linkTransport, DevCa ca) {
    Emulator.RouterNet me = n.routers().get(r);
    StringBuilder y = new StringBuilder();
    y.append("router: ").append(r).append('\n');
    y.append("listen:\n");
    y.append("  clients: ").append(me.address()).append(':').append(CLIENT_PORT).append('\n');
    y.append("  routers: 0.0.0.0:").append(ROUTER_PORT).append('\n');
    y.append("  metrics: ").append(me.address()).append(':').append(METRICS_PORT).append('\n');
    List<String> nb = new ArrayList<>();
    for (Emulator.LinkNet l : n.links()) {
      if (l.a() == r) {
        nb.add(
            "  - router: "
                + l.b()
                + "\n    address: "
                + l.addressB()
                + ":"
                + ROUTER_PORT
                + "\n    transport: "
                + linkTransport
                + "\n"); // the lower-numbered end dials
      } else if (l.b() == r) {
        nb.add("  - router: " + l.a() + "\n    transport: " + linkTransport + "\n");
      }
    }
    if (!nb.isEmpty()) {
      y.append("neighbours:\n");
      nb.forEach(y::append);
    }
    if (routingYaml != null && !routingYaml.isBlank()) {
      y.append(routingYaml.endsWith("\n") ? routingYaml : routingYaml + "\n");
    }
    if (ca != null) {
      y.append("tls:\n");
      y.append("  cert: ").append(ca.cert(r).toAbsolutePath()).append('\n');
      y.append("  key: ").append(ca.key(r).toAbsolutePath()).append('\n');
      y.append("  ca: ").append(ca.ca().toAbsolutePath()).append('\n');
    }
    return y.toString();
  }

  /**
   * Starts every router of {@code n} (which must be up), with configs and logs under {@code dir},
   * and waits until each serves clients.
   */
  public static NamespaceFederation start(
      Emulator.Network n,
      Path dir,
      List<String> jvmOptions,
      String routingYaml,
      String linkTransport)
      throws IOException, InterruptedException {
    return start(n, dir, jvmOptions, routingYaml, linkTransport, false);
  }

  /**
   * As {@link #start(Emulator.Network, Path, List, String, String)}; with {@code tls}, a
   * development CA made in {@code dir/tls} gives every router a certificate naming its number and
   * every router's client address, client ports speak TLS and links mutual TLS, and {@link #ca()}
   * is what clients trust.
   */
  public static NamespaceFederation start(
      Emulator.Network n,
      Path dir,
      List<String> jvmOptions,
      String routingYaml,
      String linkTransport,
      boolean tls)
      throws IOException, InterruptedException {
    return start(n, dir, jvmOptions, routingYaml, linkTransport, tls, Map.of());
  }

  /**
   * As {@link #start(Emulator.Network, Path, List, String, String, boolean)}, every router process
   * with the environment variables {@code env} set as well (such as {@code BDRP_UDP_KEYLOG}).
   */
  public static NamespaceFederation start(
      Emulator.Network n,
      Path dir,
      List<String> jvmOptions,
      String routingYaml,
      String linkTransport,
      boolean tls,
      Map<String, String> env)
      throws IOException, InterruptedException {
    NamespaceFederation f = new NamespaceFederation(n);
    f.dir = dir;
    try {
      Files.createDirectories(dir);
      if (tls) {
        f.ca =
            DevCa.create(
                n.routers().size(),
                dir.resolve("tls"),
                n.routers().stream().map(Emulator.RouterNet::address).toArray(String[]::new));
      }
      for (Emulator.RouterNet r : n.routers()) {
        Path config = dir.resolve("router-" + r.router() + ".yaml");
        Files.writeString(config, config(n, r.router(), routingYaml, linkTransport, f.ca));
        List<String> cmd = new ArrayList<>();
        if (!env.isEmpty()) {
          cmd.add("env"); // it runs the command in its own process, so the pid stays the router's
          env.forEach((k, v) -> cmd.add(k + "=" + v));
        }
        cmd.addAll(List.of("ip", "netns", "exec", r.namespace()));
        cmd.addAll(ChildProcess.java(jvmOptions, MAIN, "--config", config.toString()));
        f.commands.add(List.copyOf(cmd));
        f.routers.add(
            ChildProcess.start(
                "bdrp router " + r.router(), cmd, dir.resolve("router-" + r.router() + ".log")));
      }
      for (Emulator.RouterNet r : n.routers()) {
        f.routers.get(r.router()).awaitPort(r.address(), CLIENT_PORT, Duration.ofSeconds(60));
      }
      return f;
    } catch (IOException | InterruptedException | RuntimeException e) {
      f.close();
      throw e;
    }
  }

  /** The CA that signed the routers' certificates, or null without TLS. */
  public DevCa ca() {
    return ca;
  }

  /** Where clients of router {@code r} connect. */
  public InetSocketAddress clientAddress(int r) {
    return new InetSocketAddress(network.routers().get(r).address(), CLIENT_PORT);
  }

  /** Where router {@code r}'s metrics are served. */
  public InetSocketAddress metricsAddress(int r) {
    return new InetSocketAddress(network.routers().get(r).address(), METRICS_PORT);
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  /** Router {@code r}'s metrics now, in the Prometheus text format. */
  public String metrics(int r) throws IOException, InterruptedException {
    InetSocketAddress a = metricsAddress(r);
    URI uri =
        URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort() + "/metrics");
    return HTTP.send(
            HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /**
   * What the routers' YAML gets beside their addresses and links: {@code routing} entries (in
   * order) and, unless it is {@code jvm} or null, {@code fastPath}; null when there is nothing.
   */
  public static String routerYaml(Map<String, ?> routing, String fastPath) {
    return routerYaml(routing, fastPath, null);
  }

  /**
   * As {@link #routerYaml(Map, String)}, and {@code auth.udp} (what protects DATA datagrams on UDP
   * links: {@code mac}, {@code encrypt} or {@code none}) unless {@code udpAuth} is null, which
   * leaves the routers' default.
   */
  public static String routerYaml(Map<String, ?> routing, String fastPath, String udpAuth) {
    StringBuilder y = new StringBuilder();
    if (!routing.isEmpty()) {
      y.append("routing:\n");
      routing.forEach((k, v) -> y.append("  ").append(k).append(": ").append(v).append('\n'));
    }
    if (fastPath != null && !fastPath.equals("jvm")) {
      y.append("fastPath: ").append(fastPath).append('\n');
    }
    if (udpAuth != null) {
      y.append("auth:\n  udp: ").append(udpAuth).append('\n');
    }
    return y.isEmpty() ? null : y.toString();
  }

  /** The router processes, by router number. */
  public List<ChildProcess> processes() {
    return List.copyOf(routers);
  }

  /** The process of router {@code r} now (a restart replaces it). */
  public ChildProcess process(int r) {
    return routers.get(r);
  }

  /** Ends router {@code r}'s process with SIGKILL ({@code kill -9}) and waits until it is gone. */
  public void kill(int r) throws InterruptedException {
    routers.get(r).kill();
  }

  /**
   * Starts router {@code r} again with the same command and configuration (its log continues in the
   * same file), after it was killed or died, and waits until it serves clients. Its epoch is the
   * wall clock at start, so the network sees a new run of the router.
   */
  public ChildProcess restart(int r, Duration timeout) throws IOException, InterruptedException {
    if (routers.get(r).isAlive()) {
      throw new IllegalStateException("router " + r + " is still running");
    }
    ChildProcess p =
        ChildProcess.start(
            "bdrp router " + r, commands.get(r), dir.resolve("router-" + r + ".log"));
    routers.set(r, p);
    p.awaitPort(network.routers().get(r).address(), CLIENT_PORT, timeout);
    return p;
  }

  /** Ends every router process this federation started. */
  @Override
  public void close() {
    routers.forEach(ChildProcess::close);
    routers.clear();
  }
}
