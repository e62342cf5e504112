package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * What the host wants: either subscriptions, each a predicate with its handler, or one predicate
 * set with {@code setPredicate} whose messages go to the default handler. The router holds one
 * predicate per host, {@link #combined()}; each delivered message is matched here against every
 * subscription and handed to the handlers of those it satisfies. Any thread: the state is guarded
 * by this object's lock, and handlers run on the callback executor, never under the lock.
 */
final class Subscriptions {
  /** One subscription's predicate and handler; compared by identity. */
  static final class Entry {
    final Predicate predicate;
    final Consumer<Message> handler;

    Entry(Predicate predicate, Consumer<Message> handler) {
      this.predicate = predicate;
      this.handler = handler;
    }
  }

  private final List<Entry> entries = new ArrayList<>();
  private Predicate raw; // set by setPredicate, when not using subscriptions

  /**
   * The handlers as {@link #dispatch} hands them a batch: a copy of {@link #entries}, or null for
   * the default handler. Made again at every change, so a batch takes it without the lock or a copy
   * of its own.
   */
  private volatile Entry[] handlers = new Entry[0];

  private final Consumer<Message> onMessage;
  private final Executor callbacks;

  /**
   * @param onMessage the handler of messages for a predicate set with {@link #set}
   * @param callbacks where handlers run, one task at a time in the order given
   */
  Subscriptions(Consumer<Message> onMessage, Executor callbacks) {
    this.onMessage = onMessage;
    this.callbacks = callbacks;
  }

  /** Adds a subscription, ending a predicate set with {@link #set}. */
  synchronized void add(Entry e) {
    raw = null;
    entries.add(e);
    snapshot();
  }

  /** Removes a subscription. */
  synchronized void remove(Entry e) {
    entries.remove(e);
    snapshot();
  }

  /** Replaces every subscription with one predicate for the default handler. */
  synchronized void set(Predicate p) {
    entries.clear();
    raw = p;
    snapshot();
  }

  /** Under the lock: the handlers for the batches from now on. */
  private void snapshot() {
    handlers = raw != null ? null : entries.toArray(new Entry[0]);
  }

  /** The predicate the router should hold: the disjunction of all, or {@link Predicate#NONE}. */
  synchronized Predicate combined() {
    if (raw != null) {
      return raw;
    }
    List<Predicate> all = new ArrayList<>();
    for (Entry e : entries) {
      all.add(e.predicate);
    }
    return all.isEmpty() ? Predicate.NONE : Predicate.or(all);
  }

  /**
   * Hands a batch of delivered messages (one read's worth) to the callback executor in one task: a
   * thread wake-up per batch rather than per message. The handlers are those of the moment of the
   * call; messages go to them in the batch's order.
   */
  void dispatch(List<Message> batch) {
    Entry[] subs = handlers;
    callbacks.execute(
        () -> {
          for (Message m : batch) {
            if (subs == null) {
              onMessage.accept(m);
              continue;
            }
            for (Entry s : subs) {
              if (s.predicate.matches(m)) {
                s.handler.accept(m);
              }
            }
          }
        });
  }
}
