package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.DevCa;
import io.bdrp.testbed.Ports;
import io.bdrp.testbed.PubSubSystem;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;

/**
 * NATS: one {@code nats-server} process per server (Debian's package, or the binary named by {@code
 * BDRP_NATS_SERVER}), joined into one cluster when there are several, and clients from the official
 * Java client (jnats), one connection each. A message of bucket N goes to subject {@code bench.N};
 * a bucket subscription is that subject, taking everything is {@code bench.*}.
 *
 * <p>With TLS, a development CA made for the run gives every server a certificate ({@code --tls
 * --tlscert --tlskey}: clients are not asked for one) and clients dial {@code tls://} trusting the
 * CA. Cluster routes stay plain: TLS is for single-server runs.
 *
 * <p>With client authentication ({@link PubSubSystem.Auth}), a config file ({@code -c}) names the
 * users in an {@code authorization} block: a publisher user whose publish permission allows the
 * subjects {@code bench.0} to {@code bench.B-1} (B buckets: every subject the benchmark sends to),
 * and subscriber users whose subscribe permission allows {@code bench.*}; clients sign in with user
 * and password. The passwords, random for the run, are written in plain in the config: the server
 * checks them once per connection, so a bcrypt hash would cost nothing per message either.
 *
 * <p>A NATS cluster is a full mesh: a message crosses at most one server-to-server route whatever
 * the line the servers were started in.
 */
public final class NatsSystem implements PubSubSystem {
  private final List<ChildProcess> servers = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();
  private final boolean tls;
  private final Auth auth;
  private final String publisherPassword;
  private final List<String> subscriberPasswords = new ArrayList<>();
  private final AtomicInteger subscribers = new AtomicInteger();
  private final LongAdder refused = new LongAdder();
  private int[] ports = new int[0];
  private SSLContext clientTls;

  /** A system without TLS. */
  public NatsSystem() {
    this(false);
  }

  /** A system with TLS between clients and servers if asked. */
  public NatsSystem(boolean tls) {
    this(tls, null);
  }

  /** A system with TLS if asked, and with users and permissions if {@code auth} is not null. */
  public NatsSystem(boolean tls, Auth auth) {
    this.tls = tls;
    this.auth = auth;
    this.publisherPassword = auth == null ? null : newPassword();
    if (auth != null) {
      for (int k = 0; k < auth.subscribers(); k++) {
        subscriberPasswords.add(newPassword());
      }
    }
  }

  private static String newPassword() {
    byte[] b = new byte[24];
    new SecureRandom().nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** The password of {@code user} in this run (with auth only). */
  String password(String user) {
    if (user.equals(Auth.PUBLISHER)) {
      return publisherPassword;
    }
    for (int k = 0; k < subscriberPasswords.size(); k++) {
      if (user.equals(Auth.subscriber(k))) {
        return subscriberPasswords.get(k);
      }
    }
    throw new IllegalArgumentException("no user " + user);
  }

  @Override
  public String name() {
    return "nats" + (tls ? "+tls" : "") + (auth != null ? "+auth" : "");
  }

  /** The config file's {@code authorization} block: the run's users and their permissions. */
  String authConfig() {
    StringBuilder c = new StringBuilder("authorization {\n  users = [\n");
    StringBuilder subjects = new StringBuilder();
    for (int b = 0; b < auth.buckets(); b++) {
      subjects.append(b == 0 ? "" : ", ").append("\"bench.").append(b).append('"');
    }
    c.append("    {user: \"")
        .append(Auth.PUBLISHER)
        .append("\", password: \"")
        .append(publisherPassword)
        .append("\", permissions: {publish: {allow: [")
        .append(subjects)
        .append("]}}}\n");
    for (int k = 0; k < subscriberPasswords.size(); k++) {
      c.append("    {user: \"")
          .append(Auth.subscriber(k))
          .append("\", password: \"")
          .append(subscriberPasswords.get(k))
          .append("\", permissions: {subscribe: {allow: [\"bench.*\"]}}}\n");
    }
    return c.append("  ]\n}\n").toString();
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
    DevCa ca = null;
    if (tls) {
      if (count > 1) {
        throw new IllegalArgumentException("nats with TLS runs one server only");
      }
      ca = DevCa.create(count, dir.resolve("tls"));
      clientTls = ca.clientContext();
    }
    for (int i = 0; i < count; i++) {
      List<String> cmd = new ArrayList<>(List.of(bin.toString(), "-a", "127.0.0.1"));
      cmd.addAll(List.of("-p", Integer.toString(ports[i])));
      if (auth != null) {
        Path config = dir.resolve("nats-server-" + i + ".conf");
        Files.createDirectories(dir);
        Files.writeString(config, authConfig());
        cmd.addAll(List.of("-c", config.toString()));
      }
      if (ca != null) {
        cmd.addAll(List.of("--tls", "--tlscert", ca.cert(i).toString()));
        cmd.addAll(List.of("--tlskey", ca.key(i).toString()));
      }
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

  private Connection connect(int server, String name, String user, String password)
      throws Exception {
    Options.Builder b =
        new Options.Builder()
            .server((tls ? "tls" : "nats") + "://127.0.0.1:" + ports[server])
            .connectionName(name)
            .maxReconnects(0)
            .errorListener(
                new ErrorListener() {
                  @Override
                  public void errorOccurred(Connection conn, String error) {
                    refused.increment();
                  }
                });
    if (tls) {
      b.sslContext(clientTls);
    }
    if (user != null) {
      b.userInfo(user, password);
    }
    Connection c = Nats.connect(b.build());
    synchronized (connections) {
      connections.add(c);
    }
    return c;
  }

  @Override
  public AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver)
      throws Exception {
    Connection c;
    if (auth != null) {
      int k = subscribers.getAndIncrement();
      if (k >= subscriberPasswords.size()) {
        throw new IllegalStateException(
            "nats: the run has users for " + subscriberPasswords.size() + " subscribers only");
      }
      c = connect(server, name, Auth.subscriber(k), subscriberPasswords.get(k));
    } else {
      c = connect(server, name, null, null);
    }
    Dispatcher d = c.createDispatcher(m -> receiver.received(m.getData()));
    d.subscribe(bucket == ALL ? "bench.*" : "bench." + bucket);
    c.flush(Duration.ofSeconds(10)); // the server has the subscription
    return c::close;
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    Connection c = connect(server, name, auth == null ? null : Auth.PUBLISHER, publisherPassword);
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
  public long refused() {
    return refused.sum();
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
