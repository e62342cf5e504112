package io.bdrp.router;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.fastpath.KernelFastPath;
import io.bdrp.router.hosts.AttachedHost;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.RouterLinks;
import io.bdrp.router.metrics.AdminApi;
import io.bdrp.routing.DistanceVector;
import io.bdrp.routing.PredicateTable;
import io.bdrp.routing.RoutingNode;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.lang.reflect.RecordComponent;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The router's admin API, version 1 (docs/admin-api.md): what it is, its links, hosts, routes,
 * predicates and neighbours' admin addresses, as JSON on the metrics port.
 *
 * <p>Each answer is read on the router's event loop, which owns every part of it (links, hosts,
 * routing state), into plain maps and lists that {@link io.bdrp.router.metrics.MetricsHttp} then
 * writes as JSON on the metrics port's thread. Lists that grow with the federation or the clients
 * (hosts, routes, predicates) come in pages of at most {@link #MAX_LIMIT} entries, so no answer
 * costs the loop more than one pass over a table and a page's worth of maps. The counters are the
 * ones the metrics read, so both agree.
 *
 * <p>Stateless: safe to call from any thread.
 */
final class RouterAdmin implements AdminApi {
  /** The version prefix of every path of this API. */
  static final String V1 = PREFIX + "/v1";

  /** Entries of a page when {@code limit} is not given. */
  static final int DEFAULT_LIMIT = 100;

  /** Most entries of a page. */
  static final int MAX_LIMIT = 1000;

  private static final List<String> ENDPOINTS =
      List.of("router", "links", "hosts", "routes", "predicates", "neighbours");

  private final RouterConfig config;
  private final EventLoop loop;
  private final RoutingNode node;
  private final RouterLinks links;
  private final Hosts hosts;
  private final KernelFastPath kernel;
  private final Supplier<Map<String, Object>> listening;

  /**
   * @param listening the router's bound addresses by port name, read when {@code /router} is asked
   */
  RouterAdmin(
      RouterConfig config,
      EventLoop loop,
      RoutingNode node,
      RouterLinks links,
      Hosts hosts,
      KernelFastPath kernel,
      Supplier<Map<String, Object>> listening) {
    this.config = config;
    this.loop = loop;
    this.node = node;
    this.links = links;
    this.hosts = hosts;
    this.kernel = kernel;
    this.listening = listening;
  }

  /** A malformed query parameter: answered 400 with its message. */
  private static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;

    BadRequest(String message) {
      super(message, null, false, false);
    }
  }

  /** A page's bounds from {@code limit} and {@code after}. */
  private record Page(int after, int limit) {}

  @Override
  public CompletableFuture<Reply> get(String path, Map<String, List<String>> query) {
    String p =
        path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
    if (p.equals(PREFIX)) {
      return done(ok(Map.of("versions", List.of(V1))));
    }
    if (p.equals(V1)) {
      Map<String, Object> index = new LinkedHashMap<>();
      index.put("version", 1);
      List<String> paths = new ArrayList<>();
      for (String e : ENDPOINTS) {
        paths.add(V1 + "/" + e);
      }
      index.put("endpoints", paths);
      return done(ok(index));
    }
    if (!p.startsWith(V1 + "/")) {
      return done(notFound(path));
    }
    String endpoint = p.substring(V1.length() + 1);
    Page page;
    try {
      page = page(query);
    } catch (BadRequest e) {
      return done(Reply.error(HttpResponseStatus.BAD_REQUEST, e.getMessage()));
    }
    Supplier<Object> read =
        switch (endpoint) {
          case "router" -> this::router;
          case "links" -> this::links;
          case "hosts" -> () -> hosts(page);
          case "routes" -> () -> routes(page);
          case "predicates" -> () -> predicates(page);
          case "neighbours" -> this::neighbours;
          default -> null;
        };
    if (read == null) {
      return done(notFound(path));
    }
    return CompletableFuture.supplyAsync(read, loop).thenApply(RouterAdmin::ok);
  }

  private static CompletableFuture<Reply> done(Reply r) {
    return CompletableFuture.completedFuture(r);
  }

  private static Reply ok(Object body) {
    return new Reply(HttpResponseStatus.OK, body);
  }

  private static Reply notFound(String path) {
    return Reply.error(
        HttpResponseStatus.NOT_FOUND,
        "no such path " + path + "; see " + V1 + " for the endpoints");
  }

  /** {@code limit} (1 to {@link #MAX_LIMIT}) and {@code after} (a number from -1), checked. */
  private static Page page(Map<String, List<String>> query) throws BadRequest {
    int limit = integer(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    int after = integer(query, "after", -1, -1, Integer.MAX_VALUE);
    return new Page(after, limit);
  }

  private static int integer(
      Map<String, List<String>> query, String name, int dflt, int min, int max) throws BadRequest {
    List<String> v = query.get(name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v.get(v.size() - 1));
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new BadRequest(name + " must be an integer in " + min + ".." + max);
  }

  // ---- the endpoints, each read on the loop ----

  private Map<String, Object> router() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("router", config.router());
    m.put("epoch", config.epoch());
    m.put("version", Router.class.getPackage().getImplementationVersion());
    m.put("listen", listening.get());
    int up = 0;
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l = links.get(n.router());
      if (l != null && up(l)) {
        up++;
      }
    }
    m.put("neighbours", config.neighbours().size());
    m.put("linksUp", up);
    m.put("hosts", hosts.size());
    m.put("routes", node.unicast().reachable().length);
    m.put("predicateOrigins", node.predicates().size());
    Map<String, Object> fast = new LinkedHashMap<>();
    fast.put("configured", lower(config.fastPath()));
    fast.put("active", kernel.active());
    m.put("fastPath", fast);
    m.put("routing", fields(config.routing()));
    Map<String, Object> bloom = new LinkedHashMap<>();
    bloom.put("bits", config.bloom().bits());
    bloom.put("hashes", config.bloom().hashes());
    m.put("bloom", bloom);
    m.put("limits", fields(config.limits()));
    return m;
  }

  private Map<String, Object> links() {
    List<Object> out = new ArrayList<>();
    DistanceVector dv = node.unicast();
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l = links.get(n.router());
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("router", n.router());
      m.put("cost", n.cost());
      m.put("address", l == null ? text(n.address()) : text(l.dialAddress()));
      Channel s = l == null ? null : l.session;
      boolean up = l != null && up(l);
      m.put("remoteAddress", up ? text(s.remoteAddress()) : null);
      m.put("state", up ? "up" : "down");
      m.put("adjacency", dv.isUp(n.router()));
      m.put("peerEpoch", up ? l.peerEpoch : null);
      m.put("transport", lower(n.transport()));
      m.put(
          "dataTransport",
          l != null && l.path != null ? lower(l.path.transport()) : up ? "tcp" : null);
      m.put("fastPath", kernel.active() && l != null && l.dataBy(RouterConfig.LinkTransport.UDP));
      Map<String, Object> data = new LinkedHashMap<>();
      data.put("in", l == null ? 0 : l.dataIn());
      data.put("out", l == null ? 0 : l.dataOut());
      m.put("data", data);
      Map<String, Object> control = new LinkedHashMap<>();
      control.put("received", l == null ? 0 : l.controlReceived());
      control.put("sent", l == null ? 0 : l.controlSent());
      control.put("deferred", l == null ? 0 : l.controlDeferred.get());
      m.put("control", control);
      Map<String, Object> bytes = new LinkedHashMap<>();
      bytes.put("in", l == null ? 0 : l.bytesIn());
      bytes.put("out", l == null ? 0 : l.bytesOut());
      m.put("bytes", bytes);
      long[] r = l == null ? new long[4] : l.rates();
      Map<String, Object> rates = new LinkedHashMap<>();
      rates.put("dataIn", r[Link.RATE_DATA_IN]);
      rates.put("dataOut", r[Link.RATE_DATA_OUT]);
      rates.put("bytesIn", r[Link.RATE_BYTES_IN]);
      rates.put("bytesOut", r[Link.RATE_BYTES_OUT]);
      m.put("rates", rates);
      Map<String, Object> drops = new LinkedHashMap<>();
      drops.put("data", l == null ? 0 : l.dataDropped());
      drops.put("down", l == null ? 0 : l.droppedDown());
      drops.put("highWater", l == null ? 0 : l.droppedHighWater());
      drops.put("transportFull", l == null ? 0 : l.droppedPathFull());
      m.put("drops", drops);
      ChannelOutboundBuffer buf = up ? s.unsafe().outboundBuffer() : null;
      m.put("queuedBytes", buf == null ? 0 : buf.totalPendingWriteBytes());
      m.put("controlWaitingBytes", l == null ? 0 : l.controlWaitingBytes());
      m.put("writable", up && s.isWritable());
      out.add(m);
    }
    return Map.of("links", out);
  }

  private Map<String, Object> hosts(Page page) {
    List<AttachedHost> got = hosts.sessionsAfter(page.after(), page.limit() + 1);
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < got.size() && i < page.limit(); i++) {
      AttachedHost h = got.get(i);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", h.id);
      m.put("protocol", h.protocol());
      m.put("name", h.name);
      m.put("user", h.user);
      m.put("remoteAddress", text(h.remoteAddress()));
      Predicate p = node.local().predicate(h.id);
      m.put("filters", p == null ? 0 : p.size()); // null: none set yet
      m.put("published", h.publishedCount());
      m.put("delivered", h.delivered());
      m.put("dropped", h.dropped());
      Map<String, Object> rates = new LinkedHashMap<>();
      rates.put("published", h.publishedPerSecond());
      rates.put("delivered", h.deliveredPerSecond());
      m.put("rates", rates);
      out.add(m);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("count", hosts.size());
    m.put("hosts", out);
    m.put("next", got.size() > page.limit() ? got.get(page.limit() - 1).id : null);
    return m;
  }

  private Map<String, Object> routes(Page page) {
    DistanceVector dv = node.unicast();
    int[] reachable = dv.reachable();
    List<Object> out = new ArrayList<>();
    Integer next = null;
    for (int d : reachable) {
      if (d <= page.after()) {
        continue;
      }
      if (out.size() == page.limit()) {
        next = (Integer) ((Map<?, ?>) out.get(out.size() - 1)).get("router");
        break;
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("router", d);
      m.put("metric", dv.metric(d));
      m.put("nextHop", dv.nextHop(d));
      out.add(m);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("count", reachable.length);
    m.put("routes", out);
    m.put("next", next);
    return m;
  }

  private Map<String, Object> predicates(Page page) {
    PredicateTable t = node.predicates();
    List<Object> out = new ArrayList<>();
    Integer next = null;
    int max = config.routing().maxRouters();
    for (int r = Math.max(0, page.after() + 1); r < max; r++) {
      EncodedPredicate p = t.get(r);
      if (p == null) {
        continue;
      }
      if (out.size() == page.limit()) {
        next = (Integer) ((Map<?, ?>) out.get(out.size() - 1)).get("router");
        break;
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("router", r);
      m.put("epoch", t.epoch(r));
      m.put("seq", t.seq(r));
      m.put("filters", p.size());
      m.put("bytes", p.byteSize());
      out.add(m);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("origins", t.size());
    m.put("filterBytes", t.filterBytes());
    m.put("indexReady", t.indexReady());
    m.put("predicates", out);
    m.put("next", next);
    return m;
  }

  private Map<String, Object> neighbours() {
    List<Object> out = new ArrayList<>();
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l = links.get(n.router());
      boolean up = l != null && up(l);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("router", n.router());
      // A configured address wins: it may be one the neighbour cannot know (NAT, a service).
      String admin = n.admin();
      String source = admin == null ? null : "configured";
      if (admin == null && l != null && l.advertisedAdmin != null) {
        admin = l.advertisedAdmin;
        source = "advertised";
      }
      m.put("admin", admin);
      m.put("adminSource", source);
      m.put("routerAddress", up ? text(l.session.remoteAddress()) : text(n.address()));
      m.put("state", up ? "up" : "down");
      out.add(m);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("router", config.router());
    m.put("neighbours", out);
    return m;
  }

  // ---- helpers ----

  private static boolean up(Link l) {
    return l.session != null && l.session.isActive();
  }

  private static String text(SocketAddress a) {
    if (a instanceof java.net.InetSocketAddress i) {
      return i.getHostString() + ":" + i.getPort();
    }
    return a == null ? null : a.toString();
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  /** A record's components by name, nested records as maps, enums in lower case. */
  static Map<String, Object> fields(Record r) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (RecordComponent c : r.getClass().getRecordComponents()) {
      Object v;
      try {
        v = c.getAccessor().invoke(r);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot read " + c.getName() + " of " + r, e);
      }
      if (v instanceof Record nested) {
        v = fields(nested);
      } else if (v instanceof Enum<?> e) {
        v = lower(e);
      }
      m.put(c.getName(), v);
    }
    return m;
  }
}
