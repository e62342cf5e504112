package io.bdrp.testbed.wan;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/** Runs its tasks one at a time, in order, on a shared pool. */
public final class SerialExecutor implements Executor {
  private final Executor pool;
  private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
  private boolean running;

  public SerialExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable r) {
    synchronized (this) {
      tasks.add(r);
      if (running) {
        return;
      }
      running = true;
    }
    pool.execute(this::drain);
  }

  private void drain() {
    while (true) {
      Runnable r;
      synchronized (this) {
        r = tasks.poll();
        if (r == null) {
          running = false;
          return;
        }
      }
      r.run();
    }
  }
}
