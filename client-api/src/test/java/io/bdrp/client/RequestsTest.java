package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * Correlation of requests and answers: ids in order from 1, each answer completes the future of its
 * own id (on the settle executor), and whatever still waits fails when the session ends.
 */
class RequestsTest {
  /** A settle executor that runs its tasks when the test says so. */
  private final Queue<Runnable> settleTasks = new ArrayDeque<>();

  private final Requests requests = new Requests(settleTasks::add);

  private void settleAll() {
    Runnable r;
    while ((r = settleTasks.poll()) != null) {
      r.run();
    }
  }

  private static Throwable failure(CompletableFuture<Void> f) {
    try {
      f.join();
      throw new AssertionError("completed normally");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }

  @Test
  void idsAreHandedOutInOrderFromOne() {
    assertEquals(1, requests.add(new CompletableFuture<>()));
    assertEquals(2, requests.add(new CompletableFuture<>()));
    assertEquals(3, requests.add(new CompletableFuture<>()));
    assertEquals(3, requests.size());
  }

  @Test
  void eachAnswerCompletesTheFutureOfItsOwnIdOnTheSettleExecutor() {
    CompletableFuture<Void> f1 = new CompletableFuture<>();
    CompletableFuture<Void> f2 = new CompletableFuture<>();
    CompletableFuture<Void> f3 = new CompletableFuture<>();
    long id1 = requests.add(f1);
    long id2 = requests.add(f2);
    long id3 = requests.add(f3);

    assertTrue(requests.complete(id2, null));
    assertFalse(f2.isDone(), "completed on the settle executor, not on the I/O thread");
    settleAll();
    assertTrue(f2.isDone() && !f2.isCompletedExceptionally());
    assertFalse(f1.isDone());
    assertFalse(f3.isDone());

    IOException refused = new BdrpClient.RouterException(3, "no", 4);
    assertTrue(requests.complete(id1, refused));
    settleAll();
    assertSame(refused, failure(f1));
    assertFalse(f3.isDone());

    assertTrue(requests.complete(id3, null));
    settleAll();
    assertTrue(f3.isDone() && !f3.isCompletedExceptionally());
    assertEquals(0, requests.size());
  }

  @Test
  void anAnswerToNoWaitingRequestIsReportedAsSuch() {
    long id = requests.add(new CompletableFuture<>());
    assertTrue(requests.complete(id, null));
    assertFalse(requests.complete(id, null), "answered twice");
    assertFalse(requests.complete(0, null), "id 0 asks for no answer");
    assertFalse(requests.complete(99, new IOException("x")), "never asked");
    assertEquals(1, settleTasks.size(), "only the real answer settles a future");
  }

  @Test
  void aRequestThatCannotBeSentFailsAtOnce() {
    CompletableFuture<Void> f = new CompletableFuture<>();
    long id = requests.add(f);
    IOException cause = new IOException("not connected");
    requests.fail(id, cause);
    assertSame(cause, failure(f));
    assertEquals(0, requests.size());
    assertTrue(settleTasks.isEmpty());
  }

  @Test
  void theEndOfASessionFailsEveryWaitingRequest() {
    CompletableFuture<Void> f1 = new CompletableFuture<>();
    CompletableFuture<Void> f2 = new CompletableFuture<>();
    requests.add(f1);
    long id2 = requests.add(f2);
    IOException lost = new IOException("session lost");
    requests.failAll(lost);
    assertSame(lost, failure(f1));
    assertSame(lost, failure(f2));
    assertEquals(0, requests.size());
    assertFalse(requests.complete(id2, null), "a late answer finds nothing waiting");
  }
}
