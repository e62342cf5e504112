package io.bdrp.bench;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * JMH's benchmark threads as Netty's {@link FastThreadLocalThread}s, as the router's event loops
 * are: Netty pools its per-write objects (a channel's outbound entries, derived buffers) only on
 * such threads, and allocates them afresh on any other. Named with {@code -Djmh.executor=CUSTOM
 * -Djmh.executor.class=io.bdrp.bench.FastThreadExecutor}, which JMH reads in the forked JVM ({@link
 * HotPathBenchmark} sets both).
 */
public final class FastThreadExecutor extends ThreadPoolExecutor {
  /** The constructor JMH calls: at most {@code maxThreads} threads, named from {@code prefix}. */
  public FastThreadExecutor(int maxThreads, String prefix) {
    super(
        maxThreads,
        maxThreads,
        1,
        TimeUnit.MINUTES,
        new java.util.concurrent.LinkedBlockingQueue<>(),
        r -> {
          Thread t = new FastThreadLocalThread(r, prefix + "-fast");
          t.setDaemon(true);
          return t;
        });
  }
}
