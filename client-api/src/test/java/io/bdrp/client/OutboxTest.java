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

  /**
   * Messages sent without a future go out in order among the other frames, in the same write, and
   * count nothing once written. Guards against a forgotten message that is dropped or reordered.
   */
  @Test
  void messagesWithoutAFutureLeaveInOrderAmongOtherFrames() {
    Outbox outbox = new Outbox(() -> ch, ch.eventLoop(), requests, Runnable::run, "r:1");
    CompletableFuture<Void> sent = new CompletableFuture<>();
    outbox.enqueue(new ClientFrame.Send(0, msg(1)), null, Outbox.FORGET);
    outbox.enqueue(new ClientFrame.Send(0, msg(2)), sent, 0);
    outbox.enqueue(new ClientFrame.Send(0, msg(3)), null, Outbox.FORGET);
    ch.runPendingTasks();
    assertEquals(
        List.of(
            new ClientFrame.Send(0, msg(1)),
            new ClientFrame.Send(0, msg(2)),
            new ClientFrame.Send(0, msg(3))),
        frames(ch.readOutbound()));
    assertTrue(sent.isDone() && !sent.isCompletedExceptionally());
    assertEquals(0, outbox.unsent());
    assertEquals(0, requests.size());
  }

  /**
   * A message sent without a future that is not written is counted: without a session, and when the
   * write itself fails. Guards against losing such messages without a trace.
   */
  @Test
  void messagesWithoutAFutureThatAreNotWrittenAreCounted() {
    Outbox alone = new Outbox(() -> null, ch.eventLoop(), requests, Runnable::run, "r:1");
    alone.enqueue(new ClientFrame.Send(0, msg(1)), null, Outbox.FORGET);
    alone.enqueue(new ClientFrame.Send(0, msg(2)), null, Outbox.FORGET);
    ch.runPendingTasks();
    assertEquals(2, alone.unsent(), "no session");
    assertNull(ch.readOutbound());

    ch.pipeline()
        .addFirst(
            new io.netty.channel.ChannelOutboundHandlerAdapter() {
              @Override
              public void write(
                  io.netty.channel.ChannelHandlerContext ctx,
                  Object m,
                  io.netty.channel.ChannelPromise p) {
                io.netty.util.ReferenceCountUtil.release(m);
                p.setFailure(new IOException("connection reset"));
              }
            });
    Outbox failing = new Outbox(() -> ch, ch.eventLoop(), requests, Runnable::run, "r:1");
    CompletableFuture<Void> sent = new CompletableFuture<>();
    failing.enqueue(new ClientFrame.Send(0, msg(3)), null, Outbox.FORGET);
    failing.enqueue(new ClientFrame.Send(0, msg(4)), sent, 0);
    failing.enqueue(new ClientFrame.Send(0, msg(5)), null, Outbox.FORGET);
    ch.runPendingTasks();
    assertEquals(2, failing.unsent(), "a failed write");
    CompletionException e = assertThrows(CompletionException.class, sent::join);
    assertEquals("connection reset", e.getCause().getMessage());
  }
}
