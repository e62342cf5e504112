package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.ClientTls;
import io.bdrp.router.security.RouterTls;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.topologies.Topology;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A small scenario DSL: a federation of in-process routers on 127.0.0.1, one per router of a
 * topology, on ports chosen by the system, with clients attached; everything is closed by {@link
 * #close()}.
 */
public final class Federation implements AutoCloseable {
  /**
   * Timers for tests: adjacencies form at once (a hello is answered right away), and a dead
   * interval of seconds keeps a loaded two-core machine's pauses from looking like failures.
   */
  static final RoutingConfig FAST =
      RoutingConfig.builder()
          .helloIntervalMs(250)
          .deadIntervalMs(3_000)
          .updateIntervalMs(1_000)
          .routeExpiryMs(4_000)
          .sourceGcMs(20_000)
          .predicateExpiryMs(10_000)
          .maxRouters(64)
          .build();

  final Topology topology;

  /**
   * Router numbers are node numbers times this: 1 numbers them 0..n-1; a larger stride spreads
   * them, so that D spans many words while naming few routers.
   */
  final int stride;

  final List<Router> routers = new ArrayList<>();
  final List<BdrpClient> clients = new ArrayList<>();
  private final TestCerts ca;

  /** Starts one router per node of {@code t} and links them as the topology says, over TCP. */
  Federation(Topology t) throws InterruptedException {
    this(t, RouterConfig.LinkTransport.TCP);
  }

  /**
   * Starts one router per node of {@code t} and links them as the topology says, every link's DATA
   * over {@code transport}.
   */
  Federation(Topology t, RouterConfig.LinkTransport transport) throws InterruptedException {
    this(t, transport, null);
  }

  /**
   * As {@link #Federation(Topology, RouterConfig.LinkTransport)}; with {@code ca} (or null), every
   * router has a certificate from it naming its number and 127.0.0.1, its client port speaks TLS
   * and its links mutual TLS, and {@link #client} trusts the CA.
   */
  Federation(Topology t, RouterConfig.LinkTransport transport, TestCerts ca)
      throws InterruptedException {
    this(t, transport, ca, c -> c);
  }

  /**
   * As {@link #Federation(Topology, RouterConfig.LinkTransport, TestCerts)}, each router's
   * configuration passed through {@code adjust} before it starts.
   */
  Federation(
      Topology t,
      RouterConfig.LinkTransport transport,
      TestCerts ca,
      java.util.function.UnaryOperator<RouterConfig> adjust)
      throws InterruptedException {
    this(t, transport, ca, adjust, 1);
  }

  /**
   * As {@link #Federation(Topology, RouterConfig.LinkTransport)}, node i of {@code t} numbered
   * {@code i * stride} ({@code maxRouters} raised to fit); {@link #routers} is still by node.
   */
  static Federation spread(Topology t, RouterConfig.LinkTransport transport, int stride)
      throws InterruptedException {
    return new Federation(t, transport, null, c -> c, stride);
  }

  private Federation(
      Topology t,
      RouterConfig.LinkTransport transport,
      TestCerts ca,
      java.util.function.UnaryOperator<RouterConfig> adjust,
      int stride)
      throws InterruptedException {
    this.topology = t;
    this.stride = stride;
    int maxRouters = Math.max(FAST.maxRouters(), (t.nodeCount() - 1) * stride + 1);
    RoutingConfig routing = FAST.toBuilder().maxRouters(maxRouters).build();
    this.ca = ca;
    try {
      for (int r = 0; r < t.nodeCount(); r++) {
        List<RouterConfig.Neighbour> ns = new ArrayList<>();
        for (int n : t.neighbours(r)) {
          ns.add(new RouterConfig.Neighbour(n * stride, null, 1, transport));
        }
        InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
        RouterConfig config =
            new RouterConfig(
                r * stride,
                1_000 + r,
                any,
                any,
                null,
                ns,
                routing,
                BloomParameters.DEFAULT,
                RouterLimits.DEFAULT,
                "secret");
        if (ca != null) {
          Path[] leaf = certificate(ca, r * stride);
          config =
              config
                  .withRouterTls(RouterTls.load(r, leaf[0], leaf[1], ca.cert()))
                  .withClientTls(ClientTls.load(leaf[0], leaf[1]));
        }
        routers.add(Router.start(adjust.apply(config)));
      }
      for (int a = 0; a < t.nodeCount(); a++) {
        for (int b : t.neighbours(a)) {
          if (a < b) {
            routers.get(a).connect(b * stride, routers.get(b).routerAddress());
          }
        }
      }
    } catch (RuntimeException | InterruptedException e) {
      close();
      throw e;
    }
  }

  /** Router {@code r}'s certificate and key from {@code ca}. */
  private static Path[] certificate(TestCerts ca, int r) throws InterruptedException {
    try {
      return ca.leaf("router-" + r, "URI:" + RouterTls.URN + r + ",IP:127.0.0.1");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Waits until DATA to every neighbour of every router goes by UDP. */
  Federation awaitUdp() throws InterruptedException {
    await(
        "DATA over UDP on every link",
        () -> {
          for (int r = 0; r < routers.size(); r++) {
            for (int n : topology.neighbours(r)) {
              if (!routers.get(r).view().dataOverUdp(n * stride)) {
                return false;
              }
            }
          }
          return true;
        });
    return this;
  }

  /** Waits until DATA to every neighbour of every router goes into a shared-memory ring. */
  Federation awaitShm() throws InterruptedException {
    await(
        "DATA through shared-memory rings on every link",
        () -> {
          for (int r = 0; r < routers.size(); r++) {
            for (int n : topology.neighbours(r)) {
              if (routers.get(r).view().ringTo(n * stride) == null) {
                return false;
              }
            }
          }
          return true;
        });
    return this;
  }

  /** Waits until DATA to every neighbour of every router goes by {@code transport}. */
  Federation awaitDataBy(RouterConfig.LinkTransport transport) throws InterruptedException {
    await(
        "DATA by " + transport + " on every link",
        () -> {
          for (int r = 0; r < routers.size(); r++) {
            for (int n : topology.neighbours(r)) {
              if (routers.get(r).view().dataBy(n * stride) != transport) {
                return false;
              }
            }
          }
          return true;
        });
    return this;
  }

  /** {@code bdrp_set_predicate_total} of router {@code r}: predicates its hosts have set. */
  long predicateChanges(int r) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^bdrp_set_predicate_total (\\d+)(?:\\.0)?$")
            .matcher(routers.get(r).metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** {@code bdrp_rdma_frames_total{direction}} summed over every router. */
  long rdmaFrames(String direction) {
    long sum = 0;
    java.util.regex.Pattern p =
        java.util.regex.Pattern.compile(
            "(?m)^bdrp_rdma_frames_total\\{direction=\"" + direction + "\"\\} (\\d+)(?:\\.0)?$");
    for (Router r : routers) {
      java.util.regex.Matcher m = p.matcher(r.metricsText());
      sum += m.find() ? Long.parseLong(m.group(1)) : 0;
    }
    return sum;
  }

  /** Frames written into shared-memory rings by every router so far. */
  long ringFrames() {
    long sum = 0;
    for (int r = 0; r < routers.size(); r++) {
      for (int n : topology.neighbours(r)) {
        var c = routers.get(r).view().ringTo(n * stride);
        sum += c == null ? 0 : c.frames();
      }
    }
    return sum;
  }

  /** Waits until every router has a route to every other one. */
  Federation awaitRoutes() throws InterruptedException {
    int n = routers.size();
    await(
        "routes between all routers",
        () -> routers.stream().allMatch(r -> r.view().reachable().length == n - 1));
    return this;
  }

  /**
   * Waits until every router's broadcast tree reaches every other router: following each router's
   * children for a source from that source visits them all. Routes come first; a router learns that
   * a neighbour takes it as its next hop towards a source one update later, and a broadcast sent
   * before then misses the routers below that neighbour.
   */
  Federation awaitTrees() throws InterruptedException {
    int n = routers.size();
    await(
        "every broadcast tree to span the network",
        () -> {
          int[][][] children = new int[n][][];
          for (int r = 0; r < n; r++) {
            Router router = routers.get(r);
            children[r] =
                router
                    .loop()
                    .submit(
                        () -> {
                          int[][] c = new int[n][];
                          for (int s = 0; s < n; s++) {
                            c[s] = router.node().routes().childrenOf(s);
                          }
                          return c;
                        })
                    .syncUninterruptibly()
                    .getNow();
          }
          for (int s = 0; s < n; s++) {
            boolean[] seen = new boolean[n];
            java.util.ArrayDeque<Integer> todo = new java.util.ArrayDeque<>(List.of(s));
            seen[s] = true;
            int count = 1;
            while (!todo.isEmpty()) {
              for (int c : children[todo.pop()][s]) {
                if (c < n && !seen[c]) {
                  seen[c] = true;
                  count++;
                  todo.push(c);
                }
              }
            }
            if (count != n) {
              return false;
            }
          }
          return true;
        });
    return this;
  }

  /** Waits until every router holds every router's current aggregate. */
  void awaitPredicates() throws InterruptedException {
    await("every router's predicate known everywhere", () -> RouterView.predicatesAgree(routers));
  }

  /** A connected client of router {@code r}. */
  BdrpClient client(int r, String name) throws Exception {
    BdrpClient.Builder b = BdrpClient.builder().router(routers.get(r).clientAddress()).name(name);
    if (ca != null) {
      b.tls(ca.cert());
    }
    BdrpClient c = b.connect();
    clients.add(c);
    return c;
  }

  /** A router 0 on loopback ports the system picks, without neighbours, with fast timers. */
  public static RouterConfig loneRouter() {
    return new RouterConfig(
        0,
        System.currentTimeMillis(),
        java.net.InetSocketAddress.createUnresolved("127.0.0.1", 0),
        java.net.InetSocketAddress.createUnresolved("127.0.0.1", 0),
        null,
        java.util.List.of(),
        FAST,
        io.bdrp.encoding.bloom.BloomParameters.DEFAULT,
        RouterLimits.DEFAULT,
        null);
  }

  /**
   * Router 0 on loopback ports the system picks, with fast timers, router 1 its one configured
   * neighbour and "secret" the router token: a raw socket can then play router 1.
   */
  static RouterConfig routerWithNeighbourOne() {
    InetSocketAddress any = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    return new RouterConfig(
        0,
        1,
        any,
        any,
        null,
        List.of(new RouterConfig.Neighbour(1, null, 1)),
        FAST,
        BloomParameters.DEFAULT,
        RouterLimits.DEFAULT,
        "secret");
  }

  /** {@code bdrp_link_refused_total{parameter}} of router {@code r}. */
  static long linkRefused(Router r, String parameter) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "(?m)^bdrp_link_refused_total\\{parameter=\""
                    + java.util.regex.Pattern.quote(parameter)
                    + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /** Polls {@code condition} every 10 ms until it holds, failing after 20 s. */
  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  @Override
  public void close() {
    for (BdrpClient c : clients) {
      c.close();
    }
    for (Router r : routers) {
      r.close();
    }
  }
}
