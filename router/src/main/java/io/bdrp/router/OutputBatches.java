package io.bdrp.router;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Output made while the router handles a batch of input, gathered per channel and flushed once the
 * batch is done: small frames are written straight into one buffer per channel (a DATA copy's
 * header and D, then its message bytes), large messages are written as slices of the bytes they
 * arrived in, and every channel with output is written and flushed by one task queued on the loop,
 * which runs after the I/O being handled. One system call per socket per batch, rather than one per
 * frame. What is gathered is bounded by one batch of input.
 *
 * <p>Owned by the router's event loop; every method runs there.
 */
public final class OutputBatches {
  /**
   * One batch buffer's size: the allocator's largest size class (Netty's adaptive allocator serves
   * up to 16,896 bytes from per-thread magazines; a larger buffer is carved from a chunk of its own
   * and cost 17% of a selective run's profile when it was 64 KiB). A channel that gets more in one
   * batch gets several buffers, still written by one gathering system call at the flush.
   */
  static final int BATCH_BYTES = 16 * 1024;

  /** Message bytes from this size up are written as a slice of their buffer, not copied. */
  static final int COPY_BELOW = 4 * 1024;

  private final EventLoop loop;
  private final Map<Channel, ByteBuf> pending = new IdentityHashMap<>();
  private final Runnable flushAll = this::flushAll;
  private final java.util.function.BiConsumer<Channel, ByteBuf> writeAndFlush =
      OutputBatches::writeAndFlush;
  private final java.util.List<Runnable> beforeFlush = new java.util.ArrayList<>();
  private final java.util.function.Predicate<Map.Entry<Channel, ByteBuf>> flushedUnlessSmall =
      e -> flushUnlessSmall(e.getKey(), e.getValue());
  private boolean flushQueued;

  /**
   * A channel's output below this many bytes (its batch and what was written to it before it) may
   * wait for the loop's next turn while input continues ({@link #inputContinues}), up to {@link
   * #MAX_DEFERRALS} turns: two batch buffers' worth, so that a host of a selective publisher gets
   * one write (and one wake-up) per 32 KiB.
   */
  static final int DEFER_BELOW = 32 * 1024;

  /** Turns a small batch may wait in a row: its latency grows by at most as many reads. */
  static final int MAX_DEFERRALS = 16;

  private boolean inputContinues;
  private int deferrals;

  /** Runs a task in the loop's next turn, after the input that turn handles. */
  private final java.util.function.Consumer<Runnable> nextTurn;

  public OutputBatches(EventLoop loop) {
    // A task scheduled now runs in the turn after the next input is handled, not before it.
    this(loop, task -> loop.schedule(task, 0, java.util.concurrent.TimeUnit.NANOSECONDS));
  }

  /**
   * With {@code nextTurn} running a task in the loop's next turn: for tests, which turn by hand.
   */
  OutputBatches(EventLoop loop, java.util.function.Consumer<Runnable> nextTurn) {
    this.loop = loop;
    this.nextTurn = nextTurn;
  }

  /**
   * The batch buffer of {@code c} with room for at least {@code bytes} more; the caller writes
   * whole frames into it. A batch too full for them is written to the channel first.
   */
  public ByteBuf room(Channel c, int bytes) {
    ByteBuf batch = pending.get(c);
    if (batch != null && batch.writableBytes() < bytes) {
      c.write(batch, c.voidPromise());
      batch = null;
    }
    if (batch == null) {
      batch = c.alloc().directBuffer(Math.max(BATCH_BYTES, bytes), Math.max(BATCH_BYTES, bytes));
      pending.put(c, batch);
    }
    queueFlush();
    return batch;
  }

  /**
   * Room in {@code c}'s batch for a frame's {@code header} bytes and, when it is small enough to
   * copy, {@code message}; the caller writes the header, then calls {@link #body}.
   */
  public ByteBuf room(Channel c, int header, MessageBytes message) {
    return room(c, message.length < COPY_BELOW ? header + message.length : header);
  }

  /** The frame's message after its header: copied into the batch, or a slice written after it. */
  public void body(Channel c, ByteBuf batch, MessageBytes message) {
    if (message.length < COPY_BELOW) {
      message.writeTo(batch);
    } else {
      write(c, message.retainedSlice());
    }
  }

