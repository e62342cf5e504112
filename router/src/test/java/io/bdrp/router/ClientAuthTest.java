package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.transport.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Client authentication and content permissions, over real sockets against a real router. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientAuthTest {
  private static final String ALICE = ClientAuth.newToken();
  private static final String BOB = ClientAuth.newToken();

  private Router router;

  /** Alice may receive only news; Bob may send only news; anonymous clients as given. */
  private Router start(ClientAuth.Permissions anonymous) throws InterruptedException {
    ClientAuth auth =
        new ClientAuth(
            List.of(
                ClientAuth.user(
                    "alice",
                    ClientAuth.hashLine(ALICE),
                    new ClientAuth.Permissions("alice", Predicate.parse("topic = \"news\""), null)),
                ClientAuth.user(
                    "bob",
                    ClientAuth.hashLine(BOB),
                    new ClientAuth.Permissions("bob", null, Predicate.parse("topic = \"news\"")))),
            anonymous);
    router = Router.start(Federation.loneRouter().withClientAuth(auth));
    return router;
  }

  @AfterEach
  void stop() {
    if (router != null) {
      router.close();
    }
  }

  private BdrpClient.Builder client(String token) {
    return BdrpClient.builder().router(router.clientAddress()).reconnect(false).authToken(token);
  }

  private long metric(String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)").matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  @Test
  void clientsWithoutAValidTokenAreRefusedAndCounted() throws Exception {
    start(null);
    String big = "x".repeat(1024);
    for (String token : new String[] {"", ClientAuth.newToken(), big}) {
      BdrpClient.RouterException e =
          assertThrows(BdrpClient.RouterException.class, () -> client(token).connect().close());
      assertEquals(ErrorCode.NOT_AUTHORIZED.number(), e.code(), e.getMessage());
    }
    assertEquals(
        3, metric("bdrp_connections_closed_total{port=\"clients\",reason=\"not_authorized\"}"));
    try (BdrpClient alice = client(ALICE).connect()) {
      assertTrue(alice.isConnected());
    }
  }

  @Test
  void aSubscriberNeverReceivesOutsideItsPermissionWhateverItAsksFor() throws Exception {
    start(null);
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    try (BdrpClient alice = client(ALICE).name("alice").onMessage(got::add).connect();
        BdrpClient pub = client(ALICE).name("alice-pub").connect()) {
      // Asks for everything with a topic: gets only the news its permission allows.
      alice.setPredicate(Predicate.parse("exists(topic)")).get(10, TimeUnit.SECONDS);
      pub.sendAcknowledged(Message.builder().put("topic", "secret").put("n", 1L).build())
          .get(10, TimeUnit.SECONDS);
      pub.sendAcknowledged(Message.builder().put("topic", "news").put("n", 2L).build())
          .get(10, TimeUnit.SECONDS);
      // Deliveries from one session keep their order: the secret would have come first.
      Message first = got.poll(10, TimeUnit.SECONDS);
      assertEquals("2", first.get("n").toString(), "the first delivery is the news: " + first);
      assertNull(got.poll(0, TimeUnit.SECONDS));
    }
  }

  @Test
  void aMessageOutsideThePublishPermissionIsRefusedWithItsReasonAndTheSessionGoesOn()
      throws Exception {
    start(null);
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    try (BdrpClient alice = client(ALICE).onMessage(got::add).connect();
        BdrpClient bob = client(BOB).connect()) {
      alice.setPredicate(Predicate.parse("exists(topic)")).get(10, TimeUnit.SECONDS);
      ExecutionException e =
          assertThrows(
              ExecutionException.class,
              () ->
                  bob.sendAcknowledged(Message.builder().put("topic", "sport").build())
                      .get(10, TimeUnit.SECONDS));
      BdrpClient.RouterException re =
          assertInstanceOf(BdrpClient.RouterException.class, e.getCause());
      assertEquals(ErrorCode.NOT_AUTHORIZED.number(), re.code());
      assertTrue(re.getMessage().contains("bob's publish permission"), re.getMessage());
      assertEquals(1, metric("bdrp_client_sends_refused_total{reason=\"publish_permission\"}"));
      assertTrue(bob.isConnected(), "the session stays open");
      bob.sendAcknowledged(Message.builder().put("topic", "news").build())
          .get(10, TimeUnit.SECONDS);
      assertEquals("\"news\"", got.poll(10, TimeUnit.SECONDS).get("topic").toString());
    }
  }

  @Test
  void anonymousClientsGetTheAnonymousPermissionsOnlyWhereTheConfigAllows() throws Exception {
    start(new ClientAuth.Permissions("anonymous", Predicate.parse("public = true"), null));
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    try (BdrpClient anon = client("").onMessage(got::add).connect();
        BdrpClient pub = client(ALICE).connect()) {
      anon.setPredicate(Predicate.parse("exists(n)")).get(10, TimeUnit.SECONDS);
      pub.sendAcknowledged(Message.builder().put("n", 1L).build()).get(10, TimeUnit.SECONDS);
      pub.sendAcknowledged(Message.builder().put("n", 2L).put("public", true).build())
          .get(10, TimeUnit.SECONDS);
      assertEquals("2", got.poll(10, TimeUnit.SECONDS).get("n").toString());
    }
    // A wrong token is refused even though anonymous clients are served.
    assertThrows(BdrpClient.RouterException.class, () -> client("wrong").connect().close());
  }

  @Test
  void tokensAreKeptAsSaltedHashesAndPermissionsIntersectExactly() {
    String line = ClientAuth.hashLine("s3cret");
    assertFalse(line.contains("s3cret"));
    assertTrue(line.startsWith("sha256:"));
    assertFalse(line.equals(ClientAuth.hashLine("s3cret")), "a fresh salt each time");
    ClientAuth auth =
        new ClientAuth(List.of(ClientAuth.user("u", line, ClientAuth.Permissions.ALL)), null);
    assertEquals(
        ClientAuth.Permissions.ALL, auth.authenticate("s3cret".getBytes(StandardCharsets.UTF_8)));
    assertNull(auth.authenticate("s3cret!".getBytes(StandardCharsets.UTF_8)));
    assertNull(auth.authenticate(new byte[0]));
    // A router without users checks no token, as before authentication.
    assertEquals(
        ClientAuth.Permissions.ALL,
        ClientAuth.OPEN.authenticate("anything".getBytes(StandardCharsets.UTF_8)));
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> ClientAuth.user("u", "plain-token", ClientAuth.Permissions.ALL));
    assertTrue(bad.getMessage().contains("bdrp auth token --user u"), bad.getMessage());
    // (x > 1 || y = 2) within x < 5: two conjunctions; one that contradicts the permission goes.
    Predicate within =
        ClientAuth.intersect(Predicate.parse("x > 1 || y = 2"), Predicate.parse("x < 5"));
    assertEquals(Predicate.parse("(x > 1 && x < 5) || (y = 2 && x < 5)"), within);
    assertEquals(
        Predicate.parse("x < 5 && x > 1"),
        ClientAuth.intersect(Predicate.parse("x > 1 || x > 9"), Predicate.parse("x < 5")));
  }
}
