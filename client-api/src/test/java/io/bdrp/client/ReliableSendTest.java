package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reliable publishing against a {@link FakeRouter} on loopback: confirmations, UNREACHED, refusals,
 * OVERLOADED and its resends, the window of unconfirmed messages, and the resends of a new session.
 * Every wait is on a future or a queue, with a timeout.
 */
@Timeout(60)
class ReliableSendTest {
  private static final long WAIT_SECONDS = 10;

  private FakeRouter router;
  private BdrpClient client;

  @AfterEach
  void tearDown() throws IOException {
    if (client != null) {
      client.close();
    }
    if (router != null) {
      router.close();
    }
  }

  private static Message msg(int i) {
    return Message.builder().put("i", (long) i).build();
  }

  /** Starts the fake router, connects a client to it, and returns the router's side. */
  private FakeRouter.Peer connect(BdrpClient.Builder b) throws Exception {
    router = new FakeRouter();
    CompletableFuture<BdrpClient> connecting =
        b.router("127.0.0.1", router.port()).name("reliable").connectAsync();
    FakeRouter.Peer peer = router.acceptSession(4);
    client = connecting.get(WAIT_SECONDS, TimeUnit.SECONDS);
    return peer;
  }

  private FakeRouter.Peer connect() throws Exception {
    return connect(BdrpClient.builder());
  }

  /** The SEND_RELIABLE of message {@code seq} carrying {@code m}, as the client must send it. */
  private ClientFrame.SendReliable expected(long seq, Message m) {
    return new ClientFrame.SendReliable(
        ReliableSender.correlationId(seq), client.publisherId(), seq, m);
  }

