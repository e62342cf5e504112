package io.bdrp.testbed.peers;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
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
import java.util.concurrent.TimeUnit;

/**
 * bdrp: one {@code bdrp router} process per server (the real command, from a generated config
 * file), clients from the bdrp client library sharing one two-thread event-loop group. A bucket
 * subscription is the predicate {@code bucket = N}; taking everything is {@code bucket >= 0}.
 *
 * <p>With TLS, a development CA made for the run gives every router a certificate: client ports
 * speak TLS 1.3, router links mutual TLS, and clients trust the CA.
 */
public final class BdrpSystem implements PubSubSystem {
  /** The router process: the router module's own main (a dependency of this module). */
  static final String MAIN = io.bdrp.router.RouterMain.class.getName();

  private final List<String> jvmOptions;
  private final boolean tls;
  private final String linkTransport;
  private DevCa ca;
  private final List<ChildProcess> routers = new ArrayList<>();
  private final List<BdrpClient> clients = new ArrayList<>();
  private int[] clientPorts = new int[0];
  private EventLoopGroup group;

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
    if (!List.of("tcp", "udp", "shm").contains(linkTransport)) {
      throw new IllegalArgumentException(
          "--link-transports: tcp, udp or shm, got '" + linkTransport + "'");
    }
    this.jvmOptions = List.copyOf(jvmOptions);
    this.tls = tls;
    this.linkTransport = linkTransport;
  }

  @Override
  public String name() {
    return "bdrp" + (linkTransport.equals("tcp") ? "" : "+" + linkTransport) + (tls ? "+tls" : "");
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
      if (i + 1 < servers) {
        y.append("  - router: ").append(i + 1).append('\n');
        y.append("    address: 127.0.0.1:").append(routerPorts[i + 1]).append('\n');
        y.append("    transport: ").append(linkTransport).append('\n');
      }
      if (servers == 1) {
        y.setLength(y.length() - "neighbours:\n".length());
      }
      if (tls) {
        y.append("tls:\n");
        y.append("  cert: ").append(ca.cert(i).toAbsolutePath()).append('\n');
        y.append("  key: ").append(ca.key(i).toAbsolutePath()).append('\n');
        y.append("  ca: ").append(ca.ca().toAbsolutePath()).append('\n');
      }
      Path config = dir.resolve("bdrp-router-" + i + ".yaml");
      Files.createDirectories(dir);
      Files.writeString(config, y.toString());
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
  }

  private BdrpClient connect(int server, String name, java.util.function.Consumer<Message> h)
      throws Exception {
    BdrpClient.Builder b =
        BdrpClient.builder()
            .router("127.0.0.1", clientPorts[server])
            .name(name)
            .eventLoopGroup(group)
            .reconnect(false)
            .onMessage(h);
    if (tls) {
      b.tls(ca.ca());
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
    BdrpClient c =
        connect(
            server,
            name,
            m -> {
              java.nio.ByteBuffer b = m.bodyBuffer();
              receiver.received(b.getLong(0), b.get(8));
            });
    c.setPredicate(Predicate.parse(bucket == ALL ? "bucket >= 0" : "bucket = " + bucket))
        .get(10, TimeUnit.SECONDS);
    return c;
  }

  @Override
  public Publisher publisher(int server, String name) throws Exception {
    BdrpClient c = connect(server, name, m -> {});
    return new Publisher() {
      @Override
      public void publish(int bucket, byte[] body) {
        c.send(Message.builder().put("bucket", bucket).body(body).build());
      }

      @Override
      public void flush() throws Exception {
        c.flush().get(10, TimeUnit.SECONDS);
      }

      @Override
      public void close() {
        c.close();
      }
    };
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
    routers.forEach(ChildProcess::close);
    routers.clear();
  }
}
