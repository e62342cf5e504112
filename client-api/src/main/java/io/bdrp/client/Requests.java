package io.bdrp.client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Requests waiting for the router's answer, by correlation id: a SET_PREDICATE or an acknowledged
 * SEND answered by OK or ERROR, a PING answered by PONG (its nonce is the id), a TRACE answered by
 * TRACE_RESULT or ERROR. Ids are handed out in order from 1, so none is 0, the id of frames that
 * want no answer. Any thread: the table is guarded by this object's lock, and no future is
 * completed while it is held.
 */
final class Requests {
  private final Map<Long, CompletableFuture<?>> pending = new HashMap<>();
  private final Executor settle;
  private long next = 1;

  /**
   * @param settle where answers complete their futures: the client's callback executor, or the
   *     calling thread once that executor has stopped
   */
  Requests(Executor settle) {
    this.settle = settle;
  }

  /** Registers {@code f} as waiting for an answer; the correlation id to send with the request. */
  synchronized long add(CompletableFuture<?> f) {
    long id = next++;
    pending.put(id, f);
    return id;
  }

  /**
   * The router answered request {@code id}: completes its future (with {@code error}, if not null)
   * on the settle executor. False if no request waits under that id (answered already, failed by a
   * disconnect, or never asked), so the caller can report an error elsewhere.
   */
  boolean complete(long id, Throwable error) {
    return complete(id, null, error);
  }

  /**
   * As {@link #complete(long, Throwable)}, completing the future with {@code value} when {@code
   * error} is null; the value's type is the one the request's future was registered for.
   */
  @SuppressWarnings("unchecked")
  boolean complete(long id, Object value, Throwable error) {
    CompletableFuture<Object> f;
    synchronized (this) {
      f = (CompletableFuture<Object>) pending.remove(id);
    }
    if (f == null) {
      return false;
    }
    if (error == null) {
      settle.execute(() -> f.complete(value));
    } else {
      settle.execute(() -> f.completeExceptionally(error));
    }
    return true;
  }

  /** Request {@code id} could not be sent: fails its future here, if it still waits. */
  void fail(long id, Throwable cause) {
    CompletableFuture<?> f;
    synchronized (this) {
      f = pending.remove(id);
    }
    if (f != null) {
      f.completeExceptionally(cause);
    }
  }

  /** The session ended: fails every waiting future with {@code cause}, here, and forgets them. */
  void failAll(IOException cause) {
    List<CompletableFuture<?>> waiting;
    synchronized (this) {
      waiting = new ArrayList<>(pending.values());
      pending.clear();
    }
    waiting.forEach(w -> w.completeExceptionally(cause));
  }

  /** How many requests wait for an answer. */
  synchronized int size() {
    return pending.size();
  }
}
