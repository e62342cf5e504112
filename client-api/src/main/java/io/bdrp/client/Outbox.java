package io.bdrp.client;

import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Frames on their way to the router. Any thread {@linkplain #enqueue queues} a frame; the I/O
 * thread {@linkplain #drain() drains} the queue, encoding everything queued into as few buffers as
 * it can and writing them with one flush: one system call for many messages. Frames go out in the
 * order queued, sends and requests alike. Queuing appends to a list under a lock that the I/O
 * thread takes once per drain, to swap the list for an empty one: no node per frame, and the
 * queuing thread's appends stay in its own cache between drains.
 */
final class Outbox {
  static final int BATCH_BYTES = 64 * 1024;

  /** The correlation of a message sent without a future ({@link BdrpClient#publish}). */
  static final long FORGET = 0;

  /**
   * A frame waiting for the I/O thread: a send with its future, a request with its correlation id
   * (its future waits in {@link Requests} for the router's answer), or a message sent without a
   * future (no future, correlation {@link #FORGET}).
   */
  private record Outgoing(ClientFrame frame, CompletableFuture<Void> written, long correlation) {}

  /** A drained list is kept for the next swap unless it grew beyond this (a burst's). */
  private static final int KEPT_CAPACITY = 64 * 1024;

  private final Object lock = new Object();
  private ArrayList<Outgoing> pending = new ArrayList<>(); // under lock
  private ArrayList<Outgoing> spare; // under lock: an empty list to swap in
  private boolean drainQueued; // under lock
  private final Supplier<Channel> session;
  private final EventLoopGroup group;
  private final Requests requests;
  private final Executor settle;
  private final String where;

  /** Messages sent without a future that were not written. */
  private final AtomicLong unsent = new AtomicLong();

  /**
   * @param session the channel of the open session, or null
   * @param group where to drain while there is no session (the frames then fail)
   * @param settle where written futures complete
   * @param where the router's address, for messages
   */
  Outbox(
      Supplier<Channel> session,
      EventLoopGroup group,
      Requests requests,
      Executor settle,
      String where) {
    this.session = session;
    this.group = group;
    this.requests = requests;
    this.settle = settle;
    this.where = where;
  }

  /**
   * Queues a frame: {@code written} (if not null) completes when it has been written, a request's
   * future (under {@code correlation}) fails if it cannot be; a message without either ({@link
   * #FORGET}) is counted in {@link #unsent()} if it cannot be.
   */
  void enqueue(ClientFrame frame, CompletableFuture<Void> written, long correlation) {
    Outgoing o = new Outgoing(frame, written, correlation);
    boolean schedule;
    synchronized (lock) {
      pending.add(o);
      schedule = !drainQueued;
      drainQueued = true;
    }
    if (schedule) {
      Channel c = session.get();
      (c != null ? c.eventLoop() : group.next()).execute(this::drain);
    }
  }

  /**
   * On the I/O thread: encodes every queued frame, writes and flushes them once, then settles the
   * futures. Without an active session, every queued frame fails.
   */
  void drain() {
    ArrayList<Outgoing> batch;
    synchronized (lock) {
      batch = pending;
      pending = spare != null ? spare : new ArrayList<>();
      spare = null;
      drainQueued = false;
    }
    Channel c = session.get();
    List<CompletableFuture<Void>> written = null; // made for the first send with a future
    int forgotten = 0; // frames without a future in this drain's writes
    ChannelFuture last = null;
    ByteBuf out = null;
    for (int i = 0; i < batch.size(); i++) {
      Outgoing o = batch.get(i);
      if (c == null || !c.isActive()) {
        failed(o, new IOException("not connected to " + where));
        continue;
      }
      int n;
      try {
        n = ClientFrameCodec.encodedLength(o.frame);
      } catch (RuntimeException e) {
        failed(o, e);
        continue;
      }
      if (out != null && out.writableBytes() < n) {
        last = c.write(out);
        out = null;
      }
      if (out == null) {
        out = c.alloc().heapBuffer(Math.max(n, BATCH_BYTES));
      }
      int mark = out.writerIndex();
      try {
        ClientFrameCodec.encodeMeasured(o.frame, out, n);
      } catch (RuntimeException e) {
        out.writerIndex(mark);
        failed(o, e);
        continue;
      }
      if (o.written != null) {
        if (written == null) {
          written = new ArrayList<>();
        }
        written.add(o.written);
      } else if (o.correlation == FORGET) {
        forgotten++;
      }
    }
    if (out != null) {
      if (out.isReadable()) {
        last = c.write(out);
      } else {
        out.release();
      }
    }
    recycle(batch);
    if (last == null) {
      return;
    }
    c.flush();
    if (written != null || forgotten > 0) {
      int lostIfFailed = forgotten;
      List<CompletableFuture<Void>> settled = written;
      last.addListener(
          w -> {
            Throwable cause = w.cause();
            if (cause != null) {
              unsent.addAndGet(lostIfFailed);
            }
            if (settled == null) {
              return;
            }
            settle.execute(
                () -> {
                  for (CompletableFuture<Void> f : settled) {
                    if (cause == null) {
                      f.complete(null);
                    } else {
                      f.completeExceptionally(cause);
                    }
                  }
                });
          });
    }
  }

  /** Keeps a drained list, emptied, for the next swap, unless a burst made it large. */
  private void recycle(ArrayList<Outgoing> batch) {
    if (batch.size() > KEPT_CAPACITY) {
      return;
    }
    batch.clear();
    synchronized (lock) {
      if (spare == null) {
        spare = batch;
      }
    }
  }

  private void failed(Outgoing o, Throwable e) {
    CompletableFuture<Void> w = o.written;
    if (w != null) {
      settle.execute(() -> w.completeExceptionally(e));
    } else if (o.correlation == FORGET) {
      unsent.incrementAndGet();
    } else {
      requests.fail(o.correlation, e);
    }
  }

  /** Counts a message sent without a future that was refused before it was queued. */
  void countUnsent() {
    unsent.incrementAndGet();
  }

  /** Messages sent without a future that were not written to the router. */
  long unsent() {
    return unsent.get();
  }
}
