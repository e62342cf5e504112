package io.bdrp.router.config;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.metrics.MetricsAccess;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.router.security.ClientTls;
import io.bdrp.router.security.RouterTls;
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
 * @param mqttListen address for MQTT clients ({@code listen.mqtt}; TLS with the client port's
 *     certificate when {@code clientTls} is set, users and permissions of {@code clientAuth}), or
 *     null for no MQTT port (docs/mqtt.md)
 * @param mqtt what the MQTT port does beyond the mapping ({@code mqtt}; JSON payload fields)
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
    RouterLimits limits,
    String routerToken,
    FastPath fastPath,
    ClientAuth clientAuth,
    ClientTls clientTls,
    RouterTls routerTls,
    MetricsAccess metricsAccess,
    UdpProtection udpProtection,
    InetSocketAddress mqttListen,
    MqttOptions mqtt) {

  /** A configuration with the MQTT port's defaults ({@link MqttOptions#DEFAULT}). */
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
      RouterLimits limits,
      String routerToken,
      FastPath fastPath,
      ClientAuth clientAuth,
      ClientTls clientTls,
      RouterTls routerTls,
      MetricsAccess metricsAccess,
      UdpProtection udpProtection,
      InetSocketAddress mqttListen) {
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
        udpProtection,
        mqttListen,
        MqttOptions.DEFAULT);
  }

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
     * frame larger than {@link RouterLimits#maxDatagramBytes()} goes over TCP.
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
     * backend), the rings' endpoints exchanged in the hellos; needs an RDMA device (or the JVM
     * property {@code bdrp.rdma.backend=shm}, the shared-memory ring standing in for verbs on one
     * host). Without one, such links carry DATA over TCP and the router says why at start.
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
   * @param admin the base URL of the neighbour's admin API ({@code http://HOST:PORT} or {@code
   *     https://HOST:PORT}, its metrics listener), or null when not configured: told to operators
   *     by {@code /admin/v1/neighbours}, so that a federation can be walked from any router
   */
  public record Neighbour(
      int router, InetSocketAddress address, int cost, LinkTransport transport, String admin) {
    public Neighbour {
      java.util.Objects.requireNonNull(transport, "transport");
    }

    /** A neighbour whose admin address is not configured. */
    public Neighbour(int router, InetSocketAddress address, int cost, LinkTransport transport) {
      this(router, address, cost, transport, null);
    }

    /** A neighbour whose DATA travels over TCP. */
    public Neighbour(int router, InetSocketAddress address, int cost) {
      this(router, address, cost, LinkTransport.TCP);
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
    java.util.Objects.requireNonNull(mqtt, "mqtt");
  }

  /** A configuration without an MQTT port. */
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
      RouterLimits limits,
      String routerToken,
      FastPath fastPath,
      ClientAuth clientAuth,
      ClientTls clientTls,
      RouterTls routerTls,
      MetricsAccess metricsAccess,
      UdpProtection udpProtection) {
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
        udpProtection,
        null);
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
      RouterLimits limits,
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
      RouterLimits limits,
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

  /** This configuration with an MQTT port at {@code address} (null: none). */
  public RouterConfig withMqttListen(InetSocketAddress address) {
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
        clientAuth,
        clientTls,
        routerTls,
        metricsAccess,
        udpProtection,
        address,
        mqtt);
  }

  /**
   * This configuration with a metrics port at {@code address} (null: none) open to {@code access}.
   */
  public RouterConfig withMetrics(InetSocketAddress address, MetricsAccess access) {
    return new RouterConfig(
        router,
        epoch,
        clientListen,
        routerListen,
        address,
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
        access,
        udpProtection,
        mqttListen,
        mqtt);
  }

  /** This configuration with {@code options} for its MQTT port. */
  public RouterConfig withMqtt(MqttOptions options) {
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
        clientAuth,
        clientTls,
        routerTls,
        metricsAccess,
        udpProtection,
        mqttListen,
        options);
  }

  /** This configuration with {@code routing} in place of its own. */
  public RouterConfig withRouting(RoutingConfig routing) {
    return with(routing, limits, clientAuth, clientTls, routerTls, metricsAccess, udpProtection);
  }

  /** This configuration with {@code limits} in place of its own. */
  public RouterConfig withLimits(RouterLimits limits) {
    return with(routing, limits, clientAuth, clientTls, routerTls, metricsAccess, udpProtection);
  }

  /** This configuration with the parts that callers replace; the rest as it is. */
  private RouterConfig with(
      RoutingConfig routing,
      RouterLimits limits,
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
        udp,
        mqttListen,
        mqtt);
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
      RouterLimits limits,
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
