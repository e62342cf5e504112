package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.router.security.ClientTls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** TLS on the client port: real handshakes on loopback with certificates made by openssl. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientTlsTest {
  @TempDir static Path dir;
  private static TestCerts ca;
  private static TestCerts otherCa;
  private static Path[] leaf;
  private static Path[] wrongName;

  @BeforeAll
  static void certificates() throws Exception {
    ca = TestCerts.ca(dir, "test-ca");
    otherCa = TestCerts.ca(dir, "other-ca");
    leaf = ca.leaf("router-0", "IP:127.0.0.1");
    wrongName = ca.leaf("router-elsewhere", "IP:10.9.9.9");
  }

  private Router router;

  private Router start(Path[] certAndKey) throws InterruptedException {
    router =
        Router.start(
            Federation.loneRouter().withClientTls(ClientTls.load(certAndKey[0], certAndKey[1])));
    return router;
  }

  @AfterEach
  void stop() {
    if (router != null) {
      router.close();
    }
  }

  private BdrpClient.Builder client() {
    return BdrpClient.builder()
        .router("127.0.0.1", router.clientAddress().getPort())
        .reconnect(false)
        .connectTimeout(java.time.Duration.ofSeconds(3));
  }

  @Test
  void aClientThatTrustsTheRoutersCaPublishesAndReceivesOverTls() throws Exception {
    start(leaf);
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    try (BdrpClient c = client().tls(ca.cert()).onMessage(got::add).connect()) {
      c.setPredicate(Predicate.parse("x > 1")).get(10, TimeUnit.SECONDS);
      c.sendAcknowledged(Message.builder().put("x", 2L).build()).get(10, TimeUnit.SECONDS);
      assertEquals("2", got.poll(10, TimeUnit.SECONDS).get("x").toString());
    }
  }

  @Test
  void aCertificateFromAnotherCaOrForAnotherAddressIsRefusedByTheClient() throws Exception {
    start(leaf);
    IOException wrongCa =
        assertThrows(IOException.class, () -> client().tls(otherCa.cert()).connect().close());
    assertTrue(
        String.valueOf(wrongCa.getMessage()).toLowerCase().contains("certif")
            || String.valueOf(wrongCa.getCause()).toLowerCase().contains("certif"),
        String.valueOf(wrongCa));
    router.close();
    start(wrongName);
    IOException elsewhere =
        assertThrows(IOException.class, () -> client().tls(ca.cert()).connect().close());
    assertTrue(
        String.valueOf(elsewhere).contains("127.0.0.1")
            || String.valueOf(elsewhere.getCause()).contains("127.0.0.1"),
        String.valueOf(elsewhere));
  }

  @Test
  void aRenewedCertificateIsUsedForNewSessionsWhileOpenOnesGoOn() throws Exception {
    Path live = Files.createDirectories(dir.resolve("live"));
    Path crt = live.resolve("r.crt");
    Path key = live.resolve("r.key");
    Files.copy(leaf[0], crt);
    Files.copy(leaf[1], key);
    start(new Path[] {crt, key});
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    try (BdrpClient before = client().tls(ca.cert()).onMessage(got::add).connect()) {
      before.setPredicate(Predicate.parse("x > 1")).get(10, TimeUnit.SECONDS);
      // Renewed by another CA, so that which certificate a new session gets is plain to see.
      Path[] renewed = otherCa.leaf("router-0-renewed", "IP:127.0.0.1");
      Files.copy(renewed[1], key, StandardCopyOption.REPLACE_EXISTING);
      Files.copy(renewed[0], crt, StandardCopyOption.REPLACE_EXISTING);
      Federation.await("the router to reload its certificate", () -> reloads("ok") >= 1);
      assertThrows(IOException.class, () -> client().tls(ca.cert()).connect().close());
      try (BdrpClient after = client().tls(otherCa.cert()).connect()) {
        after.sendAcknowledged(Message.builder().put("x", 3L).build()).get(10, TimeUnit.SECONDS);
      }
      assertEquals("3", got.poll(10, TimeUnit.SECONDS).get("x").toString(), "the open session");
      // A key that does not belong to the certificate is not taken; the renewed one stays.
      Files.copy(leaf[1], key, StandardCopyOption.REPLACE_EXISTING);
      Federation.await("the router to refuse the mismatched key", () -> reloads("failed") >= 1);
      try (BdrpClient still = client().tls(otherCa.cert()).connect()) {
        assertTrue(still.isConnected());
      }
    }
  }

  private long reloads(String result) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "(?m)^bdrp_tls_reloads_total\\{result=\"" + result + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void anExpiredCertificateIsRefusedByTheClient() throws Exception {
    Path[] expired = ca.leaf("router-0-expired", "IP:127.0.0.1", 0);
    TestCerts.awaitExpiry(expired[0]);
    start(expired);
    IOException e =
        assertThrows(IOException.class, () -> client().tls(ca.cert()).connect().close());
    StringBuilder chain = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      chain.append(t).append(" / ");
    }
    assertTrue(
        chain
            .toString()
            .toLowerCase(java.util.Locale.ROOT)
            .matches(".*(expired|notafter|validity).*"),
        chain.toString());
  }

  @Test
  void aClientCertificateNamingAUserSignsInAsThatUserWithoutAToken() throws Exception {
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.User.withCertificate(
                    "carol",
                    new ClientAuth.Permissions(
                        "carol", null, Predicate.parse("topic = \"news\"")))),
            null);
    router =
        Router.start(
            Federation.loneRouter()
                .withClientTls(ClientTls.load(leaf[0], leaf[1], ca.cert()))
                .withClientAuth(auth));
    Path[] carol = ca.leaf("carol", "URI:" + ClientAuth.USER_URN + "carol");
    try (BdrpClient c = client().tls(ca.cert(), carol[0], carol[1]).connect()) {
      c.sendAcknowledged(Message.builder().put("topic", "news").build()).get(10, TimeUnit.SECONDS);
      // Carol's publish permission applies: she is known by her certificate alone.
      java.util.concurrent.ExecutionException refused =
          assertThrows(
              java.util.concurrent.ExecutionException.class,
              () ->
                  c.sendAcknowledged(Message.builder().put("topic", "sport").build())
                      .get(10, TimeUnit.SECONDS));
      assertTrue(refused.getCause().getMessage().contains("carol's publish permission"));
    }
    Path[] mallory = ca.leaf("mallory", "URI:" + ClientAuth.USER_URN + "mallory");
    BdrpClient.RouterException notAUser =
        assertThrows(
            BdrpClient.RouterException.class,
            () -> client().tls(ca.cert(), mallory[0], mallory[1]).connect().close());
    assertTrue(notAUser.getMessage().contains("names user 'mallory'"), notAUser.getMessage());
    Path[] rogue = otherCa.leaf("rogue-carol", "URI:" + ClientAuth.USER_URN + "carol");
    assertThrows(
        IOException.class, () -> client().tls(ca.cert(), rogue[0], rogue[1]).connect().close());
    assertThrows(BdrpClient.RouterException.class, () -> client().tls(ca.cert()).connect().close());
  }

  @Test
  void aPlainClientGetsNoSessionOnATlsPort() throws Exception {
    start(leaf);
    assertThrows(IOException.class, () -> client().connect().close());
  }

  @Test
  void theConfigNamesTheFileItCannotUse() throws Exception {
    Path missing = dir.resolve("missing.crt");
    RouterConfig.ConfigException e =
        assertThrows(
            RouterConfig.ConfigException.class,
            () ->
                RouterConfig.parse(
                    "router: 0\ntls: {cert: " + missing + ", key: " + leaf[1] + "}", "t.yaml"));
    assertTrue(e.getMessage().contains("tls.cert: cannot read " + missing), e.getMessage());
    Path garbage = Files.writeString(dir.resolve("garbage.crt"), "not a certificate");
    RouterConfig.ConfigException g =
        assertThrows(
            RouterConfig.ConfigException.class,
            () ->
                RouterConfig.parse(
                    "router: 0\ntls: {cert: " + garbage + ", key: " + leaf[1] + "}", "t.yaml"));
    assertTrue(
        g.getMessage().startsWith("t.yaml: tls: cannot") && g.getMessage().contains("garbage.crt"),
        g.getMessage());
    RouterConfig.ConfigException pair =
        assertThrows(
            RouterConfig.ConfigException.class,
            () ->
                RouterConfig.parse(
                    "router: 0\ntls: {cert: " + leaf[0] + ", key: " + wrongName[1] + "}",
                    "t.yaml"));
    assertTrue(
        pair.getMessage().contains("is not the private key of " + leaf[0]), pair.getMessage());
    RouterConfig ok =
        RouterConfig.parse("router: 0\ntls: {cert: " + leaf[0] + ", key: " + leaf[1] + "}", "t");
    assertEquals(leaf[0], ok.clientTls().cert());
  }
}