  private static void await(CompletableFuture<?> f) throws Exception {
    f.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void aConfirmationCompletesTheMessagesFuture() throws Exception {
    FakeRouter.Peer peer = connect();
    assertNotEquals(0, client.publisherId());
    CompletableFuture<Void> f1 = client.sendReliable(msg(1));
    CompletableFuture<Void> f2 = client.sendReliable(msg(2));
    assertEquals(expected(1, msg(1)), peer.next());
    assertEquals(expected(2, msg(2)), peer.next());

    peer.send(new ClientFrame.Confirm(client.publisherId(), 2));
    await(f2);
    assertFalse(f1.isDone(), "confirmations name their message");
    peer.send(new ClientFrame.Confirm(client.publisherId() ^ 1, 1)); // another publisher's
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    await(f1);
  }

  @Test
  void aPublisherIdAndFirstNumberFromTheBuilderAreUsed() throws Exception {
    FakeRouter.Peer peer = connect(BdrpClient.builder().publisherId(-42).publisherSeqStart(100));
    assertEquals(-42, client.publisherId());
    client.sendReliable(msg(1));
    client.sendReliable(msg(2));
    assertEquals(
        new ClientFrame.SendReliable(ReliableSender.correlationId(100), -42, 100, msg(1)),
        peer.next());
    assertEquals(
        new ClientFrame.SendReliable(ReliableSender.correlationId(101), -42, 101, msg(2)),
        peer.next());
    assertThrows(IllegalArgumentException.class, () -> BdrpClient.builder().publisherId(0));
    assertThrows(IllegalArgumentException.class, () -> BdrpClient.builder().publisherSeqStart(0));
    assertThrows(IllegalArgumentException.class, () -> BdrpClient.builder().maxUnconfirmed(0));
  }

  @Test
  void unreachedFailsTheFutureWithTheRoutersNamed() throws Exception {
    FakeRouter.Peer peer = connect();
    CompletableFuture<Void> f = client.sendReliable(msg(1));
    peer.next(ClientFrame.SendReliable.class);
    peer.send(new ClientFrame.Unreached(client.publisherId(), 1, new int[] {3, 5}));
    BdrpClient.UnreachedException e =
        assertInstanceOf(BdrpClient.UnreachedException.class, failure(f));
    assertArrayEquals(new int[] {3, 5}, e.routers());
    assertEquals(1, e.publisherSeq());
    assertEquals("reliable message 1 did not reach routers [3, 5]", e.getMessage());
  }

  @Test
  void aRefusalFailsTheFutureAndTheNextMessagesGoOn() throws Exception {
    FakeRouter.Peer peer = connect();
    CompletableFuture<Void> f1 = client.sendReliable(msg(1));
    CompletableFuture<Void> f2 = client.sendReliable(msg(2));
    ClientFrame.SendReliable s1 = peer.next(ClientFrame.SendReliable.class);
    peer.next(ClientFrame.SendReliable.class);
    peer.send(
        new ClientFrame.Error(
            s1.correlationId(), ErrorCode.NOT_AUTHORIZED, "outside the permission", 0));
    BdrpClient.RouterException e = assertInstanceOf(BdrpClient.RouterException.class, failure(f1));
    assertEquals(ErrorCode.NOT_AUTHORIZED.number(), e.code());
    peer.send(new ClientFrame.Confirm(client.publisherId(), 2));
    await(f2);
  }

  @Test
  void overloadedHoldsTheRefusedMessageAndAllAfterItUntilTheNextConfirmation() throws Exception {
    FakeRouter.Peer peer = connect();
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    for (int i = 1; i <= 3; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    peer.send(
        new ClientFrame.Error(
            ReliableSender.correlationId(2), ErrorCode.OVERLOADED, "retention full", 0));
    // The client reads the ERROR before the PONG of this PING: once it completes, the client
    // knows message 2 was refused.
    CompletableFuture<Void> flushed = client.flush();
    peer.next(ClientFrame.Ping.class);
    await(flushed);
    f.add(client.sendReliable(msg(4))); // must not overtake 2
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    await(f.get(0));
    // After the CONFIRM (or the retry's wait), a PING whose PONG (the fake router answers every
    // PING) says every refusal is in.
    assertEquals(new ClientFrame.Ping(ReliableSender.BARRIER), peer.next());
    // 2 and everything after it again, in order, once.
    for (int i = 2; i <= 4; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    assertFalse(f.get(1).isDone(), "OVERLOADED is no answer");
    for (int i = 2; i <= 4; i++) {
      peer.send(new ClientFrame.Confirm(client.publisherId(), i));
    }
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
    CompletableFuture<Void> last = client.flush();
    assertInstanceOf(ClientFrame.Ping.class, peer.next(), "nothing sent a second time");
    await(last);
  }

  @Test
  void overloadedWithoutConfirmationsSendsAgainAfterAShortWait() throws Exception {
    FakeRouter.Peer peer = connect();
    CompletableFuture<Void> f1 = client.sendReliable(msg(1));
    CompletableFuture<Void> f2 = client.sendReliable(msg(2));
    assertEquals(expected(1, msg(1)), peer.next());
    assertEquals(expected(2, msg(2)), peer.next());
    peer.send(
        new ClientFrame.Error(
            ReliableSender.correlationId(1), ErrorCode.OVERLOADED, "retention full", 0));
    assertEquals(new ClientFrame.Ping(ReliableSender.BARRIER), peer.next());
    assertEquals(expected(1, msg(1)), peer.next());
    assertEquals(expected(2, msg(2)), peer.next());
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    peer.send(new ClientFrame.Confirm(client.publisherId(), 2));
    await(f1);
    await(f2);
  }

  @Test
  void refusalsOfWhatWasWrittenBeforeTheResendDoNotMakeItGoTwice() throws Exception {
    FakeRouter.Peer peer = connect();
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      f.add(client.sendReliable(msg(i)));
      assertEquals(expected(i, msg(i)), peer.next());
    }
    // The router refuses 2, and so 3 and 4 after it (it refuses a publisher's later messages
    // until the refused one comes again); the confirmation of 1 comes between those refusals.
    peer.send(
        new ClientFrame.Error(
            ReliableSender.correlationId(2), ErrorCode.OVERLOADED, "retention full", 0));
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    for (int i = 3; i <= 4; i++) {
      peer.send(
          new ClientFrame.Error(
              ReliableSender.correlationId(i), ErrorCode.OVERLOADED, "retention full", 0));
    }
    await(f.get(0));
    // The PONG of the PING comes after the refusals of 3 and 4: 2, 3 and 4 go again once.
    assertEquals(new ClientFrame.Ping(ReliableSender.BARRIER), peer.next());
    for (int i = 2; i <= 4; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    for (int i = 2; i <= 4; i++) {
      peer.send(new ClientFrame.Confirm(client.publisherId(), i));
    }
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
    CompletableFuture<Void> last = client.flush();
    ClientFrame extra = peer.next();
    assertInstanceOf(ClientFrame.Ping.class, extra, () -> "each message sent again once: " + extra);
    await(last);
  }

  @Test
  void theWindowHoldsMessagesBackUntilConfirmationsFreeRoom() throws Exception {
    FakeRouter.Peer peer = connect(BdrpClient.builder().maxUnconfirmed(2));
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    // The PING is queued after the five; the window lets two out before it.
    CompletableFuture<Void> flushed = client.flush();
    assertEquals(expected(1, msg(1)), peer.next());
    assertEquals(expected(2, msg(2)), peer.next());
    peer.next(ClientFrame.Ping.class);
    await(flushed);

    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    assertEquals(expected(3, msg(3)), peer.next());
    flushed = client.flush();
    peer.next(ClientFrame.Ping.class); // and nothing more: 2 and 3 are unconfirmed
    await(flushed);

    peer.send(new ClientFrame.Confirm(client.publisherId(), 3));
    assertEquals(expected(4, msg(4)), peer.next());
    peer.send(new ClientFrame.Confirm(client.publisherId(), 2));
    assertEquals(expected(5, msg(5)), peer.next());
    peer.send(new ClientFrame.Confirm(client.publisherId(), 4));
    peer.send(new ClientFrame.Confirm(client.publisherId(), 5));
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
  }

  @Test
  void aNewSessionSendsTheUnconfirmedAgainInOrderAfterThePredicateAndBeforeNewOnes()
      throws Exception {
    CompletableFuture<Throwable> disconnected = new CompletableFuture<>();
    FakeRouter.Peer peer =
        connect(
            BdrpClient.builder()
                .listener(
                    new BdrpClient.ConnectionListener() {
                      @Override
                      public void disconnected(Throwable cause, boolean willReconnect) {
                        disconnected.complete(cause);
                      }
                    }));
    Predicate p = Predicate.parse("i > 0");
    CompletableFuture<Void> set = client.setPredicate(p);
    ClientFrame.SetPredicate sp = peer.next(ClientFrame.SetPredicate.class);
    peer.send(new ClientFrame.Ok(sp.correlationId()));
    await(set);

    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    for (int i = 1; i <= 3; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    await(f.get(0));
    peer.close();
    await(disconnected);
    f.add(client.sendReliable(msg(4))); // while disconnected: waits, does not fail

    FakeRouter.Peer again = router.acceptSession(5);
    assertEquals(new ClientFrame.SetPredicate(0, p), again.next());
    for (int i = 2; i <= 4; i++) {
      assertEquals(expected(i, msg(i)), again.next());
    }
    assertFalse(f.get(1).isDone(), "still unconfirmed across the reconnect");
    for (int i = 2; i <= 4; i++) {
      again.send(new ClientFrame.Confirm(client.publisherId(), i));
    }
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
  }

  @Test
  void withoutReconnectingABrokenSessionFailsTheUnconfirmed() throws Exception {
    FakeRouter.Peer peer = connect(BdrpClient.builder().reconnect(false));
    CompletableFuture<Void> f = client.sendReliable(msg(1));
    peer.next(ClientFrame.SendReliable.class);
    peer.close();
    assertInstanceOf(IOException.class, failure(f));
    assertInstanceOf(IOException.class, failure(client.sendReliable(msg(2))));
  }

  @Test
  void closingFailsTheUnconfirmed() throws Exception {
    FakeRouter.Peer peer = connect();
    CompletableFuture<Void> f = client.sendReliable(msg(1));
    peer.next(ClientFrame.SendReliable.class);
    client.close();
    Throwable t = assertInstanceOf(IOException.class, failure(f));
    assertEquals("client closed before the message was confirmed", t.getMessage());
    assertInstanceOf(IOException.class, failure(client.sendReliable(msg(2))));
  }

  @Test
  void helloOffersTheSessionVersionOfConfirmRanges() throws Exception {
    router = new FakeRouter();
    CompletableFuture<BdrpClient> connecting =
        BdrpClient.builder().router("127.0.0.1", router.port()).connectAsync();
    FakeRouter.Peer peer = router.accept();
    assertEquals(Frames.SESSION_VERSION, peer.next(ClientFrame.Hello.class).maxVersion());
    peer.send(new ClientFrame.HelloOk(Frames.SESSION_VERSION, 4, "fake"));
    client = connecting.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  @Test
  void aConfirmRangeCompletesExactlyTheFuturesItCovers() throws Exception {
    FakeRouter.Peer peer = connect();
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    for (int i = 1; i <= 6; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    peer.send(new ClientFrame.ConfirmRange(client.publisherId() ^ 1, 1, 6)); // another's
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 2, 4));
    await(f.get(3));
    // The three complete in one task, and the futures of 2 to 4 only.
    assertTrue(f.get(1).isDone() && f.get(2).isDone(), "the whole range at once");
    for (int i : new int[] {0, 4, 5}) {
      assertFalse(f.get(i).isDone(), "message " + (i + 1) + " is outside the range");
    }
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 3, 5)); // 3 and 4 again: no harm
    await(f.get(4));
    assertFalse(f.get(0).isDone() || f.get(5).isDone());
    peer.send(new ClientFrame.Confirm(client.publisherId(), 1));
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 6, 6));
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
    assertEquals(0, client.refusedFrames());
  }

