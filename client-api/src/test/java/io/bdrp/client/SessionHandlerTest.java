package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.Frames;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A session on an {@link EmbeddedChannel}: the {@link SessionHandler} with the {@link Connection}
 * it reports to, the {@link Requests} it answers and the {@link Subscriptions} it delivers to.
 * Callbacks run on the test's thread, in the order the client hands them over; time is frozen.
 */
class SessionHandlerTest {
  private final List<String> events = new ArrayList<>();
  private final List<Message> received = new ArrayList<>();
  private final BdrpClient.ConnectionListener listener =
      new BdrpClient.ConnectionListener() {
        @Override
        public void connected(int routerNumber) {
          events.add("connected " + routerNumber);
        }

        @Override
        public void disconnected(Throwable cause, boolean willReconnect) {
          events.add("disconnected (" + cause.getMessage() + "), reconnect " + willReconnect);
        }

        @Override
        public void error(int code, String message) {
          events.add("error " + code + " " + message);
        }
      };

  private EmbeddedChannel ch;
  private Requests requests;
  private Subscriptions subscriptions;
  private Connection connection;

  /** Builds the parts around the channel and tells the handler the connection is up. */
  private void start(boolean reconnect) throws Exception {
    ch = new EmbeddedChannel(); // its event loop is the client's I/O "group"
    ch.freezeTime();
    ClientOptions options =
        new ClientOptions(
            InetSocketAddress.createUnresolved("127.0.0.1", 7400),
            java.util.List.of(),
            "unit",
            "secret".getBytes(StandardCharsets.UTF_8),
            null,
            Duration.ofSeconds(5),
            reconnect,
            Frames.DEFAULT_MAX_FRAME_BYTES,
            received::add,
            listener,
            Runnable::run,
            ch.eventLoop(),
            1,
            1,
            1_000);
    ClientThreads threads = new ClientThreads(ch.eventLoop(), Runnable::run);
    requests = new Requests(threads::settle);
    subscriptions = new Subscriptions(options.onMessage(), threads::callback);
    connection =
        new Connection(
            null,
            options,
            threads,
            requests,
            subscriptions,
            new ReliableSender(1, 1, 1_000, threads::settle, new AtomicLong()),
            new AtomicLong());
    ch.pipeline().addLast(new SessionHandler(options, requests, connection));
    ch.pipeline().fireChannelActive(); // the connection is up: the handler says HELLO
  }

  /** Starts and opens a session with router 3. */
  private void open(boolean reconnect) throws Exception {
    start(reconnect);
    assertInstanceOf(ClientFrame.Hello.class, ch.readOutbound());
    ch.writeInbound(new ClientFrame.HelloOk(Frames.VERSION, 3, "r3"));
  }

  @AfterEach
  void tearDown() {
    if (connection != null) {
      connection.close(); // no dialling after the test
    }
    if (ch != null) {
      ch.finishAndReleaseAll();
    }
  }

