package io.bdrp.testbed.wan;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.net.NamespaceFederation;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * bdrp on the emulated network: a {@code bdrp router} per namespace, the client library here. With
 * the reliable service every client publishes with {@code BdrpClient.sendReliable} (its default
 * window of unconfirmed messages), and the run counts the confirmations.
 */
public final class BdrpWan implements WanSystem {
  /** The services the clients can publish with ({@code --service}). */
  public static final List<String> SERVICES = List.of("best-effort", "reliable");

  /**
   * How long the run may wait for confirmations after its grace period: the routers' retention of a
   * reliable message (limits.reliableRetentionMs, one minute), after which its ingress reports the
   * routers it did not reach, and 10 s.
   */
  static final int CONFIRMATION_SECONDS = 70;

  private final List<String> jvmOptions;
  private final String linkTransport;
  private final String fastPath;
  private final Double broadcastFraction;
  private final boolean tls;
  private final boolean reliable;
  private final LongAdder sent = new LongAdder();
  private final LongAdder confirmed = new LongAdder();
  private final LongAdder unreached = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private NamespaceFederation federation;
  private Path dir;
  private int routers;
  private final List<BdrpClient> clients = new ArrayList<>();
  private EventLoopGroup io;
  private ExecutorService callbacks;

  /**
   * Routers run with {@code jvmOptions}; their links carry DATA over {@code linkTransport} ({@code
   * tcp} or {@code udp}).
   */
  public BdrpWan(List<String> jvmOptions, String linkTransport) {
    this(jvmOptions, linkTransport, "jvm", null);
  }

  /**
   * As {@link #BdrpWan(List, String)}, with the routers' {@code fastPath} ({@code jvm} or {@code
   * ebpf}: transit DATA from UDP links forwarded in the kernel, which needs {@code udp} links) and
   * {@code routing.broadcastFraction} (null: the default; 1: messages always go by D).
   */
  public BdrpWan(
      List<String> jvmOptions, String linkTransport, String fastPath, Double broadcastFraction) {
    this(jvmOptions, linkTransport, fastPath, broadcastFraction, false);
  }

  /**
   * As {@link #BdrpWan(List, String, String, Double)}; with {@code tls}, client ports speak TLS and
   * router links mutual TLS, with certificates from a development CA made for the run.
   */
  public BdrpWan(
      List<String> jvmOptions,
      String linkTransport,
      String fastPath,
      Double broadcastFraction,
      boolean tls) {
    this(jvmOptions, linkTransport, fastPath, broadcastFraction, tls, "best-effort");
  }

  /**
   * As {@link #BdrpWan(List, String, String, Double, boolean)}; the clients publish with {@code
   * service}, one of {@link #SERVICES}.
   */
  public BdrpWan(
      List<String> jvmOptions,
      String linkTransport,
      String fastPath,
      Double broadcastFraction,
      boolean tls,
      String service) {
    checkOptions(linkTransport, fastPath, broadcastFraction);
    checkService(service);
    this.jvmOptions = List.copyOf(jvmOptions);
    this.linkTransport = linkTransport;
    this.fastPath = fastPath;
    this.broadcastFraction = broadcastFraction;
    this.tls = tls;
    this.reliable = service.equals("reliable");
  }

  /** Checks {@code --service}: one of {@link #SERVICES}. */
  public static void checkService(String service) {
    if (!SERVICES.contains(service)) {
      throw new IllegalArgumentException(
          "--service: expected " + String.join(" or ", SERVICES) + ", got '" + service + "'");
    }
  }

  /**
   * Checks the options that shape bdrp's routers on the testbed ({@code --link-transport}, {@code
   * --fast-path}, {@code --broadcast-fraction}), naming the option at fault.
   */
  public static void checkOptions(String linkTransport, String fastPath, Double broadcastFraction) {
    if (!linkTransport.equals("tcp") && !linkTransport.equals("udp")) {
      throw new IllegalArgumentException(
          "--link-transport: expected tcp or udp, got '" + linkTransport + "'");
    }
    if (!fastPath.equals("jvm") && !fastPath.equals("ebpf")) {
      throw new IllegalArgumentException(
          "--fast-path: expected jvm or ebpf, got '" + fastPath + "'");
    }
    if (fastPath.equals("ebpf") && !linkTransport.equals("udp")) {
      throw new IllegalArgumentException(
          "--fast-path ebpf forwards DATA that arrives by UDP: it needs --link-transport udp");
    }
    if (broadcastFraction != null && !(broadcastFraction > 0 && broadcastFraction <= 1)) {
      throw new IllegalArgumentException(
          "--broadcast-fraction must be above 0 and at most 1 (1: every message by D), got "
              + broadcastFraction);
    }
  }

