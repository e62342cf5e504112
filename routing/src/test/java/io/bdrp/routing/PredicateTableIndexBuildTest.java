package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage.PredicateAd;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The index of D built off the thread that owns the table ({@link PredicateTable#buildIndexWith}):
 * an advertisement costs that thread no build, the index built last answers meanwhile, and one
 * built from a version overtaken by another change is replaced. Before, every change was indexed on
 * the router's event loop, over every router's filters (two million filters of a neighbour's
 * advertisements held it for seconds).
 */
class PredicateTableIndexBuildTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 2);
  private static final Encoder ENCODER = new Encoder(PARAMS);

  /** Builds handed over and not yet run: what a control thread would have queued. */
  private record Pending(Supplier<EncodedIndex> work, Consumer<EncodedIndex> done) {
    void run() {
      done.accept(work.get());
    }
  }

  private final List<Pending> pending = new ArrayList<>();

  private PredicateTable table() {
    RoutingConfig c = RoutingConfig.builder().maxRouters(64).updatePacingMs(0).build();
    PredicateTable t = new PredicateTable(0, 100, PARAMS, c, () -> 0L, () -> {});
    t.adjacencyUp(TestFaces.face(1, m -> {}));
    t.useRoutes(r -> 1, () -> new int[] {1, 2, 3}, new AtomicLong()::incrementAndGet);
    t.buildIndexWith((work, done) -> pending.add(new Pending(work, done)));
    return t;
  }

  private static EncodedPredicate enc(String p) {
    return ENCODER.encode(Predicate.parse(p));
  }

  private static int routersMatching(EncodedIndex index, String attribute) {
    long[] d = new long[index.routerWords()];
    return index.match(
        ENCODER.encode(io.bdrp.encoding.Message.builder().put(attribute, 1).build()), d);
  }

  @Test
  void anAdvertisementIsIndexedOffTheOwningThreadAndTheLastIndexAnswersMeanwhile() {
    PredicateTable t = table();
    pending.remove(0).run(); // the first build, of the empty table
    EncodedIndex empty = t.index();
    assertTrue(t.indexReady());

    t.receive(new PredicateAd(1, 2, 7, 1, enc("a = 1")));
    assertFalse(t.indexReady(), "the change is being indexed elsewhere");
    assertEquals(1, pending.size(), "one build handed over");
    assertSame(empty, t.index(), "the index built last answers, nothing built here");
    assertFalse(t.indexReady(), "index() did not build it on this thread");

    pending.remove(0).run();
    assertTrue(t.indexReady());
    EncodedIndex withA = t.index();
    assertNotSame(empty, withA);
    assertEquals(1, routersMatching(withA, "a"));
  }

  @Test
  void aBuildOvertakenByAnotherChangeIsFollowedByOneOfTheNewVersion() {
    PredicateTable t = table();
    pending.remove(0).run();
    t.receive(new PredicateAd(1, 2, 7, 1, enc("a = 1")));
    Pending first = pending.remove(0);
    t.receive(new PredicateAd(1, 3, 7, 1, enc("b = 1")));
    assertTrue(pending.isEmpty(), "one build at a time");
    first.run(); // of the version with router 2 only
    assertFalse(t.indexReady(), "out of date when it came back");
    assertEquals(1, routersMatching(t.index(), "a"), "it answers meanwhile");
    assertEquals(0, routersMatching(t.index(), "b"));
    assertEquals(1, pending.size(), "and another build started");
    pending.remove(0).run();
    assertTrue(t.indexReady());
    assertEquals(1, routersMatching(t.index(), "b"));
  }

  @Test
  void aFailedBuildLeavesTheIndexToBeBuiltWhenAskedFor() {
    PredicateTable t = table();
    pending.remove(0).run();
    t.receive(new PredicateAd(1, 2, 7, 1, enc("a = 1")));
    pending.remove(0).done().accept(null);
    assertEquals(1, routersMatching(t.index(), "a"), "built on this thread when asked for");
    assertTrue(t.indexReady());
  }
}
