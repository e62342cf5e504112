package io.bdrp.router.config;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.router.config.RouterConfig.ConfigException;
import io.bdrp.router.config.RouterConfig.FastPath;
import io.bdrp.router.config.RouterConfig.LinkTransport;
import io.bdrp.router.config.RouterConfig.Neighbour;
import io.bdrp.routing.RoutingConfig;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The one validation pass over a bound configuration file: it checks every field against its bounds
 * and the fields against each other, fills in the defaults, and builds the {@link RouterConfig}. An
 * error names the file and the field by its path ({@code neighbours[2].cost: must be in 1..65534,
 * got 0}). The security sections are checked by {@link RouterConfigSecurity}.
 */
final class RouterConfigCheck {
  /** The client port when {@code listen.clients} is absent. */
  static final InetSocketAddress DEFAULT_CLIENTS =
      InetSocketAddress.createUnresolved("127.0.0.1", 7400);

  /** The router port when {@code listen.routers} is absent. */
  static final InetSocketAddress DEFAULT_ROUTERS =
      InetSocketAddress.createUnresolved("127.0.0.1", 7500);

  private final String source;

  RouterConfigCheck(String source) {
    this.source = source;
  }

  /** The file's name, as errors give it. */
  String source() {
    return source;
  }

  ConfigException error(String path, String what) {
    return new ConfigException(source + ": " + path + ": " + what);
  }

  /** {@code v} if it is in {@code min..max}. */
  long integer(BigInteger v, String path, long min, long max) {
    if (v == null) {
      throw error(path, "expected an integer, missing");
    }
    if (v.compareTo(BigInteger.valueOf(min)) < 0 || v.compareTo(BigInteger.valueOf(max)) > 0) {
      throw error(path, "must be in " + min + ".." + max + ", got " + v);
    }
    return v.longValue();
  }

  /** {@code v} if it is in {@code min..max}, {@code dflt} if absent. */
  int integer(BigInteger v, String path, int dflt, int min, int max) {
    return v == null ? dflt : (int) integer(v, path, min, max);
  }

  /** The address {@code s} (HOST:PORT, [IPV6]:PORT), or null if absent. */
  InetSocketAddress address(String s, String path) {
    if (s == null) {
      return null;
    }
    try {
      return ConfigAddress.parse(s, 0);
    } catch (IllegalArgumentException e) {
      throw error(path, e.getMessage());
    }
  }