  @Override
  public String name() {
    return "bdrp";
  }

  @Override
  public String service() {
    return reliable ? "reliable" : "best-effort";
  }

  @Override
  public long unconfirmed() {
    return reliable ? sent.sum() - confirmed.sum() - unreached.sum() - failed.sum() : 0;
  }

  @Override
  public int confirmationSeconds() {
    return reliable ? CONFIRMATION_SECONDS : 0;
  }

  @Override
  public Confirmations confirmations() {
    return reliable
        ? new Confirmations(sent.sum(), confirmed.sum(), unreached.sum(), failed.sum())
        : null;
  }

  /** Every router's link counters, read now (the routers keep running). */
  @Override
  public FrameBytes frameBytes() throws IOException, InterruptedException {
    List<String> metrics = new ArrayList<>();
    for (int r = 0; r < routers; r++) {
      metrics.add(federation.metrics(r));
    }
    return FrameBytes.of(metrics);
  }

  @Override
  public void start(Emulator.Network net, Path dir, int diameter) throws Exception {
    this.dir = dir;
    this.routers = net.routers().size();
    federation =
        NamespaceFederation.start(
            net,
            dir,
            jvmOptions,
            NamespaceFederation.routerYaml(
                broadcastFraction == null
                    ? Map.of()
                    : Map.of("broadcastFraction", broadcastFraction),
                fastPath),
            linkTransport,
            tls);
    io = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    callbacks = Executors.newFixedThreadPool(2);
  }

  @Override
  public Client client(int server, String name, Predicate p, Consumer<Message> receiver)
      throws Exception {
    // Clients share the I/O threads and two callback threads; each client's callbacks stay in
    // order because the router delivers in order and a batch is one task.
    BdrpClient.Builder b =
        BdrpClient.builder()
            .router(federation.clientAddress(server))
            .name(name)
            .eventLoopGroup(io)
            .callbackExecutor(new SerialExecutor(callbacks))
            .reconnect(false)
            .onMessage(receiver);
    if (federation.ca() != null) {
      b.tls(federation.ca().ca());
    }
    BdrpClient c = b.connect();
    clients.add(c);
    c.setPredicate(p).get(30, TimeUnit.SECONDS);
    return new Client() {
      @Override
      public void send(Message m) {
        if (!reliable) {
          c.send(m);
          return;
        }
        sent.increment();
        c.sendReliable(m)
            .whenComplete(
                (ok, error) -> {
                  if (error == null) {
                    confirmed.increment();
                  } else if (error instanceof BdrpClient.UnreachedException) {
                    unreached.increment();
                  } else {
                    failed.increment();
                  }
                });
      }

      @Override
      public void close() {
        c.close();
      }
    };
  }

  @Override
  public List<ChildProcess> processes() {
    return federation == null ? List.of() : federation.processes();
  }

  @Override
  public void close() {
    clients.forEach(BdrpClient::close);
    clients.clear();
    if (io != null) {
      io.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
    if (callbacks != null) {
      callbacks.shutdownNow();
    }
    if (federation != null) {
      saveMetrics();
      federation.close();
    }
  }

  /**
   * Writes each router's metrics as they stand at the end of the run to {@code router-N.metrics},
   * beside its log: per-link copies and drops, drops by reason, UDP counters.
   */
  private void saveMetrics() {
    for (int r = 0; r < routers; r++) {
      try {
        Files.writeString(dir.resolve("router-" + r + ".metrics"), federation.metrics(r));
      } catch (IOException e) {
        System.err.println("bdrp: router " + r + "'s metrics not saved: " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
