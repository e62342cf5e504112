package io.bdrp.testbed.peers;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.DevCa;
import io.bdrp.testbed.Ports;
import io.bdrp.testbed.PubSubSystem;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * bdrp: one {@code bdrp router} process per server (the real command, from a generated config
 * file), clients from the bdrp client library sharing one two-thread event-loop group and one
 * callback thread (the publisher sends with {@code publish}, without a future per message). A
 * bucket subscription is the predicate {@code bucket = N}; taking everything is {@code bucket >=
 * 0}.
 *
 * <p>With TLS, a development CA made for the run gives every router a certificate: client ports
 * speak TLS 1.3, router links mutual TLS, and clients trust the CA.
 *
 * <p>With client authentication ({@link PubSubSystem.Auth}), every router's {@code auth.clients}
 * refuses anonymous clients and names a publisher user whose {@code publish} permission is {@link
 * #permission(int) bucket &gt;= 0 &amp;&amp; bucket &lt; B} (B buckets: a range the router
 * evaluates on every SEND, which every benchmark message satisfies) and subscriber users whose
 * {@code subscribe} permission is the same range (intersected with what each asks for: {@code
 * bucket = j} stays as it is, {@code bucket >= 0} becomes the range). Each user has a token made
 * for the run, of which the config holds the salted hash; clients present it in their HELLO.
 */
public final class BdrpSystem implements PubSubSystem {
  /** The router process: the router module's own main (a dependency of this module). */
  static final String MAIN = io.bdrp.router.RouterMain.class.getName();

  private final List<String> jvmOptions;
  private final boolean tls;
  private final String linkTransport;
  private final Auth auth;
  private final String publisherToken;
  private final List<String> subscriberTokens = new ArrayList<>();
  private final AtomicInteger subscribers = new AtomicInteger();
  private final LongAdder refused = new LongAdder();
  private DevCa ca;
  private final List<ChildProcess> routers = new ArrayList<>();
  private final List<BdrpClient> clients = new ArrayList<>();
  private int[] clientPorts = new int[0];
  private EventLoopGroup group;
  private ExecutorService callbacks;

  /** A system whose router JVMs run with {@code jvmOptions}, without TLS. */
  public BdrpSystem(List<String> jvmOptions) {
    this(jvmOptions, false);
  }

  /** A system whose router JVMs run with {@code jvmOptions}, with TLS on every port if asked. */
  public BdrpSystem(List<String> jvmOptions, boolean tls) {
    this(jvmOptions, tls, "tcp");
  }

  /**
   * As {@link #BdrpSystem(List, boolean)}, the routers' links carrying DATA over {@code
   * linkTransport} ({@code tcp}, {@code udp} or {@code shm}).
   */
  public BdrpSystem(List<String> jvmOptions, boolean tls, String linkTransport) {
    this(jvmOptions, tls, linkTransport, null);
  }

  /**
   * As {@link #BdrpSystem(List, boolean, String)}, with client authentication and permissions if
   * {@code auth} is not null.
   */
  public BdrpSystem(List<String> jvmOptions, boolean tls, String linkTransport, Auth auth) {
    if (!List.of("tcp", "udp", "shm").contains(linkTransport)) {
      throw new IllegalArgumentException(
          "--link-transports: tcp, udp or shm, got '" + linkTransport + "'");
    }
    this.jvmOptions = List.copyOf(jvmOptions);
    this.tls = tls;
    this.linkTransport = linkTransport;
    this.auth = auth;
    this.publisherToken = auth == null ? null : ClientAuth.newToken();
    if (auth != null) {
      for (int k = 0; k < auth.subscribers(); k++) {
        subscriberTokens.add(ClientAuth.newToken());
      }
    }
  }

  /**
   * The predicate of the publisher's {@code publish} permission and of the subscribers' {@code
   * subscribe} permission with {@code buckets} buckets.
   */
  public static String permission(int buckets) {
    return "bucket >= 0 && bucket < " + buckets;
  }