  /** {@code s} as a constant of {@code type} (case ignored), {@code dflt} if absent. */
  <E extends Enum<E>> E choice(String s, String path, E dflt, Class<E> type, String expected) {
    if (s == null) {
      return dflt;
    }
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(s)) {
        return e;
      }
    }
    throw error(path, "expected " + expected + ", got \"" + s + "\"");
  }

  RouterConfig config(RouterConfigFile.Root f) {
    RoutingConfig routing = routing(f.routing());
    int router = (int) integer(f.router(), "router", 0, routing.maxRouters() - 1);
    long epoch =
        f.epoch() == null
            ? System.currentTimeMillis()
            : integer(f.epoch(), "epoch", 1, Long.MAX_VALUE);
    RouterConfigFile.Listen listen =
        f.listen() == null ? new RouterConfigFile.Listen(null, null, null, null, null) : f.listen();
    InetSocketAddress clients = address(listen.clients(), "listen.clients");
    InetSocketAddress routers = address(listen.routers(), "listen.routers");
    InetSocketAddress metrics = address(listen.metrics(), "listen.metrics");
    InetSocketAddress udp = address(listen.udp(), "listen.udp");
    InetSocketAddress mqtt = address(listen.mqtt(), "listen.mqtt");
    List<Neighbour> neighbours = neighbours(f.neighbours(), router, routing.maxRouters());
    BloomParameters bloom = bloom(f.bloom());
    RouterLimits limits = limits(f.limits());
    RouterConfigSecurity security = new RouterConfigSecurity(this, f.auth(), f.tls(), router);
    FastPath fastPath =
        choice(f.fastPath(), "fastPath", FastPath.JVM, FastPath.class, "jvm or ebpf");
    return new RouterConfig(
        router,
        epoch,
        clients == null ? DEFAULT_CLIENTS : clients,
        routers == null ? DEFAULT_ROUTERS : routers,
        metrics,
        udp,
        neighbours,
        routing,
        bloom,
        limits,
        security.routerToken(),
        fastPath,
        security.clientAuth(),
        security.clientTls(),
        security.routerTls(),
        security.metricsAccess(),
        security.udpProtection(),
        mqtt,
        mqtt(f.mqtt()));
  }

  /** The {@code mqtt} section. */
  MqttOptions mqtt(RouterConfigFile.Mqtt m) {
    MqttOptions d = MqttOptions.DEFAULT;
    if (m == null) {
      return d;
    }
    return new MqttOptions(
        m.jsonFields() != null ? m.jsonFields() : d.jsonFields(),
        integer(
            m.jsonMaxBytes(),
            "mqtt.jsonMaxBytes",
            d.jsonMaxBytes(),
            1,
            io.bdrp.encoding.Limits.MAX_BODY_BYTES),
        m.confirmedAcks() != null ? m.confirmedAcks() : d.confirmedAcks());
  }

  List<Neighbour> neighbours(List<RouterConfigFile.Link> ns, int router, int maxRouters) {
    List<Neighbour> neighbours = new ArrayList<>();
    if (ns == null) {
      return neighbours;
    }
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < ns.size(); i++) {
      String p = "neighbours[" + i + "]";
      RouterConfigFile.Link n = ns.get(i);
      if (n == null) {
        throw error(p, "expected a mapping with router, address, cost");
      }
      int nr = (int) integer(n.router(), p + ".router", 0, maxRouters - 1);
      if (nr == router) {
        throw error(p + ".router", "is this router's own number " + router);
      }
      if (!seen.add(nr)) {
        throw error(p + ".router", "router " + nr + " is listed twice");
      }
      int cost = integer(n.cost(), p + ".cost", 1, 1, 0xFFFE);
      LinkTransport transport =
          choice(
              n.transport(),
              p + ".transport",
              LinkTransport.TCP,
              LinkTransport.class,
              "tcp, udp, shm or rdma");
      neighbours.add(
          new Neighbour(
              nr,
              address(n.address(), p + ".address"),
              cost,
              transport,
              adminUrl(n.admin(), p + ".admin")));
    }
    return neighbours;
  }

  /**
   * A neighbour's admin address: null, or {@code http://HOST:PORT} / {@code https://HOST:PORT}
   * without a path (the API's paths are appended to it).
   */
  String adminUrl(String s, String field) {
    if (s == null) {
      return null;
    }
    java.net.URI u;
    try {
      u = new java.net.URI(s);
    } catch (java.net.URISyntaxException e) {
      throw error(field, "expected http://HOST:PORT or https://HOST:PORT, got \"" + s + "\"");
    }
    boolean ok =
        ("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
            && u.getHost() != null
            && u.getPort() > 0
            && (u.getRawPath() == null || u.getRawPath().isEmpty())
            && u.getRawQuery() == null
            && u.getRawFragment() == null
            && u.getRawUserInfo() == null;
    if (!ok) {
      throw error(field, "expected http://HOST:PORT or https://HOST:PORT, got \"" + s + "\"");
    }
    return s;
  }

  BloomParameters bloom(RouterConfigFile.Bloom b) {
    if (b == null) {
      return BloomParameters.DEFAULT;
    }
    int bits =
        (int) integer(b.bits(), "bloom.bits", BloomParameters.MIN_BITS, BloomParameters.MAX_BITS);
    int hashes = (int) integer(b.hashes(), "bloom.hashes", 1, BloomParameters.MAX_HASHES);
    CategoryScheme categories = CategoryScheme.SHARP;
    if (b.categories() != null) {
      try {
        categories = CategoryScheme.parse(b.categories());
      } catch (IllegalArgumentException e) {
        throw error("bloom.categories", e.getMessage());
      }
    }
    try {
      return new BloomParameters(bits, hashes, categories);
    } catch (IllegalArgumentException e) {
      throw error("bloom", e.getMessage());
    }
  }

  RoutingConfig routing(RouterConfigFile.Routing r) {
    RoutingConfig.Builder b = RoutingConfig.builder();
    if (r == null) {
      return b.build();
    }
    long any = Long.MAX_VALUE;
    if (r.helloIntervalMs() != null) {
      b.helloIntervalMs(integer(r.helloIntervalMs(), "routing.helloIntervalMs", 1, any));
    }
    if (r.deadIntervalMs() != null) {
      b.deadIntervalMs(integer(r.deadIntervalMs(), "routing.deadIntervalMs", 1, any));
    }
    if (r.updateIntervalMs() != null) {
      b.updateIntervalMs(integer(r.updateIntervalMs(), "routing.updateIntervalMs", 1, any));
    }
    if (r.updatePacingMs() != null) {
      b.updatePacingMs(integer(r.updatePacingMs(), "routing.updatePacingMs", 0, any));
    }
    if (r.routeExpiryMs() != null) {
      b.routeExpiryMs(integer(r.routeExpiryMs(), "routing.routeExpiryMs", 1, any));
    }
    if (r.sourceGcMs() != null) {
      b.sourceGcMs(integer(r.sourceGcMs(), "routing.sourceGcMs", 1, any));
    }
    if (r.seqnoRequestHops() != null) {
      b.seqnoRequestHops((int) integer(r.seqnoRequestHops(), "routing.seqnoRequestHops", 1, 255));
    }
    if (r.predicateExpiryMs() != null) {
      b.predicateExpiryMs(integer(r.predicateExpiryMs(), "routing.predicateExpiryMs", 1, any));
    }
    if (r.hopLimit() != null) {
      b.hopLimit((int) integer(r.hopLimit(), "routing.hopLimit", 1, 255));
    }
    if (r.broadcastFraction() != null) {
      double v = r.broadcastFraction();
      if (!(v > 0 && v <= 1)) {
        throw error(
            "routing.broadcastFraction",
            "expected a number above 0 and at most 1 (1: never broadcast), got " + v);
      }
      b.broadcastFraction(v);
    }
    if (r.maxRouters() != null) {
      b.maxRouters(
          (int) integer(r.maxRouters(), "routing.maxRouters", 1, RoutingConfig.MAX_ROUTERS));
    }
    if (r.maxEpochAheadMs() != null) {
      b.maxEpochAheadMs(integer(r.maxEpochAheadMs(), "routing.maxEpochAheadMs", 1, any));
    }
    if (r.maxOriginFilters() != null) {
      b.maxOriginFilters(
          (int)
              integer(
                  r.maxOriginFilters(),
                  "routing.maxOriginFilters",
                  1,
                  RoutingConfig.MAX_ORIGIN_FILTERS));
    }
    if (r.maxOriginFilterBytes() != null) {
      b.maxOriginFilterBytes(
          integer(r.maxOriginFilterBytes(), "routing.maxOriginFilterBytes", 1, any));
    }
    if (r.maxPredicateFilterBytes() != null) {
      b.maxPredicateFilterBytes(
          integer(r.maxPredicateFilterBytes(), "routing.maxPredicateFilterBytes", 1, any));
    }
    if (r.acceptMatchAll() != null) {
      b.acceptMatchAll(r.acceptMatchAll());
    }
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw error("routing", e.getMessage());
    }
  }

  /**
   * {@code limits}: each field in its range, the low water marks at most the high ones, the inbound
   * buffer room for a largest frame, the ring a power of two and its watermark within it.
   */
  RouterLimits limits(RouterConfigFile.LimitsSection l) {
    RouterLimits d = RouterLimits.DEFAULT;
    if (l == null) {
      return d;
    }
    int max = Integer.MAX_VALUE;
    int maxFrame =
        integer(l.maxFrameBytes(), "limits.maxFrameBytes", d.maxFrameBytes(), 1024, 64 << 20);
    int lh =
        integer(
            l.linkHighWaterBytes(), "limits.linkHighWaterBytes", d.linkHighWaterBytes(), 1024, max);
    int ll =
        integer(
            l.linkLowWaterBytes(),
            "limits.linkLowWaterBytes",
            Math.min(d.linkLowWaterBytes(), lh),
            0,
            lh);
    int hh =
        integer(
            l.hostHighWaterBytes(), "limits.hostHighWaterBytes", d.hostHighWaterBytes(), 1024, max);
    int hl =
        integer(
            l.hostLowWaterBytes(),
            "limits.hostLowWaterBytes",
            Math.min(d.hostLowWaterBytes(), hh),
            0,
            hh);
    int clients = integer(l.maxClients(), "limits.maxClients", d.maxClients(), 1, 1 << 24);
    int datagram =
        integer(l.maxDatagramBytes(), "limits.maxDatagramBytes", d.maxDatagramBytes(), 64, 65_507);
    int udpBuffer =
        integer(
            l.udpReceiveBufferBytes(),
            "limits.udpReceiveBufferBytes",
            d.udpReceiveBufferBytes(),
            4096,
            max);
    int udpSend =
        integer(
            l.udpSendBufferBytes(), "limits.udpSendBufferBytes", d.udpSendBufferBytes(), 4096, max);
    int helloTimeout =
        integer(l.helloTimeoutMs(), "limits.helloTimeoutMs", d.helloTimeoutMs(), 1, max);
    int handshakes =
        integer(l.maxHandshakes(), "limits.maxHandshakes", d.maxHandshakes(), 1, 1 << 24);
    int slow = integer(l.slowConsumerMs(), "limits.slowConsumerMs", d.slowConsumerMs(), 1, max);
    int ring = integer(l.ringBytes(), "limits.ringBytes", d.ringBytes(), 4096, 1 << 30);
    if (Integer.bitCount(ring) != 1) {
      throw error("limits.ringBytes", "must be a power of two, got " + ring);
    }
    int inbound =
        integer(
            l.inboundBufferBytes(),
            "limits.inboundBufferBytes",
            Math.max(d.inboundBufferBytes(), maxFrame + 4),
            maxFrame + 4,
            max);
    int control =
        integer(
            l.linkControlPercent(), "limits.linkControlPercent", d.linkControlPercent(), 1, 100);
    int controlRate =
        integer(
            l.linkControlFramesPerSecond(),
            "limits.linkControlFramesPerSecond",
            d.linkControlFramesPerSecond(),
            10,
            1 << 24);
    int watermark =
        integer(
            l.ringWatermarkBytes(),
            "limits.ringWatermarkBytes",
            Math.min(d.ringWatermarkBytes(), ring / 4),
            0,
            ring);
    HostLimits h = d.hosts();
    HostLimits hosts =
        new HostLimits(
            integer(
                l.maxFiltersPerHost(),
                "limits.maxFiltersPerHost",
                h.maxFiltersPerHost(),
                1,
                1 << 24),
            integer(
                l.maxFiltersPerUser(),
                "limits.maxFiltersPerUser",
                h.maxFiltersPerUser(),
                1,
                1 << 24),
            integer(
                l.predicateChangesPerSecond(),
                "limits.predicateChangesPerSecond",
                h.predicateChangesPerSecond(),
                1,
                1_000_000),
            integer(
                l.maxSessionsPerUser(),
                "limits.maxSessionsPerUser",
                h.maxSessionsPerUser(),
                1,
                1 << 24),
            integer(l.keepAliveMs(), "limits.keepAliveMs", h.keepAliveMs(), 100, max),
            integer(
                l.mqttSessionExpiryMaxSeconds(),
                "limits.mqttSessionExpiryMaxSeconds",
                h.mqttSessionExpiryMaxSeconds(),
                0,
                max),
            integer(
                l.mqttQueuedMessages(),
                "limits.mqttQueuedMessages",
                h.mqttQueuedMessages(),
                0,
                1 << 24),
            integer(l.mqttQueuedBytes(), "limits.mqttQueuedBytes", h.mqttQueuedBytes(), 0, max),
            integer(
                l.mqttAbsentSessions(),
                "limits.mqttAbsentSessions",
                h.mqttAbsentSessions(),
                0,
                1 << 24),
            integer(
                l.reliableRetentionMessages(),
                "limits.reliableRetentionMessages",
                h.reliableRetentionMessages(),
                1,
                1 << 24),
            integer(
                l.reliableRetentionBytes(),
                "limits.reliableRetentionBytes",
                h.reliableRetentionBytes(),
                1024,
                1 << 30),
            integer(
                l.reliableRetentionMs(),
                "limits.reliableRetentionMs",
                h.reliableRetentionMs(),
                1000,
                86_400_000));
    return new RouterLimits(
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
        control,
        controlRate,
        ring,
        watermark,
        hosts);
  }
}
