package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage.AdvertisementFrames;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateBatch;
import io.bdrp.routing.ControlMessage.PredicateDelta;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import io.bdrp.routing.PredicateTable.Refusal;
import io.bdrp.routing.PredicateTable.Refusal.Reason;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * What PREDICATES holds and sends is bounded: frames fit the neighbours' frame limit, an origin's
 * advertisement and all of them together are bounded in filters and bytes, the match-all filter is
 * counted and may be refused, and origins without a route go after the expiry.
 */
class PredicateTableBoundsTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 2);
  private static final Encoder ENCODER = new Encoder(PARAMS);

  private long now;

  private IntUnaryOperator hops = r -> 1;
  private int[] reachable = {};
  private final List<ControlMessage> toOne = new ArrayList<>();
  private final List<ControlMessage> toTwo = new ArrayList<>();
  private final List<Refusal> refusals = new ArrayList<>();

  private static RoutingConfig.Builder config() {
    return RoutingConfig.builder().maxRouters(256).updatePacingMs(0);
  }

  /** A table of router 0 with neighbours 1 and 2, which have been sent its first advertisement. */
  private PredicateTable table(RoutingConfig config) {
    PredicateTable t = new PredicateTable(0, 100, PARAMS, config, () -> now, () -> {});
    t.adjacencyUp(TestFaces.face(1, toOne::add));
    t.adjacencyUp(TestFaces.face(2, toTwo::add));
    t.useRoutes(r -> hops.applyAsInt(r), () -> reachable, new AtomicLong()::incrementAndGet);
    t.onRefusal(refusals::add);
    toOne.clear();
    toTwo.clear();
    return t;
  }

  /** The disjunction of {@code x = v} for v in from..to-1: one filter each. */
  private static EncodedPredicate equalities(int from, int to) {
    StringBuilder p = new StringBuilder();
    for (int v = from; v < to; v++) {
      p.append(p.isEmpty() ? "" : " || ").append("x = ").append(v);
    }
    return ENCODER.encode(Predicate.parse(p.toString()));
  }

  private static EncodedPredicate enc(String p) {
    return ENCODER.encode(Predicate.parse(p));
  }

  private static List<ControlMessage.Advertisement> advertisements(List<ControlMessage> sent) {
    List<ControlMessage.Advertisement> out = new ArrayList<>();
    for (ControlMessage m : sent) {
      switch (m) {
        case ControlMessage.Advertisement a -> out.add(a);
        case PredicateBatch b -> out.addAll(b.ads());
        default -> {}
      }
    }
    return out;
  }

  /**
   * A cold start's burst to a neighbour is cut into frames that each fit its frame limit, and all
   * of it goes. Guards against batches cut only by count (64 advertisements of any size), which
   * made a frame the neighbour refused as too large and took the link down.
   */
  @Test
  void aBurstOfAdvertisementsIsCutIntoFramesThatEachFitTheLimit() {
    RoutingConfig c = config().maxControlFrameBytes(1024).updatePacingMs(100).build();
    PredicateTable t = table(c);
    now = 1_000; // the first flush after the adjacency came up is behind
    for (int origin = 10; origin < 70; origin++) {
      t.receive(new PredicateAd(2, origin, 7, 1, equalities(origin, origin + 20)));
    }
    now += c.updatePacingMs();
    t.tick();
    assertTrue(toOne.size() > 1, "more than one frame: " + toOne.size());
    for (ControlMessage m : toOne) {
      long length = AdvertisementFrames.lengthField(m);
      assertTrue(
          length <= 1024,
          "a frame of "
              + length
              + " bytes for "
              + advertisements(List.of(m)).size()
              + " advertisements");
    }
    Set<Integer> origins = new HashSet<>();
    for (ControlMessage.Advertisement a : advertisements(toOne)) {
      origins.add(a.origin());
    }
    assertEquals(60, origins.size(), "every origin went, each once");
  }

  /**
   * An aggregate that no frame could carry is not adopted: the caller is told why (the knob and
   * both numbers), it is counted, the version advertised stays, and nothing is sent. Guards against
   * an advertisement larger than the neighbours' frame limit, which they refused as {@code
   * frame_too_large}, taking the link down for as long as the host stayed.
   */
  @Test
  void anAggregateThatCannotFitAFrameIsRefusedWithItsReasonAndNothingIsSent() {
    PredicateTable t = table(config().maxControlFrameBytes(1024).build());
    assertNull(t.setOwn(equalities(0, 10)));
    toOne.clear();
    toTwo.clear();
    EncodedPredicate huge = equalities(0, 600);
    long frame = AdvertisementFrames.whole(huge);
    assertTrue(frame > 1024, "the test's aggregate needs " + frame + " bytes");
    Refusal r = t.setOwn(huge);
    assertNotNull(r);
    assertEquals(Reason.FRAME_TOO_LARGE, r.reason());
    assertEquals(frame, r.amount());
    assertEquals(1024, r.limit());
    assertTrue(r.message().contains("routing.maxControlFrameBytes = 1024"), r.message());
    assertEquals(1, t.ownRefused());
    assertEquals(equalities(0, 10), t.get(0), "the version advertised stays");
    assertTrue(toOne.isEmpty() && toTwo.isEmpty(), "nothing sent");
  }

  /**
   * An aggregate of more filters than one advertisement can carry (65,535) is refused with its
   * reason. Guards against the encoder throwing inside the write, so that the advertisement was
   * silently never sent.
   */
  @Test
  void anAggregateOfMoreFiltersThanAnAdvertisementCarriesIsRefused() {
    BloomParameters wide = new BloomParameters(1024, 2);
    PredicateTable t = new PredicateTable(0, 100, wide, RoutingConfig.DEFAULT, () -> now, () -> {});
    t.adjacencyUp(TestFaces.face(1, toOne::add));
    toOne.clear();
    int n = RoutingConfig.MAX_ORIGIN_FILTERS + 1;
    long[][] filters = new long[n][];
    int made = 0;
    for (int i = 0; made < n; i++) {
      for (int j = i + 1; j < wide.bits() && made < n; j++) {
        long[] f = wide.newFilter();
        f[i >>> 6] |= 1L << i;
        f[j >>> 6] |= 1L << j;
        filters[made++] = f;
      }
    }
    Arrays.sort(filters, Arrays::compareUnsigned);
    long[] flat = new long[n * wide.words()];
    for (int i = 0; i < n; i++) {
      System.arraycopy(filters[i], 0, flat, i * wide.words(), wide.words());
    }
    Refusal r = t.setOwn(EncodedPredicate.ofSortedFilters(wide, flat));
    assertNotNull(r);
    assertEquals(Reason.TOO_MANY_FILTERS, r.reason());
    assertEquals(n, r.amount());
    assertTrue(r.message().contains("routing.maxOriginFilters"), r.message());
    assertTrue(toOne.isEmpty());
  }

  /**
   * A host whose predicate would take the aggregate beyond a bound is told so, and keeps the
   * predicate it had: local matching and the advertisement agree. Guards against a host's predicate
   * that is matched locally but never advertised.
   */
  @Test
  void aRefusedHostPredicateIsRolledBackAndTheRefusalReturned() {
    RoutingNode node =
        new RoutingNode(0, 100, config().maxOriginFilters(20).build(), PARAMS, () -> now);
    Predicate small = Predicate.parse("x = 1 || x = 2");
    assertNull(node.setHost(7, small));
    EncodedPredicate advertised = node.predicates().get(0);
    StringBuilder big = new StringBuilder("x = 100");
    for (int v = 101; v < 130; v++) {
      big.append(" || x = ").append(v);
    }
    Refusal r = node.setHost(7, Predicate.parse(big.toString()));
    assertNotNull(r);
    assertEquals(Reason.TOO_MANY_FILTERS, r.reason());
    assertEquals(small, node.local().predicate(7), "the host keeps its predicate");
    assertEquals(advertised, node.predicates().get(0));
    assertEquals(advertised, node.local().aggregate());
    // A new host refused has none.
    assertNotNull(node.setHost(8, Predicate.parse(big.toString())));
    Predicate left = node.local().predicate(8);
    assertTrue(left == null || left.equals(Predicate.NONE), "host 8 has none: " + left);
    assertEquals(1, node.local().hostCount());
  }

  /**
   * A neighbour's advertisement beyond the per-origin bounds is refused, counted and told, leaves
   * the version held in force and is not passed on; a change that would take it beyond them too.
   * Guards against PREDICATES growing by whatever one origin advertises.
   */
  @Test
  void anAdvertisementBeyondThePerOriginBoundsIsRefusedAndTheHeldVersionStays() {
    // Filters are held as their set bits: the byte bound is the size of six of them, so that five
    // and six fit and nine (a superset of the six) does not.
    long bound = equalities(0, 6).byteSize();
    assertTrue(equalities(0, 5).union(equalities(20, 24)).byteSize() > bound);
    RoutingConfig c = config().maxOriginFilters(10).maxOriginFilterBytes(bound).build();
    PredicateTable t = table(c);
    t.receive(new PredicateAd(1, 5, 7, 1, equalities(0, 5)));
    int sent = toTwo.size();
    t.receive(new PredicateAd(1, 5, 7, 2, equalities(0, 11)));
    assertEquals(equalities(0, 5), t.get(5), "the version held stays");
    assertEquals(Reason.TOO_MANY_FILTERS, refusals.get(0).reason());
    assertEquals(5, refusals.get(0).origin());
    t.receive(new PredicateAd(1, 5, 7, 3, equalities(0, 9)));
    assertEquals(Reason.TOO_MANY_BYTES, refusals.get(1).reason());
    assertEquals(equalities(0, 9).byteSize(), refusals.get(1).amount());
    t.receive(
        new PredicateDelta(1, 5, 7, 1, 4, EncodedPredicate.empty(PARAMS), equalities(20, 24)));
    assertEquals(Reason.TOO_MANY_BYTES, refusals.get(2).reason(), "5 + 4 filters, as a change");
    assertEquals(equalities(0, 5), t.get(5));
    assertEquals(3, t.refusedTooLarge());
    assertEquals(sent, toTwo.size(), "nothing refused is passed on");
    assertEquals(equalities(0, 5).byteSize(), t.otherFilterBytes());
    // A version within the bounds is taken again.
    t.receive(new PredicateAd(1, 5, 7, 5, equalities(0, 6)));
    assertEquals(equalities(0, 6), t.get(5));
  }

  /**
   * The other routers' filters together stay within the total bound: a new origin beyond it is
   * refused with a reason worth a warning, while this router's own hosts may still subscribe; room
   * made by expiry is used again. Guards against advertisements for many origins, used or not,
   * growing PREDICATES without bound.
   */
  @Test
  void newOriginsBeyondTheTotalBoundAreRefusedAndTheOwnAggregateIsNot() {
    // Room for exactly the first six origins' filters, as held (their set bits).
    long six = 0;
    long largest = 0;
    for (int origin = 10; origin < 16; origin++) {
      six += enc("y = " + origin).byteSize();
      largest = Math.max(largest, enc("y = " + origin).byteSize());
    }
    RoutingConfig c =
        config()
            .maxOriginFilterBytes(Math.max(2 * largest, equalities(0, 4).byteSize()))
            .maxPredicateFilterBytes(six)
            .build();
    PredicateTable t = table(c);
    hops = r -> -1; // numbers no router uses: no route, ever
    for (int origin = 10; origin < 20; origin++) {
      t.receive(new PredicateAd(1, origin, 7, 1, enc("y = " + origin)));
    }
    assertEquals(7, t.size(), "six others and this router");
    assertEquals(six, t.otherFilterBytes());
    assertEquals(4, t.refusedTableFull());
    Refusal r = refusals.get(0);
    assertEquals(Reason.TABLE_FULL, r.reason());
    assertEquals(16, r.origin());
    assertTrue(r.message().contains("routing.maxPredicateFilterBytes"), r.message());
    // A held origin may not grow beyond the total either, but may shrink or stay.
    t.receive(new PredicateAd(1, 10, 7, 2, equalities(0, 2)));
    assertEquals(enc("y = 10"), t.get(10));
    assertEquals(5, t.refusedTableFull());
    assertNull(t.setOwn(equalities(0, 4)), "the own aggregate is not counted in the total");
    // They have no route: once expired, there is room again.
    long until = now + c.predicateExpiryMs() + 2 * c.helloIntervalMs();
    while (now < until) {
      now = Math.min(until, t.nextDeadlineMillis());
      t.tick();
    }
    assertEquals(1, t.size());
    t.receive(new PredicateAd(1, 16, 7, 1, enc("y = 16")));
    assertEquals(enc("y = 16"), t.get(16));
  }

  /**
   * An origin refused is not asked for at every dead interval (each answer would be refused again),
   * but is after the expiry time. Guards against a request and a whole advertisement per refused
   * origin every few seconds.
   */
  @Test
  void aRefusedOriginIsNotAskedForAgainUntilTheExpiryTime() {
    RoutingConfig c = config().acceptMatchAll(false).build();
    PredicateTable t = table(c);
    t.receive(new PredicateAd(1, 9, 7, 1, ENCODER.encode(Predicate.ALL)));
    assertNull(t.get(9));
    reachable = new int[] {9};
    long until = now + c.predicateExpiryMs() - 1;
    while (now < until) {
      now = Math.min(until, t.nextDeadlineMillis());
      t.tick();
    }
    assertFalse(toOne.contains(new PredicateRequest(0, 9)), "not asked for: " + toOne);
    now += c.helloIntervalMs() + 1;
    t.tick();
    assertTrue(toOne.contains(new PredicateRequest(0, 9)), "asked for after the expiry time");
  }

  /**
   * Origins whose predicate holds the match-all filter are counted (this router's too); with
   * acceptMatchAll off, other routers' are refused and counted while this router's hosts may still
   * subscribe to {@code true}. Guards against a router that receives all traffic unseen.
   */
  @Test
  void theMatchAllFilterIsCountedAndMayBeRefused() {
    EncodedPredicate all = ENCODER.encode(Predicate.ALL);
    assertTrue(PredicateTable.matchesAll(all));
    assertFalse(PredicateTable.matchesAll(enc("y = 1")));
    PredicateTable t = table(config().build());
    t.receive(new PredicateAd(1, 5, 7, 1, all));
    assertSame(all, t.get(5));
    assertEquals(1, t.matchAllOrigins());
    t.setOwn(all);
    assertEquals(2, t.matchAllOrigins());
    t.receive(new PredicateAd(1, 5, 7, 2, enc("y = 1")));
    assertEquals(1, t.matchAllOrigins(), "origin 5 no longer matches everything");

    PredicateTable strict = table(config().acceptMatchAll(false).build());
    strict.receive(new PredicateAd(1, 6, 7, 1, all));
    assertNull(strict.get(6));
    assertEquals(1, strict.refusedMatchAll());
    assertEquals(Reason.MATCH_ALL, refusals.get(refusals.size() - 1).reason());
    assertEquals(0, strict.matchAllOrigins());
    assertNull(strict.setOwn(all), "this router's own hosts may subscribe to true");
    assertEquals(1, strict.matchAllOrigins());
  }

  /**
   * An advertisement for a router number that never has a route is held no longer than the
   * unreachable timeout (and at most a scan after it). Checks, for numbers no router uses, the
   * expiry that bounds how long such entries hold memory.
   */
  @Test
  void anOriginThatNeverHadARouteGoesAfterTheTimeout() {
    RoutingConfig c = config().build();
    PredicateTable t = table(c);
    hops = r -> r == 40 ? -1 : 1;
    long arrived = now;
    t.receive(new PredicateAd(1, 40, 7, 1, enc("y = 1")));
    long until = arrived + c.predicateExpiryMs() - 1;
    while (now < until) {
      now = Math.min(until, t.nextDeadlineMillis());
      t.tick();
    }
    assertEquals(enc("y = 1"), t.get(40), "kept until the timeout");
    until = arrived + c.predicateExpiryMs() + c.helloIntervalMs();
    while (now < until) {
      now = Math.min(until, t.nextDeadlineMillis());
      t.tick();
    }
    assertNull(t.get(40), "dropped at most a scan after it");
    assertEquals(0, t.otherFilterBytes());
  }
}
