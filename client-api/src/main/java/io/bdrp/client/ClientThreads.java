package io.bdrp.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The threads a client runs on: an event-loop group for its I/O and a callback executor for its
 * handlers, listeners and futures, so that a slow handler never stalls the connection. Each is the
 * client's own single daemon thread unless the builder gave one; only its own are stopped by {@link
 * #shutdown()}. The callback executor runs tasks one at a time in the order given, which is what
 * keeps messages, listener calls and answers in delivery order. Any thread may use it.
 */
final class ClientThreads {
  private final EventLoopGroup group;
  private final boolean ownGroup;
  private final ExecutorService ownCallbacks;
  private final Executor callbacks;

  /** Every thread this client has started (its own event loop and callback thread). */
  private final List<Thread> ownThreads = new CopyOnWriteArrayList<>();

  /**
   * @param group an event-loop group to share, or null for one thread of the client's own
   * @param callbacks where callbacks run, or null for one thread of the client's own
   */
  ClientThreads(EventLoopGroup group, Executor callbacks) {
    this.ownGroup = group == null;
    if (ownGroup) {
      ThreadFactory io = new DefaultThreadFactory("bdrp-client-io", true);
      this.group =
          new MultiThreadIoEventLoopGroup(
              1,
              r -> {
                Thread t = io.newThread(r);
                ownThreads.add(t);
                return t;
              },
              NioIoHandler.newFactory());
    } else {
      this.group = group;
    }
    if (callbacks == null) {
      ownCallbacks =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "bdrp-client-callbacks");
                t.setDaemon(true);
                ownThreads.add(t);
                return t;
              });
      this.callbacks = ownCallbacks;
    } else {
      ownCallbacks = null;
      this.callbacks = callbacks;
    }
  }

  /** The group the client's channels are registered with. */
  EventLoopGroup group() {
    return group;
  }

  /**
   * Runs a handler or listener on the callback executor; dropped once that executor has stopped
   * (after the client is closed): nobody listens any more.
   */
  void callback(Runnable r) {
    try {
      callbacks.execute(r);
    } catch (RejectedExecutionException e) {
      // closed: nobody listens any more
    }
  }

  /**
   * Completes futures on the callback executor, or on the calling thread once that executor has
   * stopped, so that no future is left pending by a close.
   */
  void settle(Runnable r) {
    try {
      callbacks.execute(r);
    } catch (RejectedExecutionException e) {
      r.run();
    }
  }

  /** Whether {@code t} is one of the threads this client started. */
  boolean isOwn(Thread t) {
    return ownThreads.contains(t);
  }

  /** Tells the client's own group and callback thread to stop; never blocks. */
  void shutdown() {
    if (ownGroup) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
    if (ownCallbacks != null) {
      ownCallbacks.shutdown();
    }
  }

  /** Waits, up to {@code nanos}, for the own group to terminate and every own thread to end. */
  void awaitTermination(long nanos) {
    long deadline = System.nanoTime() + nanos;
    boolean interrupted = false;
    if (ownGroup) {
      group.terminationFuture().awaitUninterruptibly(nanos, TimeUnit.NANOSECONDS);
    }
    for (Thread t : ownThreads) {
      while (t.isAlive()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