  @Test
  void aConfirmRangeFreesRoomInTheWindowForAllItCovers() throws Exception {
    FakeRouter.Peer peer = connect(BdrpClient.builder().maxUnconfirmed(3));
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    for (int i = 1; i <= 3; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 1, 3));
    for (int i = 4; i <= 6; i++) {
      assertEquals(expected(i, msg(i)), peer.next());
    }
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 4, 6));
    for (CompletableFuture<Void> x : f) {
      await(x);
    }
  }

  @Test
  void confirmationsOfNumbersNeverSentAreIgnoredAndCounted() throws Exception {
    FakeRouter.Peer peer = connect(BdrpClient.builder().maxUnconfirmed(2));
    List<CompletableFuture<Void>> f = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      f.add(client.sendReliable(msg(i)));
    }
    assertEquals(expected(1, msg(1)), peer.next());
    assertEquals(expected(2, msg(2)), peer.next());
    // 3 and 4 wait for room: they were never sent, so this covers only 1 and 2.
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 1, 4));
    await(f.get(1));
    assertEquals(1, client.refusedFrames());
    assertEquals(expected(3, msg(3)), peer.next());
    assertEquals(expected(4, msg(4)), peer.next());
    assertFalse(f.get(2).isDone() || f.get(3).isDone(), "not confirmed before they were sent");
    peer.send(new ClientFrame.Confirm(client.publisherId(), 9)); // never sent either
    peer.send(new ClientFrame.ConfirmRange(client.publisherId(), 3, 4));
    await(f.get(2));
    await(f.get(3));
    assertEquals(2, client.refusedFrames());
  }

  @Test
  void aMalformedConfirmRangeEndsTheSessionWithItsReasonAndIsCounted() throws Exception {
    CompletableFuture<Throwable> disconnected = new CompletableFuture<>();
    FakeRouter.Peer peer =
        connect(
            BdrpClient.builder()
                .listener(
                    new BdrpClient.ConnectionListener() {
                      @Override
                      public void disconnected(Throwable cause, boolean willReconnect) {
                        disconnected.complete(cause);
                      }
                    }));
    CompletableFuture<Void> f = client.sendReliable(msg(1));
    assertEquals(expected(1, msg(1)), peer.next());
    // CONFIRM_RANGE of messages 5 to 4.
    peer.sendBytes(
        java.util.HexFormat.of()
            .parseHex(
                "0000001a010e"
                    + String.format("%016x", client.publisherId())
                    + "0000000000000005"
                    + "0000000000000004"));
    Throwable cause = await(disconnected, WAIT_SECONDS);
    ProtocolException e = assertInstanceOf(ProtocolException.class, cause);
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    assertTrue(e.getMessage().contains("lastSeq 4 below firstSeq 5"), e.getMessage());
    assertEquals(1, client.refusedFrames());
    assertFalse(f.isDone(), "a malformed frame confirms nothing");
    // The next session sends the message again, and its confirmation completes it.
    FakeRouter.Peer again = router.acceptSession(4);
    assertEquals(expected(1, msg(1)), again.next());
    again.send(new ClientFrame.ConfirmRange(client.publisherId(), 1, 1));
    await(f);
  }

  private static <T> T await(CompletableFuture<T> f, long seconds) throws Exception {
    return f.get(seconds, TimeUnit.SECONDS);
  }
}
