package io.bdrp.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.transport.UdpProtection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The configuration of one router daemon: who it is, where it listens, its neighbours, the routing
 * timers, the network's Bloom parameters and the limits that bound its memory. Immutable and
 * validated when built; an error names the field by its path in the file ({@code
 * neighbours[2].cost}). Read from YAML with {@link #load(Path)}; see {@code
 * docs/router-example.yaml} and {@code docs/router.md} for an annotated example.
 *
 * @param router this router's number, unique in the network
 * @param epoch the epoch of this run; larger than that of any earlier run of this router number (by
 *     default the wall clock in milliseconds at start)
 * @param clientListen address for client sessions
 * @param routerListen address for sessions from neighbouring routers
 * @param metricsListen address of the HTTP metrics endpoint, or null for none
 * @param udpListen address of the UDP socket for DATA datagrams from neighbours whose links use
 *     {@link LinkTransport#UDP}, or null for the host of {@code routerListen} and its port number
 *     (bound only when some neighbour uses UDP)
 * @param neighbours the configured links
 * @param routing timers and limits of the routing state machines
 * @param bloom Bloom parameters; every router of a network must use the same
 * @param limits queue and size limits
 * @param routerToken shared secret that neighbouring routers present in their hello, or null
 * @param fastPath where transit DATA from UDP links is forwarded: in the JVM, or in the kernel by
 *     the eBPF sidecar when it can run (otherwise the router says why and forwards in the JVM)
 * @param clientAuth who may use the client port and with which permissions ({@link
 *     ClientAuth#OPEN}: everyone, everything)
 * @param clientTls TLS on the client port, or null for plain TCP
 * @param routerTls mutual TLS on router links, or null for plain TCP
 * @param metricsAccess authentication and TLS of the metrics endpoint, or null for neither
 * @param udpProtection what protects DATA datagrams on UDP links ({@code auth.udp}; by default a
 *     tag and a sequence number on each, see docs/security.md)
 */
public record RouterConfig(
    int router,
    long epoch,
    InetSocketAddress clientListen,
    InetSocketAddress routerListen,
    InetSocketAddress metricsListen,
    InetSocketAddress udpListen,
    List<Neighbour> neighbours,
    RoutingConfig routing,
    BloomParameters bloom,
    Limits limits,
    String routerToken,
    FastPath fastPath,
    ClientAuth clientAuth,
    ClientTls clientTls,
    RouterTls routerTls,
    MetricsAccess metricsAccess,
    UdpProtection udpProtection) {

  /** Where transit DATA arriving over UDP is forwarded. */
  public enum FastPath {
    /** In the router's JVM, like everything else. */
    JVM,
    /**
     * In the kernel, by a TC ingress eBPF program the router loads and keeps in sync (see
     * docs/router.md); the JVM when the program cannot be loaded.
     */
    EBPF
  }

  /** How DATA travels on a link; control (hellos, routes, advertisements) always uses TCP. */
  public enum LinkTransport {
    /** DATA frames on the link's TCP session. */
    TCP,
    /**
     * DATA frames one per UDP datagram, to the UDP port the neighbour announces in its hello; a
     * frame larger than {@link Limits#maxDatagramBytes()} goes over TCP.
     */
    UDP,
    /**
     * DATA frames written into a ring in shared memory that the neighbour, on the same host, reads
     * (its file in {@code /dev/shm} is named by the neighbour's number and epoch); control stays on
     * TCP, and so do frames larger than a quarter of the ring. Falls back to TCP, with a WARN, when
     * the neighbour's ring cannot be opened.
     */
    SHM,
    /**
     * DATA frames written with RDMA into a ring in the neighbour's memory (the sidecar's verbs
     * backend); needs an RDMA device. Until the router exchanges the ring's endpoints with its
     * neighbour, such links carry DATA over TCP and the router says why at start.
     */
    RDMA
  }

  /**
   * A configured link.
   *
   * @param router the neighbour's router number
   * @param address where to connect to it, or null to wait for it to connect
   * @param cost the link cost (1 to 65534)
   * @param transport how this router sends DATA to the neighbour
   */
  public record Neighbour(
      int router, InetSocketAddress address, int cost, LinkTransport transport) {
    public Neighbour {
      java.util.Objects.requireNonNull(transport, "transport");
    }

    /** A neighbour whose DATA travels over TCP. */
    public Neighbour(int router, InetSocketAddress address, int cost) {
      this(router, address, cost, LinkTransport.TCP);
    }
  }

  /**
   * Limits that bound what a router holds in memory.
   *
   * @param maxFrameBytes largest frame accepted from a client or router
   * @param linkHighWaterBytes a link's output buffer above which it is not writable: data copies to
   *     it are dropped and counted until it drains below the low water mark
   * @param linkLowWaterBytes see linkHighWaterBytes
   * @param hostHighWaterBytes as linkHighWaterBytes, for a client session's deliveries
   * @param hostLowWaterBytes see hostHighWaterBytes
   * @param maxClients largest number of client sessions at once
   * @param maxDatagramBytes largest DATA frame sent as one UDP datagram (the default fits a
   *     1500-byte MTU after the IPv4 and UDP headers); larger frames go over TCP
   * @param udpReceiveBufferBytes receive buffer asked for the UDP socket (the kernel caps it at
   *     net.core.rmem_max unless the router runs as root); datagrams that overflow it are lost and
   *     counted
   * @param udpSendBufferBytes send buffer of the UDP socket: it bounds the DATA this router keeps
   *     in the kernel's link queues; when it is full the socket pushes back, and copies wait in the
   *     router and are dropped and counted above {@code linkHighWaterBytes}, as on TCP, rather than
   *     lost unseen in a full link queue
   * @param helloTimeoutMs a connection, on either port, that has not completed its HELLO this long
   *     after it opened is closed ({@code TIMEOUT}); until then it may send only small frames
   *     ({@link #HANDSHAKE_FRAME_BYTES})
   * @param maxHandshakes connections accepted on one port that have not completed their HELLO; more
   *     are refused ({@code OVERLOADED}) until some complete or time out
   * @param slowConsumerMs a client session whose output stays above its high water mark this long
   *     is disconnected as a slow consumer ({@code SLOW_CONSUMER}); meanwhile its requests are not
   *     read, so its replies cannot pile up
   * @param inboundBufferBytes what the partial frames of all the connections of one port may hold
   *     together (each holds at most one frame); a frame that would exceed it ends its session
   *     ({@code OVERLOADED})
   * @param linkControlPercent the share, in percent of {@code linkHighWaterBytes}, that control
   *     frames may hold of a link's output buffer; more wait in the router, so that control cannot
   *     crowd out DATA on a full link, nor DATA control
   * @param ringBytes capacity of the shared-memory ring this router makes for each neighbour whose
   *     link is {@code transport: shm} (a power of two); a full ring drops DATA copies and counts
   *     them, as a link's full output buffer does
   * @param ringWatermarkBytes bytes the reader of a ring consumes before it tells the writer
   *     (publishes its head); it also does so before it sleeps and when the writer waits
   * @param hosts what one client, and the clients of one user, may ask of the router
   */
  public record Limits(
      int maxFrameBytes,
      int linkHighWaterBytes,
      int linkLowWaterBytes,
      int hostHighWaterBytes,
      int hostLowWaterBytes,
      int maxClients,
      int maxDatagramBytes,
      int udpReceiveBufferBytes,
      int udpSendBufferBytes,
      int helloTimeoutMs,
      int maxHandshakes,
      int slowConsumerMs,
      int inboundBufferBytes,
      int linkControlPercent,
      int ringBytes,
      int ringWatermarkBytes,
      HostLimits hosts) {
    /** The defaults. */
    public static final Limits DEFAULT =
        new Limits(
            1 << 20,
            8 << 20,
            4 << 20,
            4 << 20,
            2 << 20,
            10_000,
            1472,
            16 << 20,
            512 << 10,
            5_000,
            256,
            10_000,
            64 << 20,
            25,
            8 << 20,
            1 << 20,
            HostLimits.DEFAULT);

    /** These limits with {@code hosts} in place of theirs. */
    public Limits withHosts(HostLimits hosts) {
      return new Limits(
          maxFrameBytes,
          linkHighWaterBytes,
          linkLowWaterBytes,
          hostHighWaterBytes,
          hostLowWaterBytes,
          maxClients,
          maxDatagramBytes,
          udpReceiveBufferBytes,
          udpSendBufferBytes,
          helloTimeoutMs,
          maxHandshakes,
          slowConsumerMs,
          inboundBufferBytes,
          linkControlPercent,
          ringBytes,
          ringWatermarkBytes,
          hosts);
    }

    public Limits {
      java.util.Objects.requireNonNull(hosts, "hosts");
      if (ringBytes < 4096 || Integer.bitCount(ringBytes) != 1) {
        throw new IllegalArgumentException(
            "limits.ringBytes: a power of two from 4096, got " + ringBytes);
      }
      if (ringWatermarkBytes < 0 || ringWatermarkBytes > ringBytes) {
        throw new IllegalArgumentException(
            "limits.ringWatermarkBytes: 0 to limits.ringBytes ("
                + ringBytes
                + "), got "
                + ringWatermarkBytes);
      }
    }

    /**
     * The largest frame a connection may send before its HELLO is accepted: room for a HELLO with
     * the longest name and token.
     */
    public static final int HANDSHAKE_FRAME_BYTES = 4096;
  }

  /**
   * What the clients of a router may ask of it, bounded by what it costs the router and every other
   * router of the federation (each holds this router's aggregate predicate). A request beyond a
   * bound is refused with an ERROR that names the limit, and counted ({@code
   * bdrp_client_requests_refused_total{reason}}); the session stays.
   *
   * <p>Filters are counted as the encoder makes them, before the minimal set: one per alternative
   * of each conjunction (an {@code exists} without a type has one alternative per type), so that
   * the bound is checked before any costly work.
   *
   * @param maxFiltersPerHost most filters one client's predicate may encode to
   * @param maxFiltersPerUser most filters the predicates of all the sessions of one user may encode
   *     to together (users named in {@code auth.clients}; anonymous clients are bounded per host
   *     and per router)
   * @param predicateChangesPerSecond SET_PREDICATEs one session may make per second, on average,
   *     with bursts of as many; more are refused ({@code OVERLOADED}), so that no client makes
   *     every router of the federation re-index more often than this
   * @param maxSessionsPerUser client sessions one named user may hold at once; more are refused at
   *     HELLO ({@code OVERLOADED})
   * @param keepAliveMs a client session that sends nothing for this long is sent a PING; if it
   *     still sends nothing (not even the PONG) for as long again, it is closed ({@code TIMEOUT}),
   *     so that silent sessions cannot hold {@code maxClients} for good
   */
  public record HostLimits(
      int maxFiltersPerHost,
      int maxFiltersPerUser,
      int predicateChangesPerSecond,
      int maxSessionsPerUser,
      int keepAliveMs) {
    /** The defaults. */
    public static final HostLimits DEFAULT = new HostLimits(4096, 16_384, 10, 1000, 60_000);

    public HostLimits {
      positive("limits.maxFiltersPerHost", maxFiltersPerHost);
      positive("limits.maxFiltersPerUser", maxFiltersPerUser);
      positive("limits.predicateChangesPerSecond", predicateChangesPerSecond);
      positive("limits.maxSessionsPerUser", maxSessionsPerUser);
      positive("limits.keepAliveMs", keepAliveMs);
    }

    private static void positive(String knob, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(knob + ": at least 1, got " + value);
      }
    }
  }

  public RouterConfig {
    if (metricsAccess != null && metricsAccess.tls() && clientTls == null) {
      throw new IllegalArgumentException(
          "tls.metrics: true needs tls.cert and tls.key: the metrics port serves the client port's"
              + " certificate");
    }
    neighbours = List.copyOf(neighbours);
    java.util.Objects.requireNonNull(fastPath, "fastPath");
    java.util.Objects.requireNonNull(clientAuth, "clientAuth");
    java.util.Objects.requireNonNull(udpProtection, "udpProtection");
  }

  /** A configuration whose datagrams carry a tag ({@link UdpProtection#MAC}, the default). */
  public RouterConfig(
      int router,
      long epoch,
      InetSocketAddress clientListen,
      InetSocketAddress routerListen,
      InetSocketAddress metricsListen,
      InetSocketAddress udpListen,
      List<Neighbour> neighbours,
      RoutingConfig routing,
      BloomParameters bloom,
      Limits limits,
      String routerToken,
      FastPath fastPath,
      ClientAuth clientAuth,
      ClientTls clientTls,
      RouterTls routerTls,
      MetricsAccess metricsAccess) {
    this(
        router,
        epoch,
        clientListen,
        routerListen,
        metricsListen,
        udpListen,
        neighbours,
        routing,
        bloom,
        limits,
        routerToken,
        fastPath,
        clientAuth,
        clientTls,
        routerTls,
        metricsAccess,
        UdpProtection.MAC);
  }

  /** A configuration whose client port serves everyone ({@link ClientAuth#OPEN}). */
  public RouterConfig(
      int router,
      long epoch,
      InetSocketAddress clientListen,
      InetSocketAddress routerListen,
      InetSocketAddress metricsListen,
      InetSocketAddress udpListen,
      List<Neighbour> neighbours,
      RoutingConfig routing,
      BloomParameters bloom,
      Limits limits,
      String routerToken,
      FastPath fastPath) {
    this(
        router,
        epoch,
        clientListen,
        routerListen,
        metricsListen,
        udpListen,
        neighbours,
        routing,
        bloom,
        limits,
        routerToken,
        fastPath,
        ClientAuth.OPEN,
        null,
        null,
        null);
  }

  /** This configuration with {@code auth} for the client port. */
  public RouterConfig withClientAuth(ClientAuth auth) {
    return withSecurity(auth, clientTls, routerTls, metricsAccess);
  }

  /** This configuration with {@code tls} on the client port (null: plain TCP). */
  public RouterConfig withClientTls(ClientTls tls) {
    return withSecurity(clientAuth, tls, routerTls, metricsAccess);
  }

  /** This configuration with {@code tls} on router links (null: plain TCP). */
  public RouterConfig withRouterTls(RouterTls tls) {
    return withSecurity(clientAuth, clientTls, tls, metricsAccess);
  }

  /** {@link #routerToken()} as UTF-8, empty when there is none. */
  public byte[] routerTokenBytes() {
    return routerToken == null
        ? new byte[0]
        : routerToken.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** This configuration with {@code p} protecting its datagrams. */
  public RouterConfig withUdpProtection(UdpProtection p) {
    return with(routing, limits, clientAuth, clientTls, routerTls, metricsAccess, p);
  }

  /** This configuration with {@code routing} in place of its own. */
  public RouterConfig withRouting(RoutingConfig routing) {
    return with(routing, limits, clientAuth, clientTls, routerTls, metricsAccess, udpProtection);
  }

  /** This configuration with {@code limits} in place of its own. */
  public RouterConfig withLimits(Limits limits) {
    return with(routing, limits, clientAuth, clientTls, routerTls, metricsAccess, udpProtection);
  }

  private RouterConfig withSecurity(
      ClientAuth auth, ClientTls clients, RouterTls routers, MetricsAccess metrics) {
    return with(routing, limits, auth, clients, routers, metrics, udpProtection);
  }

  /** This configuration with the parts that callers replace; the rest as it is. */
  private RouterConfig with(
      RoutingConfig routing,
      Limits limits,
      ClientAuth auth,
      ClientTls clients,
      RouterTls routers,
      MetricsAccess metrics,
      UdpProtection udp) {
    return new RouterConfig(
        router,
        epoch,
        clientListen,
        routerListen,
        metricsListen,
        udpListen,
        neighbours,
        routing,
        bloom,
        limits,
        routerToken,
        fastPath,
        auth,
        clients,
        routers,
        metrics,
        udp);
  }

  /** A configuration that forwards in the JVM and whose UDP socket, if any, takes the defaults. */
  public RouterConfig(
      int router,
      long epoch,
      InetSocketAddress clientListen,
      InetSocketAddress routerListen,
      InetSocketAddress metricsListen,
      List<Neighbour> neighbours,
      RoutingConfig routing,
      BloomParameters bloom,
      Limits limits,
      String routerToken) {
    this(
        router,
        epoch,
        clientListen,
        routerListen,
        metricsListen,
        null,
        neighbours,
        routing,
        bloom,
        limits,
        routerToken,
        FastPath.JVM);
  }

  /** Whether some neighbour's DATA travels through a shared-memory ring. */
  public boolean usesShm() {
    return neighbours.stream().anyMatch(n -> n.transport() == LinkTransport.SHM);
  }

  /** Whether some neighbour's DATA travels over UDP (the router then binds a UDP socket). */
  public boolean usesUdp() {
    return neighbours.stream().anyMatch(n -> n.transport() == LinkTransport.UDP);
  }

  /** The address of the UDP socket: {@code udpListen}, or the routers' host and port number. */
  public InetSocketAddress effectiveUdpListen() {
    return udpListen != null ? udpListen : routerListen;
  }

  /** Thrown for an invalid configuration; the message names the field. */
  public static final class ConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
      super(message);
    }
  }

  /** Reads and validates a YAML file. */
  public static RouterConfig load(Path file) throws IOException {
    return parse(Files.readString(file), file.toString());
  }

  /** Parses and validates YAML text; {@code source} names it in errors. */
  public static RouterConfig parse(String yaml, String source) {
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new ConfigException(source + ": not valid YAML: " + e.getOriginalMessage());
    }
    if (root == null || !root.isObject()) {
      throw new ConfigException(source + ": expected a mapping at the top level");
    }
    return new Reader(source).config(root);
  }

  /** Walks the tree, naming every field it reads by its path. */
  private static final class Reader {
    private final String source;

    Reader(String source) {
      this.source = source;
    }

    ConfigException error(String path, String what) {
      return new ConfigException(source + ": " + path + ": " + what);
    }

    void known(JsonNode node, String path, String... fields) {
      Set<String> ok = Set.of(fields);
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        if (!ok.contains(f)) {
          throw error(
              path.isEmpty() ? f : path + "." + f,
              "unknown field (known: " + String.join(", ", new java.util.TreeSet<>(ok)) + ")");
        }
      }
    }

    long integer(JsonNode node, String path, long min, long max) {
      if (node == null || !node.isIntegralNumber()) {
        throw error(path, "expected an integer" + (node == null ? ", missing" : ", got " + node));
      }
      if (!node.canConvertToLong()) { // beyond 64 bits: asLong() would keep the low 64 only
        throw error(path, "must be in " + min + ".." + max + ", got " + node.bigIntegerValue());
      }
      long v = node.asLong();
      if (v < min || v > max) {
        throw error(path, "must be in " + min + ".." + max + ", got " + v);
      }
      return v;
    }

    InetSocketAddress address(JsonNode node, String path) {
      if (node == null || node.isNull()) {
        return null;
      }
      if (!node.isTextual()) {
        throw error(path, "expected host:port, got " + node);
      }
      String s = node.asText();
      int colon = s.lastIndexOf(':');
      if (colon <= 0 || colon == s.length() - 1) {
        throw error(path, "expected host:port, got '" + s + "'");
      }
      String host = s.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      int port;
      try {
        port = Integer.parseInt(s.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw error(path, "port of '" + s + "' is not a number");
      }
      if (port < 0 || port > 65535) {
        throw error(path, "port " + port + " outside 0..65535");
      }
      return InetSocketAddress.createUnresolved(host, port);
    }

    RouterConfig config(JsonNode root) {
      known(
          root,
          "",
          "router",
          "epoch",
          "listen",
          "neighbours",
          "routing",
          "bloom",
          "limits",
          "auth",
          "tls",
          "fastPath");
      JsonNode listen = root.path("listen");
      if (!listen.isMissingNode()) {
        known(listen, "listen", "clients", "routers", "metrics", "udp");
      }
      RoutingConfig routing = routing(root.get("routing"));
      int router = (int) integer(root.get("router"), "router", 0, routing.maxRouters() - 1);
      long epoch =
          root.has("epoch")
              ? integer(root.get("epoch"), "epoch", 1, Long.MAX_VALUE)
              : System.currentTimeMillis();
      InetSocketAddress clients = address(listen.get("clients"), "listen.clients");
      InetSocketAddress routers = address(listen.get("routers"), "listen.routers");
      InetSocketAddress metrics = address(listen.get("metrics"), "listen.metrics");
      InetSocketAddress udp = address(listen.get("udp"), "listen.udp");
      if (clients == null) {
        clients = InetSocketAddress.createUnresolved("127.0.0.1", 7400);
      }
      if (routers == null) {
        routers = InetSocketAddress.createUnresolved("127.0.0.1", 7500);
      }
      List<Neighbour> neighbours = new ArrayList<>();
      JsonNode ns = root.get("neighbours");
      if (ns != null && !ns.isNull()) {
        if (!ns.isArray()) {
          throw error("neighbours", "expected a list");
        }
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < ns.size(); i++) {
          String p = "neighbours[" + i + "]";
          JsonNode n = ns.get(i);
          if (!n.isObject()) {
            throw error(p, "expected a mapping with router, address, cost");
          }
          known(n, p, "router", "address", "cost", "transport");
          int nr = (int) integer(n.get("router"), p + ".router", 0, routing.maxRouters() - 1);
          if (nr == router) {
            throw error(p + ".router", "is this router's own number " + router);
          }
          if (!seen.add(nr)) {
            throw error(p + ".router", "router " + nr + " is listed twice");
          }
          int cost = n.has("cost") ? (int) integer(n.get("cost"), p + ".cost", 1, 0xFFFE) : 1;
          LinkTransport transport = LinkTransport.TCP;
          JsonNode t = n.get("transport");
          if (t != null && !t.isNull()) {
            String v = t.isTextual() ? t.asText().toLowerCase(java.util.Locale.ROOT) : "";
            transport =
                switch (v) {
                  case "tcp" -> LinkTransport.TCP;
                  case "udp" -> LinkTransport.UDP;
                  case "shm" -> LinkTransport.SHM;
                  case "rdma" -> LinkTransport.RDMA;
                  default ->
                      throw error(p + ".transport", "expected tcp, udp, shm or rdma, got " + t);
                };
          }
          neighbours.add(
              new Neighbour(nr, address(n.get("address"), p + ".address"), cost, transport));
        }
      }
      BloomParameters bloom = BloomParameters.DEFAULT;
      JsonNode b = root.get("bloom");
      if (b != null) {
        known(b, "bloom", "bits", "hashes", "categories");
        int bits =
            (int)
                integer(
                    b.get("bits"),
                    "bloom.bits",
                    BloomParameters.MIN_BITS,
                    BloomParameters.MAX_BITS);
        int hashes = (int) integer(b.get("hashes"), "bloom.hashes", 1, BloomParameters.MAX_HASHES);
        CategoryScheme categories = CategoryScheme.SHARP;
        JsonNode c = b.get("categories");
        if (c != null) {
          try {
            categories = CategoryScheme.parse(c.asText());
          } catch (IllegalArgumentException e) {
            throw error("bloom.categories", e.getMessage());
          }
        }
        try {
          bloom = new BloomParameters(bits, hashes, categories);
        } catch (IllegalArgumentException e) {
          throw error("bloom", e.getMessage());
        }
      }
      Limits limits = limits(root.get("limits"));
      ClientAuth clientAuth = ClientAuth.OPEN;
      String token = null;
      UdpProtection udpProtection = UdpProtection.MAC;
      JsonNode auth = root.get("auth");
      if (auth != null) {
        known(auth, "auth", "routerToken", "clients", "metrics", "udp");
        JsonNode u = auth.get("udp");
        if (u != null && !u.isNull()) {
          String v = u.isTextual() ? u.asText().toLowerCase(java.util.Locale.ROOT) : "";
          udpProtection =
              switch (v) {
                case "mac" -> UdpProtection.MAC;
                case "encrypt" -> UdpProtection.ENCRYPT;
                case "none" -> UdpProtection.NONE;
                default -> throw error("auth.udp", "expected mac, encrypt or none, got " + u);
              };
        }
        clientAuth = clientAuth(auth.get("clients"));
        JsonNode t = auth.get("routerToken");
        if (t != null && !t.isNull()) {
          if (!t.isTextual() || t.asText().isEmpty()) {
            throw error("auth.routerToken", "expected a non-empty string");
          }
          int bytes = t.asText().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
          if (bytes > io.bdrp.transport.Frames.MAX_TOKEN_BYTES) {
            throw error(
                "auth.routerToken",
                "is "
                    + bytes
                    + " bytes of UTF-8; a hello carries at most "
                    + io.bdrp.transport.Frames.MAX_TOKEN_BYTES);
          }
          token = t.asText();
        }
      }
      ClientTls clientTls = tls(root.get("tls"));
      if (clientTls == null || clientTls.clientCa() == null) {
        for (int i = 0; i < clientAuth.users().size(); i++) {
          if (clientAuth.users().get(i).hash() == null) {
            throw error(
                "auth.clients.users[" + i + "].token",
                "user '"
                    + clientAuth.users().get(i).name()
                    + "' has no token, and without tls.clientCa no client certificate can name it");
          }
        }
      }
      FastPath fastPath = FastPath.JVM;
      JsonNode fp = root.get("fastPath");
      if (fp != null && !fp.isNull()) {
        String v = fp.isTextual() ? fp.asText().toLowerCase(java.util.Locale.ROOT) : "";
        fastPath =
            switch (v) {
              case "jvm" -> FastPath.JVM;
              case "ebpf" -> FastPath.EBPF;
              default -> throw error("fastPath", "expected jvm or ebpf, got " + fp);
            };
      }
      // tls.metrics comes with tls.cert (the tls section asks for it); the record checks it too.
      MetricsAccess metricsAccess =
          metricsAccess(auth == null ? null : auth.get("metrics"), root.get("tls"));
      return new RouterConfig(
          router,
          epoch,
          clients,
          routers,
          metrics,
          udp,
          neighbours,
          routing,
          bloom,
          limits,
          token,
          fastPath,
          clientAuth,
          clientTls,
          routerTls(router, root.get("tls")),
          metricsAccess,
          udpProtection);
    }

    /** {@code auth.metrics} (user and password hash) and {@code tls.metrics}. */
    MetricsAccess metricsAccess(JsonNode m, JsonNode tls) {
      boolean overTls = false;
      if (tls != null && tls.isObject() && tls.get("metrics") != null) {
        JsonNode t = tls.get("metrics");
        if (!t.isBoolean()) {
          throw error("tls.metrics", "expected true or false");
        }
        overTls = t.asBoolean();
      }
      if (m == null || m.isNull()) {
        return overTls ? new MetricsAccess(null, null, true) : null;
      }
      if (!m.isObject()) {
        throw error("auth.metrics", "expected a map with user and password");
      }
      known(m, "auth.metrics", "user", "password");
      JsonNode u = m.get("user");
      if (u == null || !u.isTextual() || u.asText().isEmpty() || u.asText().contains(":")) {
        throw error("auth.metrics.user", "expected a non-empty name without ':'");
      }
      JsonNode pw = m.get("password");
      if (pw == null || !pw.isTextual()) {
        throw error(
            "auth.metrics.password",
            "expected sha256:SALT:HASH (make one with: bdrp auth token --user " + u.asText() + ")");
      }
      try {
        return new MetricsAccess(
            u.asText(),
            ClientAuth.user(u.asText(), pw.asText(), ClientAuth.Permissions.ALL),
            overTls);
      } catch (IllegalArgumentException e) {
        throw error("auth.metrics.password", e.getMessage());
      }
    }

    /** {@code tls}: the certificate and key for TLS on the client port. */
    ClientTls tls(JsonNode t) {
      if (t == null || t.isNull()) {
        return null;
      }
      if (!t.isObject()) {
        throw error("tls", "expected a map with cert and key (and ca for router links)");
      }
      known(t, "tls", "cert", "key", "ca", "metrics", "clientCa");
      try {
        JsonNode cc = t.get("clientCa");
        return ClientTls.load(
            pem(t, "cert"), pem(t, "key"), cc == null || cc.isNull() ? null : pem(t, "clientCa"));
      } catch (IllegalArgumentException e) {
        throw error("tls", e.getMessage());
      }
    }

    /** {@code tls.ca}: mutual TLS on router links, with this router's certificate and key. */
    RouterTls routerTls(int router, JsonNode t) {
      if (t == null || !t.isObject() || t.get("ca") == null || t.get("ca").isNull()) {
        return null;
      }
      try {
        return RouterTls.load(router, pem(t, "cert"), pem(t, "key"), pem(t, "ca"));
      } catch (IllegalArgumentException e) {
        throw error("tls", e.getMessage());
      }
    }

    /** The readable file named by {@code tls.FIELD}. */
    Path pem(JsonNode t, String field) {
      JsonNode f = t.get(field);
      if (f == null || !f.isTextual() || f.asText().isEmpty()) {
        throw error("tls." + field, "expected the path of a PEM file");
      }
      Path p = Path.of(f.asText());
      if (!Files.isReadable(p)) {
        throw error("tls." + field, "cannot read " + p);
      }
      return p;
    }

    /** {@code auth.clients}: users with token hashes and permissions, and anonymous access. */
    ClientAuth clientAuth(JsonNode c) {
      if (c == null || c.isNull()) {
        return ClientAuth.OPEN;
      }
      if (!c.isObject()) {
        throw error("auth.clients", "expected a map with users and anonymous");
      }
      known(c, "auth.clients", "users", "anonymous");
      List<ClientAuth.User> users = new ArrayList<>();
      JsonNode us = c.get("users");
      if (us != null && !us.isNull()) {
        if (!us.isArray()) {
          throw error("auth.clients.users", "expected a list of users");
        }
        Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < us.size(); i++) {
          String path = "auth.clients.users[" + i + "]";
          JsonNode u = us.get(i);
          if (!u.isObject()) {
            throw error(path, "expected a map with name and token");
          }
          known(u, path, "name", "token", "subscribe", "publish");
          JsonNode name = u.get("name");
          if (name == null || !name.isTextual() || name.asText().isEmpty()) {
            throw error(path + ".name", "expected a non-empty string");
          }
          if (!names.add(name.asText())) {
            throw error(path + ".name", "user '" + name.asText() + "' is named twice");
          }
          JsonNode t = u.get("token");
          if (t == null || t.isNull()) {
            // Signs in with a client certificate naming it; needs tls.clientCa (checked below).
            users.add(
                ClientAuth.User.withCertificate(
                    name.asText(), permissions(u, path, name.asText())));
            continue;
          }
          if (!t.isTextual()) {
            throw error(
                path + ".token",
                "expected sha256:SALT:HASH (make one with: bdrp auth token --user "
                    + name.asText()
                    + ")");
          }
          try {
            users.add(
                ClientAuth.user(name.asText(), t.asText(), permissions(u, path, name.asText())));
          } catch (IllegalArgumentException e) {
            throw error(path + ".token", e.getMessage());
          }
        }
      }
      ClientAuth.Permissions anonymous = null;
      JsonNode a = c.get("anonymous");
      if (a != null && !a.isNull()) {
        if (a.isBoolean()) {
          anonymous = a.asBoolean() ? ClientAuth.Permissions.ALL : null;
        } else if (a.isObject()) {
          known(a, "auth.clients.anonymous", "subscribe", "publish");
          anonymous = permissions(a, "auth.clients.anonymous", "anonymous");
        } else {
          throw error(
              "auth.clients.anonymous", "expected true, false or a map with subscribe and publish");
        }
      }
      return new ClientAuth(users, anonymous);
    }

    /** A user's {@code subscribe} and {@code publish} predicates (absent: no limit). */
    ClientAuth.Permissions permissions(JsonNode u, String path, String user) {
      return new ClientAuth.Permissions(
          user,
          predicate(u.get("subscribe"), path + ".subscribe"),
          predicate(u.get("publish"), path + ".publish"));
    }

    io.bdrp.encoding.Predicate predicate(JsonNode p, String path) {
      if (p == null || p.isNull()) {
        return null;
      }
      if (!p.isTextual()) {
        throw error(path, "expected a predicate, such as 'topic = \"news\"'");
      }
      try {
        return io.bdrp.encoding.Predicate.parse(p.asText());
      } catch (RuntimeException e) {
        throw error(path, e.getMessage());
      }
    }

    RoutingConfig routing(JsonNode r) {
      RoutingConfig.Builder b = RoutingConfig.builder();
      if (r == null) {
        return b.build();
      }
      known(
          r,
          "routing",
          "helloIntervalMs",
          "deadIntervalMs",
          "updateIntervalMs",
          "updatePacingMs",
          "routeExpiryMs",
          "sourceGcMs",
          "seqnoRequestHops",
          "predicateExpiryMs",
          "hopLimit",
          "broadcastFraction",
          "maxRouters",
          "maxEpochAheadMs",
          "maxOriginFilters",
          "maxOriginFilterBytes",
          "maxPredicateFilterBytes",
          "acceptMatchAll");
      for (Map.Entry<String, JsonNode> e : r.properties()) {
        String p = "routing." + e.getKey();
        JsonNode v = e.getValue();
        switch (e.getKey()) {
          case "helloIntervalMs" -> b.helloIntervalMs(integer(v, p, 1, Long.MAX_VALUE));
          case "deadIntervalMs" -> b.deadIntervalMs(integer(v, p, 1, Long.MAX_VALUE));
          case "updateIntervalMs" -> b.updateIntervalMs(integer(v, p, 1, Long.MAX_VALUE));
          case "updatePacingMs" -> b.updatePacingMs(integer(v, p, 0, Long.MAX_VALUE));
          case "routeExpiryMs" -> b.routeExpiryMs(integer(v, p, 1, Long.MAX_VALUE));
          case "sourceGcMs" -> b.sourceGcMs(integer(v, p, 1, Long.MAX_VALUE));
          case "seqnoRequestHops" -> b.seqnoRequestHops((int) integer(v, p, 1, 255));
          case "predicateExpiryMs" -> b.predicateExpiryMs(integer(v, p, 1, Long.MAX_VALUE));
          case "hopLimit" -> b.hopLimit((int) integer(v, p, 1, 255));
          case "broadcastFraction" -> {
            if (!v.isNumber() || !(v.asDouble() > 0 && v.asDouble() <= 1)) {
              throw error(
                  p, "expected a number above 0 and at most 1 (1: never broadcast), got " + v);
            }
            b.broadcastFraction(v.asDouble());
          }
          case "maxRouters" -> b.maxRouters((int) integer(v, p, 1, RoutingConfig.MAX_ROUTERS));
          case "maxEpochAheadMs" -> b.maxEpochAheadMs(integer(v, p, 1, Long.MAX_VALUE));
          case "maxOriginFilters" ->
              b.maxOriginFilters((int) integer(v, p, 1, RoutingConfig.MAX_ORIGIN_FILTERS));
          case "maxOriginFilterBytes" -> b.maxOriginFilterBytes(integer(v, p, 1, Long.MAX_VALUE));
          case "maxPredicateFilterBytes" ->
              b.maxPredicateFilterBytes(integer(v, p, 1, Long.MAX_VALUE));
          case "acceptMatchAll" -> {
            if (!v.isBoolean()) {
              throw error(p, "expected true or false, got " + v);
            }
            b.acceptMatchAll(v.asBoolean());
          }
          default -> throw new AssertionError(e.getKey());
        }
      }
      try {
        return b.build();
      } catch (IllegalArgumentException e) {
        throw error("routing", e.getMessage());
      }
    }

    Limits limits(JsonNode l) {
      Limits d = Limits.DEFAULT;
      if (l == null) {
        return d;
      }
      known(
          l,
          "limits",
          "maxFrameBytes",
          "linkHighWaterBytes",
          "linkLowWaterBytes",
          "hostHighWaterBytes",
          "hostLowWaterBytes",
          "maxClients",
          "maxDatagramBytes",
          "udpReceiveBufferBytes",
          "udpSendBufferBytes",
          "helloTimeoutMs",
          "maxHandshakes",
          "slowConsumerMs",
          "inboundBufferBytes",
          "linkControlPercent",
          "ringBytes",
          "ringWatermarkBytes",
          "maxFiltersPerHost",
          "maxFiltersPerUser",
          "predicateChangesPerSecond",
          "maxSessionsPerUser",
          "keepAliveMs");
      int maxFrame = field(l, "maxFrameBytes", d.maxFrameBytes(), 1024, 64 << 20);
      int lh = field(l, "linkHighWaterBytes", d.linkHighWaterBytes(), 1024, Integer.MAX_VALUE);
      int ll = field(l, "linkLowWaterBytes", Math.min(d.linkLowWaterBytes(), lh), 0, lh);
      int hh = field(l, "hostHighWaterBytes", d.hostHighWaterBytes(), 1024, Integer.MAX_VALUE);
      int hl = field(l, "hostLowWaterBytes", Math.min(d.hostLowWaterBytes(), hh), 0, hh);
      int clients = field(l, "maxClients", d.maxClients(), 1, 1 << 24);
      int datagram = field(l, "maxDatagramBytes", d.maxDatagramBytes(), 64, 65_507);
      int udpBuffer =
          field(l, "udpReceiveBufferBytes", d.udpReceiveBufferBytes(), 4096, Integer.MAX_VALUE);
      int udpSend = field(l, "udpSendBufferBytes", d.udpSendBufferBytes(), 4096, Integer.MAX_VALUE);
      int helloTimeout = field(l, "helloTimeoutMs", d.helloTimeoutMs(), 1, Integer.MAX_VALUE);
      int handshakes = field(l, "maxHandshakes", d.maxHandshakes(), 1, 1 << 24);
      int slow = field(l, "slowConsumerMs", d.slowConsumerMs(), 1, Integer.MAX_VALUE);
      int ring = field(l, "ringBytes", d.ringBytes(), 4096, 1 << 30);
      if (Integer.bitCount(ring) != 1) {
        throw error("limits.ringBytes", "must be a power of two, got " + ring);
      }
      int inbound =
          field(
              l,
              "inboundBufferBytes",
              Math.max(d.inboundBufferBytes(), maxFrame + 4),
              maxFrame + 4,
              Integer.MAX_VALUE);
      return new Limits(
          maxFrame,
          lh,
          ll,
          hh,
          hl,
          clients,
          datagram,
          udpBuffer,
          udpSend,
          helloTimeout,
          handshakes,
          slow,
          inbound,
          field(l, "linkControlPercent", d.linkControlPercent(), 1, 100),
          ring,
          field(l, "ringWatermarkBytes", Math.min(d.ringWatermarkBytes(), ring / 4), 0, ring),
          hostLimits(l, d.hosts()));
    }

    HostLimits hostLimits(JsonNode l, HostLimits d) {
      return new HostLimits(
          field(l, "maxFiltersPerHost", d.maxFiltersPerHost(), 1, 1 << 24),
          field(l, "maxFiltersPerUser", d.maxFiltersPerUser(), 1, 1 << 24),
          field(l, "predicateChangesPerSecond", d.predicateChangesPerSecond(), 1, 1_000_000),
          field(l, "maxSessionsPerUser", d.maxSessionsPerUser(), 1, 1 << 24),
          field(l, "keepAliveMs", d.keepAliveMs(), 100, Integer.MAX_VALUE));
    }

    int field(JsonNode l, String name, int dflt, int min, int max) {
      return l.has(name) ? (int) integer(l.get(name), "limits." + name, min, max) : dflt;
    }
  }
}
