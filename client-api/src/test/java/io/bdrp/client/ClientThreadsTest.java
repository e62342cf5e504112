package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Callback threading: handlers, listeners and futures run on one callback thread of the client's
 * own, in the order handed over, never on the caller's thread; after a shutdown, listeners are
 * dropped and futures settle on the caller's thread, and the client's threads end.
 */
class ClientThreadsTest {
  private static final long WAIT_S = 10;

  @Test
  void callbacksRunInOrderOnOneDaemonThreadOfTheClientsOwn() throws Exception {
    ClientThreads threads = new ClientThreads(null, null);
    try {
      List<Integer> order = new ArrayList<>(); // written by the callback thread only
      List<Thread> ranOn = new ArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      for (int i = 0; i < 100; i++) {
        int n = i;
        Runnable r =
            () -> {
              order.add(n);
              ranOn.add(Thread.currentThread());
            };
        if (i % 2 == 0) {
          threads.callback(r);
        } else {
          threads.settle(r); // futures share the order of handlers and listeners
        }
      }
      threads.callback(done::countDown);
      assertTrue(done.await(WAIT_S, TimeUnit.SECONDS));
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        expected.add(i);
      }
      assertEquals(expected, order);
      Thread t = ranOn.get(0);
      assertTrue(ranOn.stream().allMatch(x -> x == t), "one thread");
      assertEquals("bdrp-client-callbacks", t.getName());
      assertTrue(t.isDaemon());
      assertTrue(threads.isOwn(t));
      assertFalse(threads.isOwn(Thread.currentThread()));
    } finally {
      threads.shutdown();
      threads.awaitTermination(TimeUnit.SECONDS.toNanos(WAIT_S));
    }
  }

  @Test
  void aSlowHandlerDoesNotHoldUpTheThreadThatHandsItOver() throws Exception {
    ClientThreads threads = new ClientThreads(null, null);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch second = new CountDownLatch(1);
    try {
      threads.callback(
          () -> {
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      threads.callback(second::countDown); // handed over while the first handler still runs
      assertEquals(1, second.getCount(), "waits its turn behind the slow handler");
      release.countDown();
      assertTrue(second.await(WAIT_S, TimeUnit.SECONDS));
    } finally {
      release.countDown();
      threads.shutdown();
      threads.awaitTermination(TimeUnit.SECONDS.toNanos(WAIT_S));
    }
  }

  @Test
  void afterShutdownListenersAreDroppedFuturesSettleHereAndTheThreadsEnd() throws Exception {
    ClientThreads threads = new ClientThreads(null, null);
    AtomicReference<Thread> io = new AtomicReference<>();
    threads.group().next().submit(() -> io.set(Thread.currentThread())).syncUninterruptibly();
    assertTrue(io.get().getName().startsWith("bdrp-client-io"), io.get().getName());
    assertTrue(io.get().isDaemon());
    CountDownLatch started = new CountDownLatch(1);
    threads.callback(started::countDown);
    assertTrue(started.await(WAIT_S, TimeUnit.SECONDS));

    threads.shutdown();
    threads.awaitTermination(TimeUnit.SECONDS.toNanos(WAIT_S));
    assertFalse(io.get().isAlive(), "the I/O thread has ended");
    assertTrue(threads.group().isTerminated());

    AtomicBoolean listened = new AtomicBoolean();
    threads.callback(() -> listened.set(true));
    assertFalse(listened.get(), "nobody listens after a close");
    AtomicReference<Thread> settledOn = new AtomicReference<>();
    threads.settle(() -> settledOn.set(Thread.currentThread()));
    assertSame(Thread.currentThread(), settledOn.get(), "no future is left pending by a close");
  }

  @Test
  void givenThreadsAreUsedAndNotStopped() throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    List<Runnable> given = new ArrayList<>();
    try {
      ClientThreads threads = new ClientThreads(group, given::add);
      assertSame(group, threads.group());
      threads.callback(() -> {});
      assertEquals(1, given.size(), "callbacks go to the given executor");
      threads.shutdown();
      assertFalse(group.isShuttingDown(), "a given group belongs to the caller");
      threads.callback(() -> {});
      assertEquals(2, given.size(), "a given executor is not stopped either");
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }
}
