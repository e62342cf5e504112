package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Messages go to the handlers of the subscriptions they satisfy, in delivery order. */
class SubscriptionsTest {
  private final List<String> seen = new ArrayList<>();
  private final List<Runnable> callbackTasks = new ArrayList<>();
  private final Subscriptions subs =
      new Subscriptions(m -> seen.add("default " + name(m)), callbackTasks::add);

  private static Message msg(String name, long price) {
    return Message.builder().put("name", name).put("price", price).build();
  }

  private static String name(Message m) {
    return m.get("name").asString();
  }

  private static Subscriptions.Entry entry(String predicate, List<String> out, String tag) {
    return new Subscriptions.Entry(
        Predicate.parse(predicate), m -> out.add(tag + " " + SubscriptionsTest.name(m)));
  }

  private void runCallbacks() {
    List<Runnable> tasks = new ArrayList<>(callbackTasks);
    callbackTasks.clear();
    tasks.forEach(Runnable::run);
  }

  @Test
  void aBatchIsOneCallbackTaskAndEachMessageGoesToTheSubscriptionsItSatisfies() {
    subs.add(entry("price > 10", seen, "cheap-or-more"));
    subs.add(entry("price > 100", seen, "dear"));
    subs.dispatch(List.of(msg("a", 5), msg("b", 50), msg("c", 500)));
    assertEquals(1, callbackTasks.size(), "one task for the whole batch");
    assertEquals(List.of(), seen, "nothing runs on the I/O thread");
    runCallbacks();
    assertEquals(List.of("cheap-or-more b", "cheap-or-more c", "dear c"), seen);
  }

  @Test
  void aPredicateSetReplacesTheSubscriptionsAndFeedsTheDefaultHandler() {
    subs.add(entry("price > 10", seen, "sub"));
    subs.set(Predicate.parse("price > 1"));
    assertEquals(Predicate.parse("price > 1"), subs.combined());
    subs.dispatch(List.of(msg("a", 5), msg("b", 50)));
    runCallbacks();
    assertEquals(List.of("default a", "default b"), seen);
  }

  @Test
  void theCombinedPredicateIsTheDisjunctionOrNone() {
    assertEquals(Predicate.NONE, subs.combined());
    Subscriptions.Entry a = entry("price > 10", seen, "a");
    Subscriptions.Entry b = entry("price < 3", seen, "b");
    subs.add(a);
    subs.add(b);
    assertEquals(
        Predicate.or(List.of(Predicate.parse("price > 10"), Predicate.parse("price < 3"))),
        subs.combined());
    subs.remove(a);
    assertEquals(Predicate.parse("price < 3"), subs.combined());
    subs.remove(b);
    assertEquals(Predicate.NONE, subs.combined());
  }

  @Test
  void handlersAreThoseOfTheMomentTheBatchArrived() {
    Subscriptions.Entry a = entry("price > 10", seen, "a");
    subs.add(a);
    subs.dispatch(List.of(msg("b", 50)));
    subs.remove(a); // cancelled before the callback thread got to the batch
    subs.dispatch(List.of(msg("c", 60)));
    runCallbacks();
    assertEquals(List.of("a b"), seen);
  }
}
