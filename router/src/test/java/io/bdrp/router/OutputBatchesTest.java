package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link OutputBatches} on {@link EmbeddedChannel}s: an input channel stands for the router's loop
 * handling a batch of reads, and each read makes output for other channels (the links and hosts it
 * forwards to). Output is gathered while the batch is handled, and written and flushed once it is
 * done, in the order it was made, with nothing left behind for a later batch.
 */
class OutputBatchesTest {
  /** Runs each read (a task) with the batches, as the router's handlers do. */
  private final EmbeddedChannel input =
      new EmbeddedChannel(
          new ChannelInboundHandlerAdapter() {
            @Override
            @SuppressWarnings("unchecked")
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
              ((Consumer<OutputBatches>) msg).accept(batches);
            }
          });

  private final OutputBatches batches = new OutputBatches(input.eventLoop());
  private final List<Out> outs = new ArrayList<>();

  @AfterEach
  void close() {
    input.finishAndReleaseAll();
    for (Out o : outs) {
      o.ch.finishAndReleaseAll();
    }
  }

  /** An output channel that counts the writes and flushes that reach it. */
  private static final class Out {
    int writes;
    int flushes;
    final EmbeddedChannel ch;

    Out() {
      ch =
          new EmbeddedChannel(
              new ChannelDuplexHandler() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise p) {
                  writes++;
                  ctx.write(msg, p);
                }

                @Override
                public void flush(ChannelHandlerContext ctx) {
                  flushes++;
                  ctx.flush();
                }
              });
    }

    /** The bytes flushed to the channel so far, in order; releases them. */
    byte[] sent() {
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
        all.writeBytes(ByteBufUtil.getBytes(b));
        b.release();
      }
      return all.toByteArray();
    }
  }

  private Out out() {
    Out o = new Out();
    outs.add(o);
    return o;
  }

  private static byte[] frame(int tag, int length) {
    byte[] f = new byte[length];
    java.util.Arrays.fill(f, (byte) tag);
    return f;
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      all.writeBytes(p);
    }
    return all.toByteArray();
  }

  /** A read that writes {@code bytes} as one small frame into {@code o}'s batch. */
  private static Consumer<OutputBatches> small(Out o, byte[] bytes) {
    return b -> b.room(o.ch, bytes.length).writeBytes(bytes);
  }

  @Test
  void framesOfOneReadBatchGoOutInOrderInOneWriteAndOneFlushAtItsEnd() {
    Out a = out();
    Out b = out();
    byte[] a1 = frame(1, 100);
    byte[] b1 = frame(2, 50);
    byte[] a2 = frame(3, 70);
    // The reads of one batch, without the end of the batch: nothing is sent yet.
    input.pipeline().fireChannelRead(small(a, a1));
    input.pipeline().fireChannelRead(small(b, b1));
    input.pipeline().fireChannelRead(small(a, a2));
    assertEquals(0, a.writes + a.flushes + b.writes + b.flushes, "held until the batch is done");
    assertNull(a.ch.readOutbound());
    // The batch ends: the loop runs its queued task.
    input.runPendingTasks();
    assertArrayEquals(concat(a1, a2), a.sent());
    assertArrayEquals(b1, b.sent());
    assertEquals(1, a.writes);
    assertEquals(1, a.flushes);
    assertEquals(1, b.writes);
    assertEquals(1, b.flushes);
  }

  @Test
  void whatABeforeFlushWriterGatheredLeavesAfterTheBatchsOtherOutputInItsOneFlush() {
    Out a = out();
    List<byte[]> gathered = new ArrayList<>();
    batches.beforeFlush(
        () -> {
          for (byte[] g : gathered) {
            batches.room(a.ch, g.length).writeBytes(g);
          }
          gathered.clear();
        });
    input.writeInbound(
        small(a, frame(1, 10)),
        (Consumer<OutputBatches>)
            b -> {
              gathered.add(frame(2, 20)); // held, like a run of confirmations that may grow
              b.flushLater(a.ch);
            },
        small(a, frame(3, 10)));
    assertArrayEquals(concat(frame(1, 10), frame(3, 10), frame(2, 20)), a.sent());
    assertEquals(1, a.writes, "one buffer");
    assertEquals(1, a.flushes, "one flush: the writer's output queued no second one");
    input.runPendingTasks();
    assertEquals(1, a.flushes, "nothing left for later");
  }

  @Test
  void whileInputContinuesSmallBatchesWaitAFewTurnsAndLargeOnesGoAtOnce() {
    List<Runnable> nextTurn = new ArrayList<>();
    OutputBatches turns = new OutputBatches(input.eventLoop(), nextTurn::add);
    Out host = out();
    Out busy = out();
    byte[] large = frame(9, OutputBatches.DEFER_BELOW);
    List<byte[]> smalls = new ArrayList<>();
    // A turn whose read filled its buffer: the small batch waits, the large one goes.
    Runnable read =
        () -> {
          byte[] f = frame(smalls.size() + 1, 100);
          smalls.add(f);
          turns.room(host.ch, f.length).writeBytes(f);
          turns.room(busy.ch, large.length).writeBytes(large);
          turns.inputContinues();
        };
    read.run();
    input.runPendingTasks(); // the turn's end: its queued flush
    assertEquals(0, host.writes, "small: waits for the next turn");
    assertArrayEquals(large, busy.sent(), "large: written and flushed at once");
    for (int turn = 1; turn <= OutputBatches.MAX_DEFERRALS; turn++) {
      assertEquals(1, nextTurn.size(), "one flush queued for the next turn");
      Runnable flush = nextTurn.remove(0);
      read.run(); // the next turn's reads, then its queued flush
      flush.run();
      assertEquals(turn < OutputBatches.MAX_DEFERRALS ? 0 : 1, host.writes, "turn " + turn);
    }
    assertTrue(nextTurn.isEmpty(), "nothing left for a later turn");
    assertArrayEquals(concat(smalls.toArray(byte[][]::new)), host.sent(), "every frame, in order");
    assertEquals(1, host.flushes);

    // A turn whose reads did not fill their buffers: everything goes at its end.
    turns.room(host.ch, 10).writeBytes(frame(7, 10));
    input.runPendingTasks();
    assertArrayEquals(frame(7, 10), host.sent());
    assertTrue(nextTurn.isEmpty());
  }

  @Test
  void aReadBatchIsFlushedWhenTheInputIsHandledAndTheNextStartsEmpty() {
    Out a = out();
    input.writeInbound(small(a, frame(1, 10)), small(a, frame(2, 10)));
    assertArrayEquals(concat(frame(1, 10), frame(2, 10)), a.sent(), "flushed at the batch's end");
    input.writeInbound(small(a, frame(3, 10)));
    assertArrayEquals(frame(3, 10), a.sent(), "the next batch is flushed too, alone");
    assertEquals(2, a.flushes);
  }

  @Test
  void aFullBatchIsWrittenFirstAndTheOrderIsKept() {
    Out a = out();
    int half = OutputBatches.BATCH_BYTES * 5 / 8;
    byte[] f1 = frame(1, half);
    byte[] f2 = frame(2, half); // does not fit after f1 in one batch buffer
    byte[] f3 = frame(3, OutputBatches.BATCH_BYTES * 3); // larger than a batch: one of its own size
    input.writeInbound(small(a, f1), small(a, f2), small(a, f3));
    assertArrayEquals(concat(f1, f2, f3), a.sent());
    assertEquals(3, a.writes);
    assertEquals(1, a.flushes, "one flush for the whole batch");
  }

  @Test
  void aLargeMessageGoesAfterTheBytesGatheredBeforeItAndIsTakenOver() {
    Out a = out();
    byte[] header = frame(1, 20);
    byte[] before = frame(2, 30);
    byte[] after = frame(3, 30);
    ByteBuf large = Unpooled.wrappedBuffer(frame(4, 8 * 1024));
    input.writeInbound(
        small(a, before),
        (Consumer<OutputBatches>)
            b -> {
              b.room(a.ch, header.length).writeBytes(header);
              b.write(a.ch, large);
            },
        small(a, after));
    assertArrayEquals(concat(before, header, frame(4, 8 * 1024), after), a.sent());
    assertEquals(0, large.refCnt(), "released once written");
    assertEquals(1, a.flushes);
  }

  @Test
  void copiedFramesAndMessagesWrittenInOrderLeaveInTheOrderMadeWithOneFlush() {
    Out a = out();
    ByteBuf shared = Unpooled.wrappedBuffer(frame(1, 40));
    ByteBuf own = Unpooled.wrappedBuffer(frame(2, 25));
    input.writeInbound(
        (Consumer<OutputBatches>)
            b -> {
              b.copy(a.ch, shared);
              b.write(a.ch, own);
              b.copy(a.ch, shared);
            });
    assertArrayEquals(concat(frame(1, 40), frame(2, 25), frame(1, 40)), a.sent());
    assertEquals(3, a.writes, "the copies before and after the message are written around it");
    assertEquals(1, a.flushes);
    assertEquals(1, shared.refCnt(), "a copied frame stays the caller's");
    assertEquals(40, shared.readableBytes(), "and is left unread");
    assertEquals(0, own.refCnt(), "a written message is taken over and released once written");
    shared.release();
  }

  @Test
  void writesMadeDirectlyAreFlushedAtTheBatchsEnd() {
    Out a = out();
    ByteBuf direct = Unpooled.wrappedBuffer(frame(5, 10));
    input
        .pipeline()
        .fireChannelRead(
            (Consumer<OutputBatches>)
                b -> {
                  a.ch.write(direct, a.ch.voidPromise());
                  b.flushLater(a.ch);
                });
    assertNull(a.ch.readOutbound(), "not flushed before the batch's end");
    input.runPendingTasks();
    assertArrayEquals(frame(5, 10), a.sent());
    assertEquals(1, a.flushes);
  }

  @Test
  void anUnusedBatchIsReleasedAndNothingEmptyIsWritten() {
    Out a = out();
    ByteBuf[] taken = new ByteBuf[1];
    input.writeInbound((Consumer<OutputBatches>) b -> taken[0] = b.room(a.ch, 10));
    assertEquals(0, taken[0].refCnt(), "released");
    assertEquals(0, a.writes);
    assertNull(a.ch.readOutbound());
  }

  @Test
  void aChannelClosedBeforeTheBatchsEndLeavesNothingHeld() {
    Out a = out();
    Out b = out();
    ByteBuf[] batch = new ByteBuf[1];
    input.writeInbound(
        (Consumer<OutputBatches>)
            x -> {
              batch[0] = x.room(a.ch, 10).writeBytes(frame(1, 10));
              x.room(b.ch, 10).writeBytes(frame(2, 10));
              a.ch.close();
            });
    assertEquals(0, batch[0].refCnt(), "the closed channel's batch is released");
    assertFalse(a.ch.isOpen());
    assertArrayEquals(frame(2, 10), b.sent(), "the other channels are flushed as usual");
    assertSame(null, a.ch.readOutbound());
  }
}
