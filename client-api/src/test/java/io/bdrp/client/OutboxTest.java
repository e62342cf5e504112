package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Frames queued from any thread leave in order, in one buffer and one flush per drain. */
class OutboxTest {
  private final EmbeddedChannel ch = new EmbeddedChannel();
  private final Requests requests = new Requests(Runnable::run);

  @AfterEach
  void tearDown() {
    ch.finishAndReleaseAll();
  }

  private static Message msg(long n) {
    return Message.builder().put("n", n).build();
  }

  /** The frames in one written buffer, in order; releases it. */
  private static List<ClientFrame> frames(ByteBuf written) {
    List<ClientFrame> out = new ArrayList<>();
    try {
      while (written.isReadable()) {
        int length = written.getInt(written.readerIndex());
        ByteBuf one = written.readSlice(4 + length);
        out.add(ClientFrameCodec.decode(one));
      }
    } finally {
      written.release();
    }
    return out;
  }

  @Test
  void sendsAndRequestsLeaveInTheOrderQueuedInOneWrite() {
    Outbox outbox = new Outbox(() -> ch, ch.eventLoop(), requests, Runnable::run, "r:1");
    CompletableFuture<Void> sent1 = new CompletableFuture<>();
    CompletableFuture<Void> sent2 = new CompletableFuture<>();
    CompletableFuture<Void> asked = new CompletableFuture<>();
    long id = requests.add(asked);
    Predicate p = Predicate.parse("n > 1");
    outbox.enqueue(new ClientFrame.Send(0, msg(1)), sent1, 0);
    outbox.enqueue(new ClientFrame.SetPredicate(id, p), null, id);
    outbox.enqueue(new ClientFrame.Send(0, msg(2)), sent2, 0);
    assertNull(ch.readOutbound(), "written by the I/O thread, not by the caller");
    assertFalse(sent1.isDone());

    ch.runPendingTasks(); // the I/O thread drains
    ByteBuf written = ch.readOutbound();
    assertNull(ch.readOutbound(), "one buffer for the whole queue");
    assertEquals(
        List.of(
            new ClientFrame.Send(0, msg(1)),
            new ClientFrame.SetPredicate(id, p),
            new ClientFrame.Send(0, msg(2))),
        frames(written));
    assertTrue(sent1.isDone() && !sent1.isCompletedExceptionally());
    assertTrue(sent2.isDone() && !sent2.isCompletedExceptionally());
    assertFalse(asked.isDone(), "a request waits for the router's answer");
  }

  @Test
  void withoutASessionEveryQueuedFrameFails() {
    Outbox outbox = new Outbox(() -> null, ch.eventLoop(), requests, Runnable::run, "r:1");
    CompletableFuture<Void> sent = new CompletableFuture<>();
    CompletableFuture<Void> asked = new CompletableFuture<>();
    long id = requests.add(asked);
    outbox.enqueue(new ClientFrame.Send(0, msg(1)), sent, 0);
    outbox.enqueue(new ClientFrame.Ping(id), null, id);
    ch.runPendingTasks();
    for (CompletableFuture<Void> f : List.of(sent, asked)) {
      CompletionException e =
          org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
      assertInstanceOf(IOException.class, e.getCause());
      assertEquals("not connected to r:1", e.getCause().getMessage());
    }
    assertEquals(0, requests.size());
    assertNull(ch.readOutbound());
  }

  @Test
  void framesQueuedForASessionThatHasJustClosedFail() {
    // The connection has closed, and the client has not yet heard of it.
    Outbox outbox = new Outbox(() -> ch, ch.eventLoop(), requests, Runnable::run, "r:1");
    ch.close();
    CompletableFuture<Void> sent = new CompletableFuture<>();
    outbox.enqueue(new ClientFrame.Send(0, msg(1)), sent, 0);
    ch.runPendingTasks();
    CompletionException e = assertThrows(CompletionException.class, sent::join);
    assertEquals("not connected to r:1", e.getCause().getMessage());
    assertNull(ch.readOutbound());
  }
}