  private static Throwable failure(CompletableFuture<?> f) {
    try {
      f.join();
      throw new AssertionError("completed normally");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }

  @Test
  void helloCarriesNameAndTokenAndItsAnswerOpensTheSession() throws Exception {
    start(false);
    ClientFrame.Hello hello = ch.readOutbound();
    assertEquals(Frames.SESSION_VERSION, hello.maxVersion());
    assertEquals("unit", hello.clientName());
    assertArrayEquals("secret".getBytes(StandardCharsets.UTF_8), hello.authToken());
    assertFalse(connection.isConnected());

    ch.writeInbound(new ClientFrame.HelloOk(Frames.VERSION, 3, "r3"));
    assertTrue(connection.isConnected());
    assertEquals(3, connection.routerNumber());
    assertTrue(connection.firstConnect.isDone());
    assertEquals(List.of("connected 3"), events);
    assertNull(ch.readOutbound(), "no predicate to register");
  }

  @Test
  void aNewSessionRegistersThePredicateAgain() throws Exception {
    start(true);
    ch.readOutbound(); // HELLO
    Predicate p = Predicate.parse("price > 20");
    subscriptions.add(new Subscriptions.Entry(p, m -> {}));
    ch.writeInbound(new ClientFrame.HelloOk(Frames.VERSION, 3, "r3"));
    assertEquals(new ClientFrame.SetPredicate(0, p), ch.readOutbound());
  }

  @Test
  void answersCompleteTheFuturesOfTheirOwnRequests() throws Exception {
    open(false);
    CompletableFuture<Void> f1 = new CompletableFuture<>();
    CompletableFuture<Void> f2 = new CompletableFuture<>();
    CompletableFuture<Void> f3 = new CompletableFuture<>();
    long id1 = requests.add(f1);
    long id2 = requests.add(f2);
    long id3 = requests.add(f3);

    ch.writeInbound(new ClientFrame.Ok(id1));
    assertTrue(f1.isDone() && !f1.isCompletedExceptionally());
    assertFalse(f2.isDone() || f3.isDone());

    ch.writeInbound(new ClientFrame.Pong(id3)); // a PING's nonce is its request's id
    assertTrue(f3.isDone() && !f3.isCompletedExceptionally());
    assertFalse(f2.isDone());

    ch.writeInbound(new ClientFrame.Error(id2, 9, "bad predicate", 7));
    BdrpClient.RouterException e = assertInstanceOf(BdrpClient.RouterException.class, failure(f2));
    assertEquals(9, e.code());
    assertEquals(7, e.position());
    assertEquals("bad predicate (code 9, at 7)", e.getMessage());
    assertEquals(List.of("connected 3"), events, "answers to requests are not the listener's");
  }

  @Test
  void errorsThatAnswerNoRequestGoToTheListener() throws Exception {
    open(false);
    ch.writeInbound(new ClientFrame.Error(0, 5, "slow consumer", 0));
    ch.writeInbound(new ClientFrame.Error(42, 6, "late", 0)); // nothing waits under 42
    assertEquals(List.of("connected 3", "error 5 slow consumer", "error 6 late"), events);
    assertTrue(ch.isActive(), "an error alone does not end the session");
  }

  @Test
  void theEndOfTheSessionFailsEveryWaitingRequest() throws Exception {
    open(false);
    CompletableFuture<Void> f1 = new CompletableFuture<>();
    CompletableFuture<Void> f2 = new CompletableFuture<>();
    requests.add(f1);
    requests.add(f2);
    ch.close();
    for (CompletableFuture<Void> f : List.of(f1, f2)) {
      Throwable t = assertInstanceOf(IOException.class, failure(f));
      assertEquals("session with 127.0.0.1:7400 closed", t.getMessage());
    }
    assertEquals(0, requests.size());
    assertFalse(connection.isConnected());
    assertEquals(-1, connection.routerNumber());
    assertEquals(
        List.of(
            "connected 3", "disconnected (session with 127.0.0.1:7400 closed), reconnect false"),
        events);
  }

  @Test
  void aBrokenSessionDialsAgainAfterTheFirstBackoff() throws Exception {
    open(true);
    ch.writeInbound(new ClientFrame.Bye());
    assertFalse(ch.isActive(), "BYE closes the connection");
    assertEquals(
        List.of("connected 3", "disconnected (session with 127.0.0.1:7400 closed), reconnect true"),
        events);
    // The only task left on the frozen loop is the next dial, FIRST_MS from now.
    assertEquals(TimeUnit.MILLISECONDS.toNanos(Backoff.FIRST_MS), ch.runScheduledPendingTasks());
  }

  @Test
  void aRefusedHelloFailsTheFirstConnectWithTheRoutersReason() throws Exception {
    start(true);
    ch.readOutbound(); // HELLO
    ch.writeInbound(new ClientFrame.Error(0, 7, "token refused", 0));
    assertFalse(ch.isActive(), "this side closes the connection");
    BdrpClient.RouterException e =
        assertInstanceOf(BdrpClient.RouterException.class, failure(connection.firstConnect));
    assertEquals(7, e.code());
    assertEquals(
        "router 127.0.0.1:7400 refused the session: token refused (code 7)", e.getMessage());
    assertEquals(
        List.of(), events, "a first connect that fails is the caller's, not the listener's");
    assertEquals(-1, ch.runScheduledPendingTasks(), "no dialling again after a first failure");
  }

  @Test
  void noAnswerToHelloWithinTheConnectTimeoutEndsTheAttempt() throws Exception {
    start(false);
    ch.readOutbound(); // HELLO
    ch.advanceTimeBy(4_999, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertTrue(ch.isActive(), "still within the timeout");
    ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertFalse(ch.isActive());
    Throwable t = assertInstanceOf(IOException.class, failure(connection.firstConnect));
    assertEquals(
        "cannot connect to 127.0.0.1:7400: no answer to HELLO within 5000 ms", t.getMessage());
  }

  @Test
  void theMessagesOfOneReadAreDeliveredTogetherInOrder() throws Exception {
    open(false);
    subscriptions.set(Predicate.parse("price > 0"));
    Message a = Message.builder().put("price", 1L).build();
    Message b = Message.builder().put("price", 2L).build();
    Message c = Message.builder().put("price", 3L).build();
    ch.writeInbound(
        new ClientFrame.Deliver(a), new ClientFrame.Deliver(b), new ClientFrame.Deliver(c));
    assertEquals(List.of(a, b, c), received);
  }

  @Test
  void aPingIsAnsweredWithAPongOfTheSameNonce() throws Exception {
    open(false);
    ch.writeInbound(new ClientFrame.Ping(77));
    assertEquals(new ClientFrame.Pong(77), ch.readOutbound());
  }
}
