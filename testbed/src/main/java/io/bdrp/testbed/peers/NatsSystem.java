package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.Ports;
import io.bdrp.testbed.PubSubSystem;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * NATS: one {@code nats-server} process per server (Debian's package, or the binary named by {@code
 * BDRP_NATS_SERVER}), joined into one cluster when there are several, and clients from the official
 * Java client (jnats), one connection each. A message of bucket N goes to subject {@code bench.N};
 * a bucket subscription is that subject, taking everything is {@code bench.*}.
 *
 * <p>A NATS cluster is a full mesh: a message crosses at most one server-to-server route whatever
 * the line the servers were started in.
 */
public final class NatsSystem implements PubSubSystem {
  private final List<ChildProcess> servers = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();
  private int[] ports = new int[0];

  @Override
  public String name() {
    return "nats";
  }

  /** The nats-server binary: {@code BDRP_NATS_SERVER}, else the first on PATH. */
  public static Path binary() throws IOException {
    String env = System.getenv("BDRP_NATS_SERVER");
    if (env != null && !env.isBlank()) {
      return Path.of(env);
    }
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
      Path p = Path.of(d, "nats-server");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new IOException(
        "nats-server not found on PATH: install Debian's nats-server package "
            + "(apt-get install nats-server) or set BDRP_NATS_SERVER");
  }

  @Override
  public void start(int count, Path dir) throws Exception {
    Path bin = binary();
    ports = new int[count];
    int[] cluster = new int[count];
    for (int i = 0; i < count; i++) {
      ports[i] = Ports.free();
      cluster[i] = Ports.free();
    }
    for (int i = 0; i < count; i++) {
      List<String> cmd = new ArrayList<>(List.of(bin.toString(), "-a", "127.0.0.1"));
      cmd.addAll(List.of("-p", Integer.toString(ports[i])));
      if (count > 1) {
        cmd.addAll(List.of("--cluster_name", "bench"));
        cmd.addAll(List.of("--cluster", "nats://127.0.0.1:" + cluster[i]));
        if (i > 0) {
          cmd.addAll(List.of("--routes", "nats://127.0.0.1:" + cluster[i - 1]));
        }
      }
      servers.add(
          ChildProcess.start("nats-server " + i, cmd, dir.resolve("nats-server-" + i + ".log")));
    }
    for (int i = 0; i < count; i++) {
      servers.get(i).awaitPort(ports[i], Duration.ofSeconds(30));
    }
  }

  private Connection connect(int server, String name) throws Exception {
    Connection c =
        Nats.connect(
            new Options.Builder()
                .server("nats://127.0.0.1:" + ports[server])
                .connectionName(name)
                .maxReconnects(0)
                .build());
    synchronized (connections) {
      connections.add(c);
    }
    return c;
  }

  @Override
  public AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver)
      throws Exception {
    Connection c = connect(server, name);
    Dispatcher d = c.createDispatcher(m -> receiver.received(m.getData()));
    d.subscribe(bucket == ALL ? "bench.*" : "bench." + bucket);
    c.flush(Duration.ofSeconds(10)); // the server has the subscription
    return c::close;
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    Connection c = connect(server, name);
    String[] subjects = new String[1024];
    for (int i = 0; i < subjects.length; i++) {
      subjects[i] = "bench." + i;
    }
    return new Publisher() {
      @Override
      public void publish(int bucket, byte[] body) {
        c.publish(bucket < subjects.length ? subjects[bucket] : "bench." + bucket, body);
      }

      @Override
      public void flush() throws Exception {
        c.flush(Duration.ofSeconds(10));
      }

      @Override
      public void close() {
        closeQuietly(c);
      }
    };
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public List<ChildProcess> processes() {
    return List.copyOf(servers);
  }

  @Override
  public void close() {
    synchronized (connections) {
      for (Connection c : connections) {
        closeQuietly(c);
      }
      connections.clear();
    }
    servers.forEach(ChildProcess::close);
    servers.clear();
  }
}
