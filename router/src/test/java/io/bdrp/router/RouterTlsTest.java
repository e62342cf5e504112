package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.RouterTls;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS on router links, the router number bound to the certificate: real handshakes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RouterTlsTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  @TempDir static Path dir;
  private static TestCerts ca;
  private static TestCerts otherCa;

  @BeforeAll
  static void certificates() throws Exception {
    ca = TestCerts.ca(dir, "net-ca");
    otherCa = TestCerts.ca(dir, "rogue-ca");
  }

  private final List<Router> routers = new ArrayList<>();

  @AfterEach
  void stop() {
    routers.forEach(Router::close);
  }

  private Router start(int number, int neighbour, RouterTls tls) throws InterruptedException {
    Router r =
        Router.start(
            new RouterConfig(
                    number,
                    System.currentTimeMillis(),
                    ANY,
                    ANY,
                    null,
                    List.of(new RouterConfig.Neighbour(neighbour, null, 1)),
                    Federation.FAST,
                    BloomParameters.DEFAULT,
                    RouterLimits.DEFAULT,
                    null)
                .withRouterTls(tls));
    routers.add(r);
    return r;
  }

  private static RouterTls tlsFor(TestCerts by, String name, int number) throws Exception {
    Path[] leaf = by.leaf(name, "URI:" + RouterTls.URN + number + ",IP:127.0.0.1");
    return RouterTls.load(number, leaf[0], leaf[1], ca.cert());
  }

  private static long refused(Router r, String parameter) {
    return Federation.linkRefused(r, parameter);
  }

  private static void link(Router a, int na, Router b, int nb) {
    a.connect(nb, b.routerAddress());
    b.connect(na, a.routerAddress());
  }

  @Test
  void routersWithCertificatesFromTheNetworksCaRouteOverTls() throws Exception {
    Router r0 = start(0, 1, tlsFor(ca, "r0", 0));
    Router r1 = start(1, 0, tlsFor(ca, "r1", 1));
    link(r0, 0, r1, 1);
    Federation.await("a route over the TLS link", () -> r0.view().reachable().length == 1);
    assertEquals(1, r1.view().reachable().length);
    assertEquals(0, refused(r0, "tls") + refused(r1, "tls"));
  }

  @Test
  void aPeerWhoseCertificateNamesAnotherRouterIsRefused() throws Exception {
    Router r0 = start(0, 1, tlsFor(ca, "honest-r0", 0));
    // A valid certificate of the network, for router 2, in a process that says it is router 1.
    Path[] r2 = ca.leaf("stolen-r2", "URI:" + RouterTls.URN + "2,IP:127.0.0.1");
    RouterTls forged =
        new RouterTls(
            SslContextBuilder.forServer(r2[0].toFile(), r2[1].toFile())
                .sslProvider(SslProvider.JDK)
                .protocols("TLSv1.3")
                .trustManager(ca.cert().toFile())
                .clientAuth(io.netty.handler.ssl.ClientAuth.REQUIRE)
                .build(),
            SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .protocols("TLSv1.3")
                .keyManager(r2[0].toFile(), r2[1].toFile())
                .trustManager(ca.cert().toFile())
                .endpointIdentificationAlgorithm(null)
                .build());
    Router liar = start(1, 0, forged);
    link(r0, 0, liar, 1);
    Federation.await("router 0 to refuse the certificate", () -> refused(r0, "certificate") >= 1);
    assertEquals(0, r0.view().reachable().length, "no route over a refused link");
  }

  @Test
  void aPeerWithACertificateFromAnotherCaFailsTheHandshake() throws Exception {
    Router r0 = start(0, 1, tlsFor(ca, "r0-b", 0));
    Path[] rogue = otherCa.leaf("rogue-r1", "URI:" + RouterTls.URN + "1,IP:127.0.0.1");
    // Trusts the network's CA (so it would accept router 0) but presents the rogue CA's leaf.
    Router r1 = start(1, 0, RouterTls.load(1, rogue[0], rogue[1], ca.cert()));
    link(r0, 0, r1, 1);
    Federation.await("router 0 to fail the handshake", () -> refused(r0, "tls") >= 1);
    assertEquals(0, r0.view().reachable().length);
  }

  @Test
  void aPeerWithAnExpiredCertificateFailsTheHandshake() throws Exception {
    Router r0 = start(0, 1, tlsFor(ca, "r0-c", 0));
    Path[] expired = ca.leaf("expired-r1", "URI:" + RouterTls.URN + "1,IP:127.0.0.1", 0);
    TestCerts.awaitExpiry(expired[0]);
    Router r1 = start(1, 0, RouterTls.load(1, expired[0], expired[1], ca.cert()));
    link(r0, 0, r1, 1);
    Federation.await("router 0 to refuse the expired certificate", () -> refused(r0, "tls") >= 1);
    assertEquals(0, r0.view().reachable().length);
  }

  @Test
  void theDevelopmentCaScriptMakesCertificatesRoutersLinkWith() throws Exception {
    Path out = dir.resolve("dev-ca");
    Process p =
        new ProcessBuilder("bash", "../scripts/dev-ca", "2", out.toString())
            .redirectErrorStream(true)
            .start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "dev-ca finished");
    String said = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.exitValue(), said);
    Router[] r = new Router[2];
    for (int i = 0; i < 2; i++) {
      RouterConfig c =
          RouterConfig.parse(
              "router: "
                  + i
                  + "\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\"}"
                  + "\nneighbours: [{router: "
                  + (1 - i)
                  + "}]\ntls: {cert: "
                  + out.resolve("r" + i + ".crt")
                  + ", key: "
                  + out.resolve("r" + i + ".key")
                  + ", ca: "
                  + out.resolve("ca.crt")
                  + "}",
              "r" + i + ".yaml");
      r[i] = Router.start(c);
      routers.add(r[i]);
    }
    link(r[0], 0, r[1], 1);
    Federation.await("a route over the link", () -> r[0].view().reachable().length == 1);
  }

  @Test
  void aRoutersOwnCertificateMustNameItsNumber() throws Exception {
    Path[] leaf = ca.leaf("named-3", "URI:" + RouterTls.URN + "3");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> RouterTls.load(4, leaf[0], leaf[1], ca.cert()));
    assertTrue(e.getMessage().contains("names router [3], not this router 4"), e.getMessage());
    RouterConfig c =
        RouterConfig.parse(
            "router: 3\ntls: {cert: " + leaf[0] + ", key: " + leaf[1] + ", ca: " + ca.cert() + "}",
            "t");
    assertTrue(c.routerTls() != null && c.clientTls() != null);
  }
}