  /**
   * Writes {@code msg} (a buffer or a message the channel's encoders take, which it takes over) to
   * {@code c} after what the batch already holds for it, flushed at the end of the batch: for a
   * caller that mixes whole frames copied in with {@link #copy} and messages of its own, in order,
   * and for a large message after its header in the batch ({@link #body}).
   */
  public void write(Channel c, Object msg) {
    ByteBuf batch = pending.get(c);
    if (batch != null && batch.isReadable()) {
      c.write(batch, c.voidPromise());
      pending.put(c, null);
    } else if (!pending.containsKey(c)) {
      pending.put(c, null);
    }
    c.write(msg, c.voidPromise());
    queueFlush();
  }

  /** Bytes gathered for {@code c} in its batch buffer and not written to it yet. */
  public int batched(Channel c) {
    ByteBuf batch = pending.get(c);
    return batch == null ? 0 : batch.readableBytes();
  }

  /**
   * Copies the readable bytes of {@code frame} (left unchanged, still the caller's) into {@code
   * c}'s batch: many small frames for one channel become one buffer, one write and one system call.
   */
  public void copy(Channel c, ByteBuf frame) {
    int n = frame.readableBytes();
    room(c, n).writeBytes(frame, frame.readerIndex(), n);
  }

  /**
   * Has {@code writer} run at the end of every batch, before the batch's output is written and
   * flushed: for output gathered elsewhere during the batch (a session's confirmations, coalesced
   * into ranges) that is to leave in the batch's write. What it writes through this object goes out
   * with the rest; it marks the channels it has something for with {@link #flushLater} when that
   * starts, so that the batch ends with a flush.
   */
  public void beforeFlush(Runnable writer) {
    beforeFlush.add(writer);
  }

  /** Marks {@code c} for a flush at the end of the batch (after writes made directly to it). */
  public void flushLater(Channel c) {
    if (!pending.containsKey(c)) {
      pending.put(c, null);
    }
    queueFlush();
  }

  private void queueFlush() {
    if (!flushQueued) {
      flushQueued = true;
      loop.execute(flushAll);
    }
  }

  /**
   * A read filled its buffer: the session it came from has more input waiting, which the loop's
   * next turn reads. Until then, batches still small may wait for what that read adds to them
   * ({@link #DEFER_BELOW}, {@link #MAX_DEFERRALS}): a publisher whose every message goes to one of
   * many hosts (a selective workload) otherwise makes one write to each host per read of 16 KiB,
   * each a system call and a wake-up of the host's reader for a few messages.
   */
  public void inputContinues() {
    inputContinues = true;
  }

  private void flushAll() {
    // Still marked as queued: what these write joins this flush rather than queueing another.
    for (int i = 0; i < beforeFlush.size(); i++) {
      beforeFlush.get(i).run(); // by index: an iterator is an object per flush
    }
    if (inputContinues && deferrals < MAX_DEFERRALS) {
      inputContinues = false;
      // Large batches go now; small ones wait for the next turn, after its reads.
      pending.entrySet().removeIf(flushedUnlessSmall);
      if (!pending.isEmpty()) {
        deferrals++;
        nextTurn.accept(flushAll);
        return;
      }
    }
    inputContinues = false;
    deferrals = 0;
    flushQueued = false;
    // forEach walks the table in place; iterating entrySet() makes an entry object per channel.
    pending.forEach(writeAndFlush);
    pending.clear();
  }

  /** Bytes {@code c} holds outside its batch: written to it, flushed or not, and not yet sent. */
  private static long queued(Channel c) {
    io.netty.channel.ChannelOutboundBuffer out = c.unsafe().outboundBuffer();
    return out == null ? 0 : out.totalPendingWriteBytes();
  }

  /**
   * Writes and flushes {@code c}'s output unless it is small: its batch and what was written to it
   * before (a batch that filled, a large message) together below {@link #DEFER_BELOW}.
   */
  private boolean flushUnlessSmall(Channel c, ByteBuf batch) {
    if (batch != null && batch.readableBytes() + queued(c) < DEFER_BELOW) {
      return false;
    }
    writeAndFlush(c, batch);
    return true;
  }

  private static void writeAndFlush(Channel c, ByteBuf batch) {
    if (batch != null) {
      if (batch.isReadable()) {
        c.write(batch, c.voidPromise());
      } else {
        batch.release();
      }
    }
    c.flush();
  }
}
