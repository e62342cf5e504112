package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Messages the router delivers, against a {@link FakeRouter} on loopback: DELIVER frames read where
 * they arrive reach the handlers in order, among other frames, with names and strings that are not
 * ASCII; one that does not decode ends the session with its reason and is counted.
 */
@Timeout(60)
class DeliveryTest {
  private static final long WAIT_SECONDS = 10;

  private final BlockingQueue<Message> received = new LinkedBlockingQueue<>();
  private final CompletableFuture<Throwable> disconnected = new CompletableFuture<>();
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

  /**
   * Connects a client whose predicate takes every message with {@code n >= 0}; the router's side.
   */
  private FakeRouter.Peer connect() throws Exception {
    router = new FakeRouter();
    CompletableFuture<BdrpClient> connecting =
        BdrpClient.builder()
            .router("127.0.0.1", router.port())
            .reconnect(false)
            .onMessage(received::add)
            .listener(
                new BdrpClient.ConnectionListener() {
                  @Override
                  public void disconnected(Throwable cause, boolean willReconnect) {
                    disconnected.complete(cause);
                  }
                })
            .connectAsync();
    FakeRouter.Peer peer = router.acceptSession(2);
    client = connecting.get(WAIT_SECONDS, TimeUnit.SECONDS);
    CompletableFuture<Void> set = client.setPredicate(Predicate.parse("n >= 0"));
    ClientFrame.SetPredicate sp = peer.next(ClientFrame.SetPredicate.class);
    peer.send(new ClientFrame.Ok(sp.correlationId()));
    set.get(WAIT_SECONDS, TimeUnit.SECONDS);
    return peer;
  }

  private static Message msg(long n) {
    return Message.builder()
        .put("n", n)
        .put("prix€", "naïve " + n)
        .put("ключ", true)
        .body(new byte[] {(byte) n, 1, 2})
        .build();
  }

  private static byte[] frame(ClientFrame f) {
    ByteBuf b = ClientFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, f);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private Message next() throws InterruptedException {
    Message m = received.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertNotNull(m, "no message within " + WAIT_SECONDS + " s");
    return m;
  }

  @Test
  void deliveriesAmongOtherFramesReachTheHandlerInOrder() throws Exception {
    FakeRouter.Peer peer = connect();
    ByteArrayOutputStream write = new ByteArrayOutputStream(); // one write: likely one read
    write.writeBytes(frame(new ClientFrame.Deliver(msg(1))));
    write.writeBytes(frame(new ClientFrame.Ping(99)));
    write.writeBytes(frame(new ClientFrame.Deliver(msg(2))));
    write.writeBytes(frame(new ClientFrame.Deliver(msg(3))));
    peer.sendBytes(write.toByteArray());
    assertEquals(msg(1), next());
    assertEquals(msg(2), next());
    assertEquals(msg(3), next());
    assertEquals(new ClientFrame.Pong(99), peer.next(), "the PING among them answered");
    assertEquals(0, client.refusedFrames());
  }

  @Test
  void aDeliverThatDoesNotDecodeEndsTheSessionWithItsReasonAndIsCounted() throws Exception {
    FakeRouter.Peer peer = connect();
    peer.send(new ClientFrame.Deliver(msg(1)));
    assertEquals(msg(1), next());
    byte[] bad = frame(new ClientFrame.Deliver(msg(2)));
    bad[Frames.PREFIX_BYTES + 2] = 9; // the first attribute's type tag
    peer.sendBytes(bad);
    Throwable cause = disconnected.get(WAIT_SECONDS, TimeUnit.SECONDS);
    ProtocolException e = assertInstanceOf(ProtocolException.class, cause);
    assertEquals(ErrorCode.BAD_MESSAGE, e.code());
    assertEquals("BAD_MESSAGE: bad message: offset 2: unknown type tag 9", e.getMessage());
    assertEquals(3, e.position());
    assertEquals(1, client.refusedFrames());
  }

  /**
   * {@link BdrpClient#publish} sends SENDs the router reads in order, and counts what it takes
   * while disconnected in {@link BdrpClient#unsent()}. Guards against a fire-and-forget message
   * that is lost or reordered without a count.
   */
  @Test
  void publishedMessagesReachTheRouterInOrderAndThoseWithoutASessionAreCounted() throws Exception {
    FakeRouter.Peer peer = connect();
    for (long n = 1; n <= 3; n++) {
      client.publish(msg(n));
    }
    for (long n = 1; n <= 3; n++) {
      assertEquals(new ClientFrame.Send(0, msg(n)), peer.next(ClientFrame.Send.class));
    }
    assertEquals(0, client.unsent());
    peer.close();
    disconnected.get(WAIT_SECONDS, TimeUnit.SECONDS);
    client.publish(msg(4));
    client.publish(msg(5));
    assertEquals(2, client.unsent());
  }
}
