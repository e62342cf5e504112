package io.bdrp.cli.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The operator's web console: an HTTP server (the JDK's) that serves one page, its script and the
 * graph library (Cytoscape.js, from its WebJar on the class path: no network needed), and {@code
 * GET /api/federation}, the {@link Federation}'s last picture, which a poller thread refreshes
 * every {@link #POLL_MS} ms and the page reads as often; and {@code POST /api/trace}, a message's
 * trace run by the {@link Tracer} from the router the page chose.
 *
 * <p>Paths: {@code /} the page; {@code /console.js}, {@code /console.css}; {@code
 * /lib/cytoscape.min.js}; {@code /api/federation}; {@code /api/trace} (POST only, of {@code
 * application/json} else 415, a body of at most {@link Tracer#MAX_REQUEST_BYTES} else 413).
 * Anything else is 404; a method other than GET (POST for traces) 405.
 *
 * <p>Thread-safe: the poller owns the {@link Federation}; the server's threads read its snapshot.
 */
public final class ConsoleServer implements AutoCloseable {
  /** How often every router is read. */
  public static final long POLL_MS = 1000;

  private static final String RESOURCES = "/io/bdrp/cli/console/";

  private static final Map<String, String> PAGES =
      Map.of(
          "/", "index.html",
          "/index.html", "index.html",
          "/console.js", "console.js",
          "/console.css", "console.css");

  private final Federation federation;
  private final Tracer tracer;
  private final HttpServer server;
  private final ScheduledExecutorService poller;
  private final String cytoscape;

  /**
   * As {@link #ConsoleServer(Federation, InetSocketAddress, UnaryOperator)} with traces run as a
   * client without credentials (routers that do not authenticate clients, without TLS).
   */
  public ConsoleServer(Federation federation, InetSocketAddress listen) {
    this(federation, listen, UnaryOperator.identity());
  }

  /**
   * Starts polling {@code federation} and serving the console on {@code listen} (port 0: one the
   * system picks; see {@link #address}).
   *
   * @param traceClient applies the credentials and TLS settings of traces to a client builder
   * @throws UncheckedIOException if the address cannot be bound
   */
  public ConsoleServer(
      Federation federation,
      InetSocketAddress listen,
      UnaryOperator<io.bdrp.client.BdrpClient.Builder> traceClient) {
    this.federation = federation;
    this.tracer = new Tracer(federation, traceClient);
    this.cytoscape = cytoscapePath();
    try {
      InetSocketAddress bind =
          listen.isUnresolved()
              ? new InetSocketAddress(listen.getHostString(), listen.getPort())
              : listen;
      server = HttpServer.create(bind, 16);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + listen + ": " + e.getMessage(), e);
    }
    server.createContext("/", this::handle);
    // A trace holds its thread for up to its timeout: the others keep serving the page meanwhile.
    server.setExecutor(Executors.newFixedThreadPool(4, daemon("bdrp-console-http")));
    poller = Executors.newSingleThreadScheduledExecutor(daemon("bdrp-console-poll"));
    poller.scheduleWithFixedDelay(this::poll, 0, POLL_MS, TimeUnit.MILLISECONDS);
    server.start();
  }

  private void poll() {
    try {
      federation.poll();
    } catch (RuntimeException e) {
      // A poll that fails as a whole is tried again at the next; routers' failures are in it.
      System.getLogger(ConsoleServer.class.getName())
          .log(System.Logger.Level.WARNING, "polling the federation failed", e);
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Where the WebJar keeps Cytoscape.js, from its pom.properties (the version is the build's). */
  private static String cytoscapePath() {
    String props = "/META-INF/maven/org.webjars.npm/cytoscape/pom.properties";
    try (InputStream in = ConsoleServer.class.getResourceAsStream(props)) {
      if (in == null) {
        throw new IllegalStateException("the cytoscape WebJar is not on the class path");
      }
      Properties p = new Properties();
      p.load(in);
      return "/META-INF/resources/webjars/cytoscape/"
          + p.getProperty("version")
          + "/dist/cytoscape.min.js";
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + props, e);
    }
  }

  /** The bound address. */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** The console's URL, {@code http://HOST:PORT/}. */
  public String url() {
    InetSocketAddress a = address();
    return "http://" + a.getHostString() + ":" + a.getPort() + "/";
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      if (x.getRequestURI().getPath().equals("/api/trace")) {
        trace(x);
        return;
      }
      if (!x.getRequestMethod().equals("GET")) {
        x.getResponseHeaders().set("Allow", "GET");
        send(x, 405, "text/plain", "GET only\n".getBytes(StandardCharsets.UTF_8));
        return;
      }
      String path = x.getRequestURI().getPath();
      if (path.equals("/api/federation")) {
        x.getResponseHeaders().set("Cache-Control", "no-store");
        send(x, 200, "application/json", federation.snapshot());
        return;
      }
      String resource = PAGES.get(path);
      String type = path.endsWith(".js") ? "text/javascript" : "text/html";
      if (path.endsWith(".css")) {
        type = "text/css";
      }
      if (resource != null) {
        resource = RESOURCES + resource;
      } else if (path.equals("/lib/cytoscape.min.js")) {
        resource = cytoscape;
      } else {
        send(
            x, 404, "text/plain", ("no such page " + path + "\n").getBytes(StandardCharsets.UTF_8));
        return;
      }
      try (InputStream in = ConsoleServer.class.getResourceAsStream(resource)) {
        if (in == null) {
          throw new IllegalStateException(resource + " is missing from the class path");
        }
        send(x, 200, type + "; charset=utf-8", in.readAllBytes());
      }
    }
  }

  private void trace(HttpExchange x) throws IOException {
    if (!x.getRequestMethod().equals("POST")) {
      x.getResponseHeaders().set("Allow", "POST");
      send(x, 405, "text/plain", "POST only\n".getBytes(StandardCharsets.UTF_8));
      return;
    }
    String type = x.getRequestHeaders().getFirst("Content-Type");
    if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
      // Only JSON: a page of another site cannot send it without a CORS preflight, which this
      // server does not grant, so it cannot make the console trace with the console's credentials.
      send(
          x,
          415,
          "application/json",
          "{\"error\":\"send the request as Content-Type: application/json\"}"
              .getBytes(StandardCharsets.UTF_8));
      return;
    }
    byte[] body;
    try (InputStream in = x.getRequestBody()) {
      body = in.readNBytes(Tracer.MAX_REQUEST_BYTES + 1);
    }
    Tracer.Answer a =
        body.length > Tracer.MAX_REQUEST_BYTES
            ? new Tracer.Answer(
                413,
                ("{\"error\":\"the request is larger than "
                        + Tracer.MAX_REQUEST_BYTES
                        + " bytes\"}")
                    .getBytes(StandardCharsets.UTF_8))
            : tracer.trace(body);
    x.getResponseHeaders().set("Cache-Control", "no-store");
    send(x, a.status(), "application/json", a.body());
  }

  private static void send(HttpExchange x, int status, String type, byte[] body)
      throws IOException {
    x.getResponseHeaders().set("Content-Type", type);
    x.sendResponseHeaders(status, body.length);
    try (OutputStream o = x.getResponseBody()) {
      o.write(body);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    poller.shutdownNow();
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
