package io.bdrp.router;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread beside the event loop that runs the tasks handed to it in order: work whose cost a
 * client or a neighbour sets (an index build, a predicate, a large advertisement), and kernel map
 * writes. Handing a task over never blocks the caller: the queue is lock-free and the thread is
 * woken with {@link LockSupport#unpark}, where a JDK executor's queue takes a lock the loop could
 * wait on while the thread holds it.
 *
 * <p>After {@link #shutdown} it takes no more tasks ({@link RejectedExecutionException}); what was
 * queued still runs (it may hold buffers to release), then the thread ends.
 */
public final class ControlThread implements Executor {
  private static final Logger log = LoggerFactory.getLogger(ControlThread.class);

  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Thread thread;
  private volatile boolean shutdown;

  /** Starts the thread, named {@code name} (a daemon: a router left open does not hold the JVM). */
  public ControlThread(String name) {
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void execute(Runnable task) {
    if (shutdown) {
      throw new RejectedExecutionException(thread.getName() + " has stopped");
    }
    tasks.add(task);
    if (shutdown && tasks.remove(task)) {
      // Shut down meanwhile, and the thread may have ended without it: refused, as before.
      throw new RejectedExecutionException(thread.getName() + " has stopped");
    }
    LockSupport.unpark(thread);
  }

  /** Takes no more tasks; those queued run, then the thread ends. */
  public void shutdown() {
    shutdown = true;
    LockSupport.unpark(thread);
  }

  /** Waits up to {@code timeout} for the thread to end after {@link #shutdown}: whether it has. */
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    thread.join(Math.max(1, unit.toMillis(timeout)));
    return !thread.isAlive();
  }

  private void run() {
    while (true) {
      Runnable task = tasks.poll();
      if (task != null) {
        try {
          task.run();
        } catch (Throwable t) {
          log.error("{}: a task failed", thread.getName(), t);
        }
      } else if (shutdown) {
        if (tasks.isEmpty()) {
          return;
        }
      } else {
        LockSupport.park(this);
      }
    }
  }
}
