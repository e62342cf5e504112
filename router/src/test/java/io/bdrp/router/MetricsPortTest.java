package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.MetricsAccess;
import io.bdrp.router.metrics.MetricsHttp;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The metrics port is a door like the others: its connections are capped and closed when idle, and
 * a configuration cannot ask for TLS on it without a certificate (it was served in plain HTTP).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsPortTest {
  private Router router;
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    if (router != null) {
      router.close();
    }
  }

  private Router start() throws Exception {
    router =
        Router.start(
            RouterConfig.parse(
                "router: 7\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                    + " metrics: \"127.0.0.1:0\"}",
                "r7.yaml"));
    return router;
  }

  private Socket connect() throws Exception {
    Socket s = new Socket();
    sockets.add(s);
    s.connect(router.metricsAddress(), 10_000);
    s.setSoTimeout(30_000);
    return s;
  }

  private long metric(String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)").matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private int scrape() throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + router.metricsAddress().getPort() + "/metrics"))
            .timeout(Duration.ofSeconds(10))
            .build();
    return HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  @Test
  void connectionsBeyondTheCapAreClosedAndIdleOnesEnd() throws Exception {
    start();
    List<Socket> held = new ArrayList<>();
    for (int i = 0; i < MetricsHttp.MAX_CONNECTIONS; i++) {
      held.add(connect());
    }
    // The cap is checked when the router accepts: a connection beyond it is closed at once.
    Socket extra = connect();
    assertEquals(-1, extra.getInputStream().read(), "the connection beyond the cap is closed");
    assertTrue(
        metric("bdrp_connections_closed_total{port=\"metrics\",reason=\"connections\"}") >= 1);
    // The held ones said nothing: each is closed after the idle time, and the port serves again.
    for (Socket s : held) {
      InputStream in = s.getInputStream();
      assertEquals(-1, in.read(), "an idle metrics connection is closed");
    }
    assertEquals(
        MetricsHttp.MAX_CONNECTIONS,
        metric("bdrp_connections_closed_total{port=\"metrics\",reason=\"idle\"}"));
    assertEquals(200, scrape());
  }

  /**
   * The port closes each connection after its answer, and says so: a client that keeps connections
   * (the JDK's {@code HttpClient}) sent its next request on the closing connection and read
   * nothing.
   */
  @Test
  void everyAnswerSaysTheConnectionCloses() throws Exception {
    start();
    for (String request :
        List.of(
            "GET /metrics HTTP/1.1",
            "GET /nothing HTTP/1.1",
            "GET /admin/v1/router HTTP/1.1",
            "POST /admin/v1/router HTTP/1.1")) {
      Socket s = connect();
      s.getOutputStream()
          .write(
              (request + "\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      // The whole answer up to the port's close: its head must carry "connection: close".
      String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      String head = answer.substring(0, Math.max(0, answer.indexOf("\r\n\r\n")));
      assertTrue(
          head.toLowerCase(Locale.ROOT).contains("\r\nconnection: close"),
          request + " answered without connection: close:\n" + head);
    }
  }

  /** A configuration made in code cannot ask for TLS on the metrics port without a certificate. */
  @Test
  void tlsOnTheMetricsPortWithoutACertificateIsRefused() {
    RouterConfig lone = Federation.loneRouter();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new RouterConfig(
                    lone.router(),
                    lone.epoch(),
                    lone.clientListen(),
                    lone.routerListen(),
                    lone.metricsListen(),
                    lone.udpListen(),
                    lone.neighbours(),
                    lone.routing(),
                    lone.bloom(),
                    lone.limits(),
                    lone.routerToken(),
                    lone.fastPath(),
                    lone.clientAuth(),
                    null,
                    null,
                    new MetricsAccess(null, null, true)));
    assertTrue(e.getMessage().contains("tls.metrics"), e.getMessage());
    assertTrue(e.getMessage().contains("tls.cert"), e.getMessage());
  }
}
