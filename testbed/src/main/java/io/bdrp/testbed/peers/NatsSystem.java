package io.bdrp.testbed.peers;

import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.DevCa;
import io.bdrp.testbed.FanoutBenchmark;
import io.bdrp.testbed.Ports;
import io.bdrp.testbed.PubSubSystem;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.PublishAck;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>With JetStream ({@link #jetStream()}, named {@code nats+js}), what a NATS user picks for
 * confirmed, at-least-once delivery: the server runs with JetStream ({@code -js}, its store under
 * the run folder) and holds the stream {@value #STREAM} over {@code bench.*}, made once the server
 * is up (memory storage, one replica, limits retention bounded by {@link #STREAM_MAX_BYTES} and
 * {@link #STREAM_MAX_AGE}, oldest discarded first). Publishers publish asynchronously and await
 * every server acknowledgement (PubAck), with at most {@link #MAX_UNACKED_PUBLISHES} outstanding.
 * Every subscriber has its own ephemeral push consumer filtered on its subject (as without
 * JetStream), delivering new messages with explicit acks, which the subscriber sends as it takes
 * each message. A message that reaches a subscriber a second time (a redelivery) is acked and
 * counted in {@link #duplicates()}, not passed on.
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
  private final LongAdder duplicates = new LongAdder();
  private boolean jetStream;
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
    return "nats" + (jetStream ? "+js" : "") + (tls ? "+tls" : "") + (auth != null ? "+auth" : "");
  }

  /** The JetStream stream of {@code nats+js}: every subject the benchmarks send to. */
  static final String STREAM = "bench";

  /**
   * The memory the stream may hold, oldest messages discarded first: about a million 200-byte
   * messages, many times what the benchmark's window leaves unacknowledged, so that nothing a
   * consumer has yet to take is discarded, while a long run cannot exhaust the machine's memory.
   */
  static final long STREAM_MAX_BYTES = 256L << 20;

  /** The age past which the stream discards a message, a second bound on its memory. */
  static final Duration STREAM_MAX_AGE = Duration.ofMinutes(1);

  /**
   * Publishes a {@code nats+js} publisher may have awaiting their PubAck: the fan-out benchmark's
   * default window of outstanding deliveries, so that the acknowledgements hold the publisher back
   * no more than the window does the other systems' publishers.
   */
  static final int MAX_UNACKED_PUBLISHES = FanoutBenchmark.Options.DEFAULT.window();

  /**
   * Messages a {@code nats+js} consumer may have delivered and not yet acknowledged (its {@code
   * max_ack_pending}). As large as the fan-out benchmark's default window, so that the consumer is
   * held back by the window rather than by the server; and well below the client's limits of what
   * may be pending on a subscription (512 Ki messages, 64 MiB), so that the client never drops a
   * delivered message: every message the server sends reaches the subscriber, and one whose stream
   * sequence is not above the highest the subscriber has taken is a redelivery.
   */
  static final int MAX_ACK_PENDING = FanoutBenchmark.Options.DEFAULT.window();

  /**
   * This system with JetStream: a stream over the benchmark's subjects, publishers awaiting the
   * server's acknowledgement of every message, and one push consumer with explicit acks per
   * subscriber; named {@code nats+js}. One server, without client authentication. Before {@link
   * #start}.
   */
  public NatsSystem jetStream() {
    if (auth != null) {
      throw new IllegalArgumentException("nats+js runs without client authentication");
    }
    this.jetStream = true;
    return this;
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
    if (jetStream && count > 1) {
      throw new IllegalArgumentException("nats+js runs one server only");
    }
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
      if (jetStream) {
        Path store = dir.resolve("jetstream");
        Files.createDirectories(store);
        cmd.addAll(List.of("-js", "-sd", store.toString()));
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
    if (jetStream) {
      addStream();
    }
  }

  /** Makes the stream of {@code nats+js} on the (one) server, from a connection of its own. */
  private void addStream() throws Exception {
    Connection c = connect(0, "stream-setup", null, null);
    try {
      c.jetStreamManagement()
          .addStream(
              StreamConfiguration.builder()
                  .name(STREAM)
                  .subjects("bench.*")
                  .storageType(StorageType.Memory)
                  .replicas(1)
                  .retentionPolicy(RetentionPolicy.Limits)
                  .discardPolicy(DiscardPolicy.Old)
                  .maxBytes(STREAM_MAX_BYTES)
                  .maxAge(STREAM_MAX_AGE)
                  .build());
    } catch (JetStreamApiException e) {
      throw new IOException("nats+js: the server refused the stream: " + e.getMessage(), e);
    } finally {
      closeQuietly(c);
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
    String subject = bucket == ALL ? "bench.*" : "bench." + bucket;
    if (jetStream) {
      subscribeJetStream(c, subject, receiver);
      return c::close;
    }
    Dispatcher d = c.createDispatcher(m -> receiver.received(m.getData()));
    d.subscribe(subject);
    c.flush(Duration.ofSeconds(10)); // the server has the subscription
    return c::close;
  }

  /**
   * Gives connection {@code c} an ephemeral push consumer of the stream filtered on {@code
   * subject}, whose messages go to {@code receiver} on the connection's dispatcher thread, each
   * acked as it is taken; a redelivery is acked and counted as a duplicate.
   */
  private void subscribeJetStream(Connection c, String subject, Receiver receiver)
      throws Exception {
    ConsumerConfiguration consumer =
        ConsumerConfiguration.builder()
            .ackPolicy(AckPolicy.Explicit)
            .deliverPolicy(DeliverPolicy.New)
            .maxAckPending(MAX_ACK_PENDING)
            .build();
    PushSubscribeOptions options =
        PushSubscribeOptions.builder().stream(STREAM).configuration(consumer).build();
    // Owned by the dispatcher's one thread: the highest stream sequence taken. A consumer sends
    // first deliveries in stream order, so a sequence at or below it was delivered before.
    long[] highest = {0};
    Dispatcher d = c.createDispatcher();
    c.jetStream()
        .subscribe(
            subject,
            d,
            m -> {
              long seq = m.metaData().streamSequence();
              if (seq > highest[0]) {
                highest[0] = seq;
                receiver.received(m.getData());
              } else {
                duplicates.increment();
              }
              m.ack();
            },
            false,
            options);
    c.flush(Duration.ofSeconds(10)); // the consumer exists (created by a request) and is pushing
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    Connection c = connect(server, name, auth == null ? null : Auth.PUBLISHER, publisherPassword);
    if (jetStream) {
      return jetStreamPublisher(c);
    }
    String[] subjects = subjects();
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

  /**
   * A publisher on {@code c} publishing to the stream: each message published asynchronously, its
   * PubAck awaited at the latest when {@link #MAX_UNACKED_PUBLISHES} others are outstanding or at
   * {@code flush}. A message the server refuses fails the publish or the flush. Used by one thread.
   */
  private Publisher jetStreamPublisher(Connection c) throws IOException {
    JetStream js = c.jetStream();
    String[] subjects = subjects();
    ArrayDeque<CompletableFuture<PublishAck>> unacked = new ArrayDeque<>();
    return new Publisher() {
      @Override
      public void publish(int bucket, byte[] body) throws Exception {
        // Forget what is acknowledged, oldest first; wait for the oldest if the bound is reached.
        while (!unacked.isEmpty()
            && (unacked.peek().isDone() || unacked.size() >= MAX_UNACKED_PUBLISHES)) {
          unacked.poll().get(60, TimeUnit.SECONDS);
        }
        // The client queues the array itself until its writer thread sends it, and the harness
        // stamps the next message into the same array: send a copy.
        String subject = bucket < subjects.length ? subjects[bucket] : "bench." + bucket;
        unacked.add(js.publishAsync(subject, body.clone()));
      }

      @Override
      public void flush() throws Exception {
        c.flush(Duration.ofSeconds(10));
        for (CompletableFuture<PublishAck> f = unacked.poll(); f != null; f = unacked.poll()) {
          f.get(60, TimeUnit.SECONDS);
        }
      }

      @Override
      public void close() {
        closeQuietly(c);
      }
    };
  }

  /** The subjects of buckets 0 to 1023, made once per publisher rather than once per message. */
  private static String[] subjects() {
    String[] subjects = new String[1024];
    for (int i = 0; i < subjects.length; i++) {
      subjects[i] = "bench." + i;
    }
    return subjects;
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
  public long duplicates() {
    return duplicates.sum();
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
