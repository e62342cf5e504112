package io.bdrp.router;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.transport.UdpProtection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
    return with(routing, limits, auth, clientTls, routerTls, metricsAccess, udpProtection);
  }

  /** This configuration with {@code tls} on the client port (null: plain TCP). */
  public RouterConfig withClientTls(ClientTls tls) {
    return with(routing, limits, clientAuth, tls, routerTls, metricsAccess, udpProtection);
  }

  /** This configuration with {@code tls} on router links (null: plain TCP). */
  public RouterConfig withRouterTls(RouterTls tls) {
    return with(routing, limits, clientAuth, clientTls, tls, metricsAccess, udpProtection);
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

  /**
   * Parses and validates YAML text; {@code source} names it in errors. Jackson binds the text to
   * {@link RouterConfigFile}'s records, then {@link RouterConfigCheck} checks every field.
   */
  public static RouterConfig parse(String yaml, String source) {
    return new RouterConfigCheck(source).config(RouterConfigFile.read(yaml, source));
  }
}
