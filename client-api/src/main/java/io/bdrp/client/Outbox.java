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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Frames on their way to the router. Any thread {@linkplain #enqueue queues} a frame; the I/O
 * thread {@linkplain #drain() drains} the queue, encoding everything queued into as few buffers as
 * it can and writing them with one flush: one system call for many messages. Frames go out in the
 * order queued, sends and requests alike. The queue is lock-free; draining is the I/O thread's.
 */
final class Outbox {
  static final int BATCH_BYTES = 64 * 1024;

  /**
   * A frame waiting for the I/O thread: a send with its future, or a request with its correlation
   * id (its future waits in {@link Requests} for the router's answer).
   */
  private record Outgoing(ClientFrame frame, CompletableFuture<Void> written, long correlation) {}

  private final ConcurrentLinkedQueue<Outgoing> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean drainQueued = new AtomicBoolean();
  private final Supplier<Channel> session;
  private final EventLoopGroup group;
  private final Requests requests;
  private final Executor settle;
  private final String where;

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
   * future (under {@code correlation}) fails if it cannot be.
   */
  void enqueue(ClientFrame frame, CompletableFuture<Void> written, long correlation) {
    queue.add(new Outgoing(frame, written, correlation));
    if (drainQueued.compareAndSet(false, true)) {
      Channel c = session.get();
      (c != null ? c.eventLoop() : group.next()).execute(this::drain);
    }
  }

  /**
   * On the I/O thread: encodes every queued frame, writes and flushes them once, then settles the
   * futures. Without an active session, every queued frame fails.
   */
  void drain() {
    drainQueued.set(false);
    Channel c = session.get();
    List<CompletableFuture<Void>> written = new ArrayList<>();
    Outgoing o;
    ChannelFuture last = null;
    ByteBuf out = null;
    while ((o = queue.poll()) != null) {
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
        out = c.alloc().directBuffer(Math.max(n, BATCH_BYTES));
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
        written.add(o.written);
      }
    }
    if (out != null) {
      if (out.isReadable()) {
        last = c.write(out);
      } else {
        out.release();
      }
    }
    if (last == null) {
      return;
    }
    c.flush();
    if (!written.isEmpty()) {
      last.addListener(
          w -> {
            Throwable cause = w.cause();
            settle.execute(
                () -> {
                  for (CompletableFuture<Void> f : written) {
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

  private void failed(Outgoing o, Throwable e) {
    CompletableFuture<Void> w = o.written;
    if (w != null) {
      settle.execute(() -> w.completeExceptionally(e));
    } else {
      requests.fail(o.correlation, e);
    }
  }
}
