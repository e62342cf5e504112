package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The control thread: tasks run in the order handed over, a failing task does not stop the ones
 * after it, and a shutdown runs what was queued, refuses what comes after and ends the thread.
 */
class ControlThreadTest {
  @Test
  void tasksRunInOrderAndAFailureStopsNothing() throws Exception {
    ControlThread t = new ControlThread("test-control");
    List<Integer> ran = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    for (int i = 0; i < 1000; i++) {
      int n = i;
      t.execute(
          () -> {
            ran.add(n);
            if (n == 10) {
              throw new IllegalStateException("a task that fails");
            }
          });
    }
    t.execute(done::countDown);
    assertTrue(done.await(10, TimeUnit.SECONDS));
    assertEquals(1000, ran.size());
    for (int i = 0; i < 1000; i++) {
      assertEquals(i, ran.get(i));
    }
    t.shutdown();
    assertTrue(t.awaitTermination(10, TimeUnit.SECONDS));
  }

  @Test
  void aShutdownRunsWhatWasQueuedThenRefusesMore() throws Exception {
    ControlThread t = new ControlThread("test-control");
    CountDownLatch release = new CountDownLatch(1);
    List<String> ran = new CopyOnWriteArrayList<>();
    t.execute(
        () -> {
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          ran.add("first");
        });
    t.execute(() -> ran.add("queued"));
    t.shutdown();
    assertThrows(RejectedExecutionException.class, () -> t.execute(() -> ran.add("late")));
    release.countDown();
    assertTrue(t.awaitTermination(10, TimeUnit.SECONDS), "the thread ends");
    assertEquals(List.of("first", "queued"), ran);
  }
}
