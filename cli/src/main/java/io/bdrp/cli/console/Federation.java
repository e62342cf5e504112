package io.bdrp.cli.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The federation as the console sees it: every router's admin API (docs/admin-api.md) found by
 * starting from the seed addresses and following each router's neighbours' admin addresses, read
 * once per {@link #poll}. A poll asks every known router at once ({@code /router}, {@code /links},
 * {@code /neighbours} and the first page of {@code /hosts}) and makes one JSON picture of the whole
 * federation; a router that does not answer keeps its place, marked as not answering, with what it
 * last said.
 *
 * <p>Polled by one thread at a time (the console's poller); {@link #snapshot} may be read from any
 * thread.
 */
public final class Federation {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long one request may take before its router counts as not answering. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

  private final HttpClient http;
  private final String authorization; // a Basic header value, or null
  private final Map<String, Known> known = new LinkedHashMap<>(); // by admin base URL
  private final java.util.Set<String> aliases = new java.util.HashSet<>(); // see dropAliases
  private volatile byte[] snapshot;
  private volatile Map<Integer, InetSocketAddress> clientAddresses = Map.of();

  /** A router's admin address and what it last answered. */
  private static final class Known {
    final String admin;
    Integer router; // its number, once it has answered
    JsonNode info; // its last /router, /links, /neighbours and /hosts answers
    JsonNode links;
    JsonNode hosts;
    JsonNode neighbours;
    boolean answering;
    String error;

    Known(String admin) {
      this.admin = admin;
    }
  }

  /**
   * @param seeds admin base URLs to start from ({@code http://HOST:PORT} or {@code https://...})
   * @param http the client the requests go by (its TLS trusts the routers' CA)
   * @param authorization the {@code Authorization} header for the metrics user, or null
   */
  public Federation(List<String> seeds, HttpClient http, String authorization) {
    this.http = http;
    this.authorization = authorization;
    for (String s : seeds) {
      add(s);
    }
    this.snapshot = picture();
  }

  /**
   * The HTTP client the console reads routers with: HTTP/1.1, which the routers' metrics port
   * speaks (no h2c upgrade is tried), a connect timeout of {@link #REQUEST_TIMEOUT}, and {@code
   * tls} (or the JDK's default trust when null) for https routers.
   */
  public static HttpClient httpClient(javax.net.ssl.SSLContext tls) {
    HttpClient.Builder b =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(REQUEST_TIMEOUT);
    if (tls != null) {
      b.sslContext(tls);
    }
    return b.build();
  }

  private void add(String admin) {
    String base = admin.endsWith("/") ? admin.substring(0, admin.length() - 1) : admin;
    if (!aliases.contains(base)) {
      known.computeIfAbsent(base, Known::new);
    }
  }

  /**
   * One entry per router: an address at which the router found at an earlier one answers (the same
   * number and epoch; a seed given by name, say, and the address a neighbour lists, which routers
   * tell each other as the IP their sessions come from) is dropped and not followed again.
   */
  private void dropAliases() {
    Map<Integer, Long> found = new java.util.HashMap<>();
    for (java.util.Iterator<Known> i = known.values().iterator(); i.hasNext(); ) {
      Known k = i.next();
      if (!k.answering || k.router == null) {
        continue;
      }
      long epoch = k.info.path("epoch").asLong();
      Long first = found.putIfAbsent(k.router, epoch);
      if (first != null && first == epoch) {
        i.remove();
        aliases.add(k.admin);
      }
    }
  }

  /**
   * Reads every known router once, all at once, follows new neighbours' admin addresses (read at
   * the next poll), and makes the new {@link #snapshot}.
   */
  public void poll() {
    List<Known> all = new ArrayList<>(known.values());
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    for (Known k : all) {
      pending.add(read(k));
    }
    for (CompletableFuture<Void> f : pending) {
      f.join();
    }
    dropAliases();
    for (Known k : List.copyOf(known.values())) {
      if (k.answering && k.neighbours != null) {
        for (JsonNode n : k.neighbours.path("neighbours")) {
          if (n.hasNonNull("admin")) {
            add(n.get("admin").asText());
          }
        }
      }
    }
    snapshot = picture();
    clientAddresses = clientAddresses();
  }

  /**
   * Where each answering router takes clients ({@code listen.clients} of its {@code /router}); a
   * wildcard host (a router listening on every interface) is replaced by its admin URL's host, the
   * address the console reached it by.
   */
  private Map<Integer, InetSocketAddress> clientAddresses() {
    Map<Integer, InetSocketAddress> m = new LinkedHashMap<>();
    for (Known k : known.values()) {
      String at = k.info == null ? "" : k.info.path("listen").path("clients").asText("");
      int colon = at.lastIndexOf(':');
      if (k.router == null || colon < 0) {
        continue;
      }
      String host = at.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      try {
        int port = Integer.parseInt(at.substring(colon + 1));
        if (host.equals("0.0.0.0") || host.equals("::") || host.isEmpty()) {
          host = URI.create(k.admin).getHost().replace("[", "").replace("]", "");
        }
        m.put(k.router, InetSocketAddress.createUnresolved(host, port));
      } catch (IllegalArgumentException e) {
        // not an address: the router cannot be traced from, and the trace request says so
      }
    }
    return Map.copyOf(m);
  }

  /**
   * The client address of router {@code router} (see {@link #poll}), or null when the console knows
   * of none: the router has not answered, or does not listen for clients.
   */
  public InetSocketAddress clientAddress(int router) {
    return clientAddresses.get(router);
  }

  private CompletableFuture<Void> read(Known k) {
    CompletableFuture<JsonNode> router = get(k.admin + "/admin/v1/router");
    CompletableFuture<JsonNode> links = get(k.admin + "/admin/v1/links");
    CompletableFuture<JsonNode> hosts = get(k.admin + "/admin/v1/hosts?limit=1000");
    CompletableFuture<JsonNode> neighbours = get(k.admin + "/admin/v1/neighbours");
    return CompletableFuture.allOf(router, links, hosts, neighbours)
        .handle(
            (v, e) -> {
              if (e != null) {
                k.answering = false;
                k.error = (e.getCause() == null ? e : e.getCause()).toString();
              } else {
                k.info = router.join();
                k.links = links.join();
                k.hosts = hosts.join();
                k.neighbours = neighbours.join();
                k.router = k.info.path("router").asInt();
                k.answering = true;
                k.error = null;
              }
              return null;
            });
  }

  private CompletableFuture<JsonNode> get(String url) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(REQUEST_TIMEOUT).GET();
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofByteArray())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException(url + " answered " + r.statusCode());
              }
              try {
                return JSON.readTree(r.body());
              } catch (java.io.IOException e) {
                throw new IllegalStateException(url + " did not answer JSON", e);
              }
            });
  }

  /**
   * The federation as JSON: {@code {"time": ms, "routers": [{"router": n or null, "admin": url,
   * "answering": bool, "error": text or null, "info": /router, "links": [...], "hosts": /hosts}]}},
   * one entry per known admin address, in the order found (one per router: see {@link
   * #dropAliases}).
   */
  private byte[] picture() {
    ObjectNode root = JSON.createObjectNode();
    root.put("time", System.currentTimeMillis());
    ArrayNode routers = root.putArray("routers");
    for (Known k : known.values()) {
      ObjectNode r = routers.addObject();
      if (k.router == null) {
        r.putNull("router");
      } else {
        r.put("router", k.router);
      }
      r.put("admin", k.admin);
      r.put("answering", k.answering);
      r.put("error", k.error);
      r.set("info", k.info);
      r.set("links", k.links == null ? JSON.createArrayNode() : k.links.path("links"));
      r.set("hosts", k.hosts);
    }
    try {
      return JSON.writeValueAsBytes(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the federation's picture", e);
    }
  }

  /** The last poll's picture of the federation, as JSON bytes. */
  public byte[] snapshot() {
    return snapshot;
  }
}
