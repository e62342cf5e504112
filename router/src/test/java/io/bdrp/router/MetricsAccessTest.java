package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics endpoint, and the admin API beside it, with basic authentication and TLS: real HTTP
 * requests on loopback.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsAccessTest {
  private static final String PASSWORD = ClientAuth.newToken();

  @TempDir Path dir;
  private Router router;

  @AfterEach
  void stop() {
    if (router != null) {
      router.close();
    }
  }

  private static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  private static HttpResponse<String> get(HttpClient c, String url, String authorization)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theMetricsNeedTheUserAndPasswordAndComeOverTls() throws Exception {
    TestCerts ca = TestCerts.ca(dir, "metrics-ca");
    Path[] leaf = ca.leaf("router-7", "IP:127.0.0.1");
    router =
        Router.start(
            RouterConfig.parse(
                "router: 7\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                    + " metrics: \"127.0.0.1:0\"}\nauth: {metrics: {user: prom, password: \""
                    + ClientAuth.hashLine(PASSWORD)
                    + "\"}}\ntls: {cert: "
                    + leaf[0]
                    + ", key: "
                    + leaf[1]
                    + ", metrics: true}",
                "r7.yaml"));
    String url = "https://127.0.0.1:" + router.metricsAddress().getPort() + "/metrics";
    HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(ca.cert())).build();
    assertEquals(401, get(trusting, url, null).statusCode());
    assertEquals(401, get(trusting, url, basic("prom", "wrong")).statusCode());
    assertEquals(401, get(trusting, url, basic("other", PASSWORD)).statusCode());
    assertEquals(401, get(trusting, url, "Basic !!!").statusCode());
    HttpResponse<String> ok = get(trusting, url, basic("prom", PASSWORD));
    assertEquals(200, ok.statusCode());
    assertTrue(ok.body().contains("bdrp_"), ok.body());
    // The admin API on the same port: the same user, over the same TLS.
    String admin = url.replace("/metrics", "/admin/v1/router");
    assertEquals(401, get(trusting, admin, null).statusCode());
    HttpResponse<String> router7 = get(trusting, admin, basic("prom", PASSWORD));
    assertEquals(200, router7.statusCode());
    assertTrue(router7.body().startsWith("{\"router\":7,"), router7.body());
    // Plain HTTP gets nothing from a TLS endpoint.
    HttpClient plain = HttpClient.newHttpClient();
    assertThrows(
        java.io.IOException.class,
        () -> get(plain, url.replace("https:", "http:"), basic("prom", PASSWORD)));
  }

  @Test
  void aNeighbourListsAnHttpsAdminApiAsHttpsAndItAnswersThereToTheMetricsUser() throws Exception {
    TestCerts ca = TestCerts.ca(dir, "metrics-ca");
    Path[] leaf = ca.leaf("router-7", "IP:127.0.0.1");
    String listen =
        "listen: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\", metrics: \"127.0.0.1:0\"}\n";
    router =
        Router.start(
            RouterConfig.parse(
                "router: 7\n"
                    + listen
                    + "neighbours: [{router: 8}]\nauth: {metrics: {user: prom, password: \""
                    + ClientAuth.hashLine(PASSWORD)
                    + "\"}}\ntls: {cert: "
                    + leaf[0]
                    + ", key: "
                    + leaf[1]
                    + ", metrics: true}",
                "r7.yaml"));
    try (Router r8 =
        Router.start(
            RouterConfig.parse("router: 8\n" + listen + "neighbours: [{router: 7}]", "r8.yaml"))) {
      router.connect(8, r8.routerAddress());
      Federation.await("the link up", () -> r8.view().linkUp(7));
      HttpClient plain = HttpClient.newHttpClient();
      HttpResponse<String> ns =
          get(
              plain,
              "http://127.0.0.1:" + r8.metricsAddress().getPort() + "/admin/v1/neighbours",
              null);
      assertEquals(200, ns.statusCode());
      String told = "https://127.0.0.1:" + router.metricsAddress().getPort();
      assertTrue(
          ns.body().contains("\"admin\":\"" + told + "\",\"adminSource\":\"advertised\""),
          ns.body());
      HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(ca.cert())).build();
      HttpResponse<String> router7 =
          get(trusting, told + "/admin/v1/router", basic("prom", PASSWORD));
      assertEquals(200, router7.statusCode());
      assertTrue(router7.body().startsWith("{\"router\":7,"), router7.body());
    }
  }

  @Test
  void withoutAuthMetricsTheEndpointStaysOpen() throws Exception {
    router =
        Router.start(
            RouterConfig.parse(
                "router: 7\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\","
                    + " metrics: \"127.0.0.1:0\"}",
                "r7.yaml"));
    String url = "http://127.0.0.1:" + router.metricsAddress().getPort() + "/metrics";
    assertEquals(200, get(HttpClient.newHttpClient(), url, null).statusCode());
  }

  private static SSLContext trusting(Path caCert) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(caCert)) {
      ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext c = SSLContext.getInstance("TLS");
    c.init(null, tmf.getTrustManagers(), null);
    return c;
  }
}