  @Override
  public String name() {
    return "bdrp"
        + (reliable ? "+reliable" : "")
        + (linkTransport.equals("tcp") ? "" : "+" + linkTransport)
        + (tls ? "+tls" : "")
        + (auth != null ? "+auth" : "");
  }

  @Override
  public void start(int servers, Path dir) throws Exception {
    clientPorts = new int[servers];
    int[] routerPorts = new int[servers];
    for (int i = 0; i < servers; i++) {
      clientPorts[i] = Ports.free();
      routerPorts[i] = Ports.free();
    }
    if (tls) {
      ca = DevCa.create(servers, dir.resolve("tls"));
    }
    for (int i = 0; i < servers; i++) {
      String y = config(i, clientPorts, routerPorts);
      Path config = dir.resolve("bdrp-router-" + i + ".yaml");
      Files.createDirectories(dir);
      Files.writeString(config, y);
      ChildProcess p =
          ChildProcess.start(
              "bdrp router " + i,
              ChildProcess.java(jvmOptions, MAIN, "--config", config.toString()),
              dir.resolve("bdrp-router-" + i + ".log"));
      routers.add(p);
    }
    for (int i = 0; i < servers; i++) {
      routers.get(i).awaitPort(clientPorts[i], Duration.ofSeconds(30));
    }
    group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    callbacks =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bdrp-bench-callbacks");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * The config of router {@code i} of a line whose routers listen for clients and routers on {@code
   * clientPorts} and {@code routerPorts} (TLS files from the run's CA, made first).
   */
  String config(int i, int[] clientPorts, int[] routerPorts) {
    StringBuilder y = new StringBuilder();
    y.append("router: ").append(i).append('\n');
    y.append("listen:\n");
    y.append("  clients: 127.0.0.1:").append(clientPorts[i]).append('\n');
    y.append("  routers: 127.0.0.1:").append(routerPorts[i]).append('\n');
    y.append("neighbours:\n");
    if (i > 0) {
      y.append("  - router: ").append(i - 1).append('\n'); // it dials us
      y.append("    transport: ").append(linkTransport).append('\n');
    }
    if (i + 1 < clientPorts.length) {
      y.append("  - router: ").append(i + 1).append('\n');
      y.append("    address: 127.0.0.1:").append(routerPorts[i + 1]).append('\n');
      y.append("    transport: ").append(linkTransport).append('\n');
    }
    if (clientPorts.length == 1) {
      y.setLength(y.length() - "neighbours:\n".length());
    }
    if (auth != null) {
      y.append(authYaml());
    }
    if (tls) {
      y.append("tls:\n");
      y.append("  cert: ").append(ca.cert(i).toAbsolutePath()).append('\n');
      y.append("  key: ").append(ca.key(i).toAbsolutePath()).append('\n');
      y.append("  ca: ").append(ca.ca().toAbsolutePath()).append('\n');
    }
    return y.toString();
  }

  /** The routers' {@code auth.clients}: the run's users, their token hashes and permissions. */
  String authYaml() {
    String p = "'" + permission(auth.buckets()) + "'";
    StringBuilder y = new StringBuilder();
    y.append("auth:\n");
    y.append("  clients:\n");
    y.append("    anonymous: false\n");
    y.append("    users:\n");
    y.append("      - name: ").append(Auth.PUBLISHER).append('\n');
    y.append("        token: \"").append(ClientAuth.hashLine(publisherToken)).append("\"\n");
    y.append("        publish: ").append(p).append('\n');
    for (int k = 0; k < subscriberTokens.size(); k++) {
      y.append("      - name: ").append(Auth.subscriber(k)).append('\n');
      y.append("        token: \"")
          .append(ClientAuth.hashLine(subscriberTokens.get(k)))
          .append("\"\n");
      y.append("        subscribe: ").append(p).append('\n');
    }
    return y.toString();
  }

  /** The token of {@code user} in this run (with auth only). */
  String token(String user) {
    if (user.equals(Auth.PUBLISHER)) {
      return publisherToken;
    }
    for (int k = 0; k < subscriberTokens.size(); k++) {
      if (user.equals(Auth.subscriber(k))) {
        return subscriberTokens.get(k);
      }
    }
    throw new IllegalArgumentException("no user " + user);
  }

  private BdrpClient connect(
      int server, String name, String token, java.util.function.Consumer<Message> h)
      throws Exception {
    BdrpClient.Builder b =
        BdrpClient.builder()
            .router("127.0.0.1", clientPorts[server])
            .name(name)
            .eventLoopGroup(group)
            .callbackExecutor(callbacks)
            .reconnect(false)
            .onMessage(h)
            .listener(
                new BdrpClient.ConnectionListener() {
                  @Override
                  public void error(int code, String message) {
                    refused.increment();
                  }
                });
    if (tls) {
      b.tls(ca.ca());
    }
    if (token != null) {
      b.authToken(token);
    }
    if (reliable) {
      b.maxUnconfirmed(UNCONFIRMED);
    }
    BdrpClient c = b.connect();
    synchronized (clients) {
      clients.add(c);
    }
    return c;
  }

  @Override
  public AutoCloseable subscribe(int server, String name, int bucket, Receiver receiver)
      throws Exception {
    String token = null;
    if (auth != null) {
      int k = subscribers.getAndIncrement();
      if (k >= subscriberTokens.size()) {
        throw new IllegalStateException(
            "bdrp: the run has users for " + subscriberTokens.size() + " subscribers only");
      }
      token = subscriberTokens.get(k);
    }
    BdrpClient c =
        connect(
            server,
            name,
            token,
            m -> {
              java.nio.ByteBuffer b = m.bodyBuffer();
              receiver.received(b.getLong(0), b.get(8));
            });
    c.setPredicate(Predicate.parse(bucket == ALL ? "bucket >= 0" : "bucket = " + bucket))
        .get(10, TimeUnit.SECONDS);
    return c;
  }

  private boolean reliable;

  /**
   * How many reliable messages a publisher may have unconfirmed: the harness's default window of
   * deliveries outstanding, as many as {@code nats+js} may have unacknowledged.
   */
  static final int UNCONFIRMED = io.bdrp.testbed.FanoutBenchmark.Options.DEFAULT.window();

  /**
   * This system with its publishers publishing reliably ({@code BdrpClient.sendReliable}: every
   * message kept by its ingress router until every router of its D has it, and confirmed), named
   * {@code bdrp+reliable}. Before {@link #start}.
   */
  public BdrpSystem reliable() {
    this.reliable = true;
    return this;
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    BdrpClient c = connect(server, name, publisherToken, m -> {});
    java.util.concurrent.ConcurrentLinkedQueue<java.util.concurrent.CompletableFuture<Void>>
        unconfirmed = new java.util.concurrent.ConcurrentLinkedQueue<>();
    return new Publisher() {
      @Override
      public void publish(int bucket, byte[] body) {
        Message m = Message.builder(1).put("bucket", bucket).body(body).build();
        if (!reliable) {
          c.publish(m);
          return;
        }
        unconfirmed.add(c.sendReliable(m));
        // Forget what is confirmed, oldest first, so that the queue holds what is in flight.
        for (var f = unconfirmed.peek(); f != null && f.isDone(); f = unconfirmed.peek()) {
          unconfirmed.poll();
        }
      }

      @Override
      public void flush() throws Exception {
        c.flush().get(10, TimeUnit.SECONDS);
        if (reliable) {
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          for (var f = unconfirmed.poll(); f != null; f = unconfirmed.poll()) {
            f.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
          }
        }
      }

      @Override
      public void close() {
        c.close();
      }
    };
  }

  @Override
  public long refused() {
    return refused.sum();
  }

  @Override
  public List<ChildProcess> processes() {
    return List.copyOf(routers);
  }

  @Override
  public void close() {
    synchronized (clients) {
      clients.forEach(BdrpClient::close);
      clients.clear();
    }
    if (group != null) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
    if (callbacks != null) {
      callbacks.shutdown();
    }
    routers.forEach(ChildProcess::close);
    routers.clear();
  }
}
