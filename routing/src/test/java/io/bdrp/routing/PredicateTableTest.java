package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateDelta;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PredicateTableTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 2);
  private static final Encoder ENCODER = new Encoder(PARAMS);

  /** Every advertisement goes at once (no pacing): the flooding rules alone. */
  private static final RoutingConfig CONFIG =
      RoutingConfig.builder().maxRouters(64).updatePacingMs(0).build();

  private static final RoutingConfig PACED =
      RoutingConfig.builder().maxRouters(64).updatePacingMs(100).build();

  /** A face that records what is sent on it. */
  private static class Recorder implements Face {
    final int neighbour;
    final List<ControlMessage> sent = new ArrayList<>();

    Recorder(int neighbour) {
      this.neighbour = neighbour;
    }

    @Override
    public int neighbour() {
      return neighbour;
    }

    @Override
    public void send(ControlMessage m) {
      sent.add(m);
    }

    /** Whether the link says it holds enough; the table must hold back what can wait. */
    boolean backlogged;

    @Override
    public boolean backlogged() {
      return backlogged;
    }

    /** Versions this neighbour holds that it was not sent (it sent them to the table). */
    final Map<Integer, PredicateAd> heldBefore = new HashMap<>();

    /**
     * The advertisements sent, in order, a change rebuilt as the whole version it makes of the one
     * the neighbour held (which must be the change's base).
     */
    List<PredicateAd> ads() {
      List<PredicateAd> out = new ArrayList<>();
      Map<Integer, PredicateAd> held = new HashMap<>(heldBefore);
      for (ControlMessage m : sent) {
        List<ControlMessage.Advertisement> all =
            switch (m) {
              case ControlMessage.Advertisement a -> List.of(a);
              case ControlMessage.PredicateBatch b -> b.ads();
              default -> List.of();
            };
        for (ControlMessage.Advertisement a : all) {
          PredicateAd whole =
              switch (a) {
                case PredicateAd ad -> ad;
                case PredicateDelta d -> {
                  PredicateAd base = held.get(d.origin());
                  assertTrue(
                      base != null && base.epoch() == d.epoch() && base.seq() == d.baseSeq(),
                      () -> "a change from a version the neighbour does not hold: " + d);
                  yield new PredicateAd(
                      d.sender(),
                      d.origin(),
                      d.epoch(),
                      d.seq(),
                      base.predicate().apply(d.removed(), d.added()));
                }
              };
          held.put(whole.origin(), whole);
          out.add(whole);
        }
      }
      return out;
    }
  }

  private long now;
  private IntUnaryOperator hops;
  private int[] reachable = {};
  private int changes;
  private PredicateTable table;
  private Recorder one;
  private Recorder two;

  private static EncodedPredicate enc(String p) {
    return ENCODER.encode(Predicate.parse(p));
  }

  @BeforeEach
  void setUp() {
    table = new PredicateTable(0, 100, PARAMS, CONFIG, () -> now, () -> changes++);
    one = new Recorder(1);
    two = new Recorder(2);
    table.adjacencyUp(one);
    table.adjacencyUp(two);
    hops = r -> r == 0 ? 0 : r % 2 == 1 ? 1 : 2;
    table.useRoutes(r -> hops.applyAsInt(r), () -> reachable, new AtomicLong()::incrementAndGet);
    one.sent.clear();
    two.sent.clear();
  }

  @Test
  void ownChangeIsAdvertisedWithTheNextSequenceNumber() {
    table.setOwn(enc("x = 1"));
    table.setOwn(enc("x = 1"));
    now += CONFIG.helloIntervalMs();
    table.setOwn(enc("x = 2"));
    List<PredicateAd> ads = one.ads();
    assertEquals(2, ads.size(), "an unchanged aggregate is not re-advertised");
    assertEquals(1, ads.get(0).seq());
    assertEquals(2, ads.get(1).seq());
    assertEquals(100, ads.get(1).epoch());
    assertEquals(enc("x = 2"), ads.get(1).predicate());
    assertEquals(2, two.ads().size());
  }

  @Test
  void ownChangesWithinThePacingIntervalGoOutAsOneAdvertisementAtItsEnd() {
    PredicateTable paced = new PredicateTable(0, 100, PARAMS, PACED, () -> now, () -> {});
    Recorder three = new Recorder(3);
    paced.adjacencyUp(three); // its own (empty) advertisement goes at once
    now += PACED.updatePacingMs();
    paced.setOwn(enc("x = 1")); // the first change after a quiet interval goes out at once
    assertEquals(2, three.ads().size());
    now += 10;
    paced.setOwn(enc("x = 2"));
    paced.setOwn(enc("x = 3"));
    assertEquals(2, three.ads().size(), "held back until a pacing interval after the first");
    long due = now - 10 + PACED.updatePacingMs();
    assertEquals(due, paced.nextDeadlineMillis());
    now = due - 1;
    paced.tick();
    assertEquals(2, three.ads().size());
    now = due;
    paced.tick();
    List<PredicateAd> ads = three.ads();
    assertEquals(3, ads.size(), "one advertisement for both changes");
    assertEquals(enc("x = 3"), ads.get(2).predicate(), "the latest aggregate");
    assertEquals(3, ads.get(2).seq());
    paced.tick();
    assertEquals(3, three.ads().size(), "sent once");
  }

  @Test
  void newerAdvertisementsAreKeptAndPassedToTheOtherNeighbours() {
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    assertEquals(enc("y = 1"), table.get(5));
    assertEquals(1, changes);
    assertTrue(one.ads().isEmpty(), "not sent back to the sender");
    assertEquals(1, two.ads().size());

    table.receive(new PredicateAd(2, 5, 7, 1, enc("y = 1")));
    assertEquals(1, two.ads().size(), "an equal version is not passed on");
    assertTrue(one.ads().isEmpty());

    table.receive(new PredicateAd(1, 5, 7, 2, enc("y = 2")));
    assertEquals(enc("y = 2"), table.get(5));
    assertEquals(2, two.ads().size());
  }

  /** The disjunction of {@code x = i} for each i: consecutive sets differ in a few filters. */
  private static EncodedPredicate equalities(int... values) {
    StringBuilder p = new StringBuilder();
    for (int v : values) {
      p.append(p.isEmpty() ? "" : " || ").append("x = ").append(v);
    }
    return enc(p.toString());
  }

  @Test
  void aNewVersionGoesAsTheChangeFromTheOneTheNeighbourHolds() {
    table.setOwn(equalities(1, 2, 3, 4, 5, 6, 7, 8));
    now += CONFIG.helloIntervalMs();
    table.setOwn(equalities(1, 2, 3, 4, 5, 6, 7, 9));
    ControlMessage last = one.sent.get(one.sent.size() - 1);
    PredicateDelta d = assertInstanceOf(PredicateDelta.class, last);
    assertEquals(1, d.baseSeq());
    assertEquals(2, d.seq());
    assertEquals(equalities(8), d.removed());
    assertEquals(equalities(9), d.added());
    // Rebuilt on the neighbour's side, it is the whole new version.
    assertEquals(equalities(1, 2, 3, 4, 5, 6, 7, 9), one.ads().get(1).predicate());
    assertEquals(2, table.deltasSent(), "one per neighbour");
  }

  @Test
  void aReceivedChangeIsAppliedToTheVersionHeldAndPassedOn() {
    table.receive(new PredicateAd(1, 5, 7, 1, equalities(1, 2, 3)));
    table.receive(new PredicateDelta(1, 5, 7, 1, 2, equalities(3), equalities(4)));
    assertEquals(equalities(1, 2, 4), table.get(5));
    assertEquals(2, changes);
    // Passed on to the other neighbour, which gets the whole first version then the change.
    List<PredicateAd> toTwo = two.ads();
    assertEquals(equalities(1, 2, 4), toTwo.get(toTwo.size() - 1).predicate());
    assertTrue(one.ads().isEmpty(), "not sent back");
  }

  @Test
  void tablesThatShareVersionsHoldOneObjectPerVersionOfAnOrigin() {
    PredicateTable.SharedVersions shared = new PredicateTable.SharedVersions(64);
    PredicateTable a = new PredicateTable(2, 100, PARAMS, CONFIG, () -> now, () -> {});
    PredicateTable b = new PredicateTable(3, 100, PARAMS, CONFIG, () -> now, () -> {});
    a.shareVersions(shared);
    b.shareVersions(shared);
    // The same version in two messages, each with its own copy of the filters.
    a.receive(new PredicateAd(1, 5, 7, 1, equalities(1, 2, 3)));
    b.receive(new PredicateAd(1, 5, 7, 1, equalities(1, 2, 3)));
    assertSame(a.get(5), b.get(5));
    // A change is applied by the first table; the second takes its result.
    a.receive(new PredicateDelta(1, 5, 7, 1, 2, equalities(3), equalities(4)));
    b.receive(new PredicateDelta(1, 5, 7, 1, 2, equalities(3), equalities(4)));
    assertEquals(equalities(1, 2, 4), b.get(5));
    assertSame(a.get(5), b.get(5));
    // A change from a base the table does not hold is still refused, shared or not.
    PredicateTable c = new PredicateTable(4, 100, PARAMS, CONFIG, () -> now, () -> {});
    c.shareVersions(shared);
    c.receive(new PredicateDelta(1, 5, 7, 1, 2, equalities(3), equalities(4)));
    assertNull(c.get(5));
    assertEquals(1, c.resyncs());
    // A table that does not share keeps its own copy.
    table.receive(new PredicateAd(1, 5, 7, 2, equalities(1, 2, 4)));
    assertEquals(a.get(5), table.get(5));
    assertNotSame(a.get(5), table.get(5));
  }

  @Test
  void aChangeFromAVersionNotHeldIsAnsweredWithARequestForTheWhole() {
    table.receive(new PredicateAd(1, 5, 7, 1, equalities(1, 2, 3)));
    // Base 2, but version 1 is held: ask for the whole, change nothing.
    table.receive(new PredicateDelta(1, 5, 7, 2, 3, equalities(3), equalities(4)));
    assertEquals(equalities(1, 2, 3), table.get(5));
    assertEquals(1, table.resyncs());
    assertEquals(new PredicateRequest(0, 5), one.sent.get(one.sent.size() - 1));
    // A change whose removed filter is not in the base version is refused the same way.
    table.receive(new PredicateDelta(1, 5, 7, 1, 2, equalities(9), equalities(4)));
    assertEquals(2, table.resyncs());
    assertEquals(equalities(1, 2, 3), table.get(5));
    // The whole answer is taken.
    table.receive(new PredicateAd(1, 5, 7, 3, equalities(1, 2, 4)));
    assertEquals(equalities(1, 2, 4), table.get(5));
  }

  @Test
  void aRequestMakesTheAnswerWhole() {
    table.setOwn(equalities(1, 2, 3, 4, 5, 6, 7, 8));
    // Version 2 waits for the hello interval; neighbour 1 holds version 1 and asks.
    table.setOwn(equalities(1, 2, 3, 4, 5, 6, 7, 9));
    one.sent.clear();
    table.receive(new PredicateRequest(1, 0));
    PredicateAd whole =
        assertInstanceOf(
            PredicateAd.class, one.sent.get(0), "the neighbour said it lacks the base");
    assertEquals(2, whole.seq());
  }

  @Test
  void theIndexIsBuiltOnTheControlPathShortlyAfterTheLastChange() {
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    assertFalse(table.indexReady());
    assertTrue(table.nextDeadlineMillis() <= now + PredicateTable.INDEX_BUILD_DELAY_MS);
    now += PredicateTable.INDEX_BUILD_DELAY_MS - 1;
    table.receive(new PredicateAd(1, 6, 7, 1, enc("y = 2")));
    now += PredicateTable.INDEX_BUILD_DELAY_MS - 1;
    table.tick();
    assertFalse(table.indexReady(), "a change restarts the delay");
    now += 1;
    table.tick();
    assertTrue(table.indexReady());
  }

  @Test
  void withoutBuildingAheadTheIndexIsBuiltWhenFirstAskedForAndHasTheCurrentPredicates() {
    table.buildIndexAhead(false);
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    now += 10 * PredicateTable.INDEX_BUILD_DELAY_MS;
    table.tick();
    assertFalse(table.indexReady(), "not built on the control path");
    var index = table.index();
    assertTrue(table.indexReady());
    assertEquals(1, index.routerCount(), "the one other router's predicate is in it");
  }

  @Test
  void anOlderAdvertisementIsAnsweredWithTheNewerOne() {
    table.receive(new PredicateAd(1, 5, 7, 3, enc("y = 3")));
    table.receive(new PredicateAd(2, 5, 7, 2, enc("y = 2")));
    assertEquals(enc("y = 3"), table.get(5));
    PredicateAd reply = two.ads().get(two.ads().size() - 1);
    assertEquals(3, reply.seq());
  }

  @Test
  void aRestartedOriginWithANewEpochReplacesItsOldEntry() {
    table.receive(new PredicateAd(1, 5, 7, 40, enc("y = 1")));
    table.receive(new PredicateAd(1, 5, 8, 1, enc("y = 9")));
    assertEquals(enc("y = 9"), table.get(5), "epoch 8 seq 1 is newer than epoch 7 seq 40");
  }

  /**
   * A new neighbour's whole table goes as fast as its link drains, not all at once into the link:
   * while the link is backlogged the table keeps the origins queued (asked again each pacing
   * interval, no sooner), and what goes later is the version held then. Before, every advertisement
   * held was handed to the link at once, and a table larger than the link's bound cut the new
   * neighbour as a slow consumer.
   */
  @Test
  void aBackloggedLinkIsSentTheRestOfTheTableAsItDrains() {
    RoutingConfig small =
        RoutingConfig.builder()
            .maxRouters(64)
            .updatePacingMs(100)
            .maxControlFrameBytes(RoutingConfig.MIN_CONTROL_FRAME_BYTES)
            .build();
    PredicateTable paced = new PredicateTable(0, 100, PARAMS, small, () -> now, () -> {});
    Recorder four = new Recorder(4);
    paced.adjacencyUp(four);
    for (int origin = 5; origin < 45; origin++) {
      int[] values = new int[40];
      for (int v = 0; v < values.length; v++) {
        values[v] = origin * 1000 + v;
      }
      paced.receive(new PredicateAd(4, origin, 7, 1, equalities(values)));
    }
    now += small.updatePacingMs();
    Recorder three =
        new Recorder(3) {
          @Override
          public void send(ControlMessage m) {
            super.send(m);
            backlogged = true; // a link that takes one frame, then waits for its reader
          }
        };
    paced.adjacencyUp(three);
    assertEquals(1, three.sent.size(), "one frame, then the link was backlogged");
    int queued = paced.queued();
    assertTrue(queued > 30, queued + " origins left queued");
    paced.receive(new PredicateAd(4, 44, 7, 2, equalities(1))); // replaces a queued version
    now += small.updatePacingMs();
    assertEquals(now, paced.nextDeadlineMillis(), "asked again a pacing interval later");
    paced.tick();
    assertEquals(1, three.sent.size(), "nothing more while the link is backlogged");
    assertEquals(now + small.updatePacingMs(), paced.nextDeadlineMillis(), "not sooner");
    int rounds = 0;
    while (paced.queued() > 0) {
      three.backlogged = false; // the neighbour read what it had
      now += small.updatePacingMs();
      paced.tick();
      rounds++;
      assertTrue(rounds < 100);
    }
    assertEquals(1 + rounds, three.sent.size(), "one frame a round, as the link drained");
    assertTrue(rounds > 1);
    List<PredicateAd> ads = three.ads();
    assertEquals(
        java.util.stream.IntStream.range(0, 45).filter(o -> o == 0 || o >= 5).boxed().toList(),
        ads.stream().map(PredicateAd::origin).sorted().toList(),
        "each origin once");
    PredicateAd last = ads.stream().filter(a -> a.origin() == 44).findFirst().orElseThrow();
    assertEquals(2, last.seq(), "the version held when it went");
  }

  @Test
  void advertisementsWithinThePacingIntervalGoOutAsOneBatchWithTheNewestVersionOnly() {
    PredicateTable paced = new PredicateTable(0, 100, PARAMS, PACED, () -> now, () -> {});
    Recorder three = new Recorder(3);
    Recorder four = new Recorder(4);
    paced.adjacencyUp(three); // its own (empty) advertisement goes at once
    paced.adjacencyUp(four);
    assertEquals(1, three.sent.size());
    paced.receive(new PredicateAd(4, 5, 7, 1, enc("y = 1")));
    paced.receive(new PredicateAd(4, 6, 7, 1, enc("z = 1")));
    paced.receive(new PredicateAd(4, 5, 7, 2, enc("y = 2")));
    assertEquals(1, three.sent.size(), "held until the pacing interval has passed");
    assertEquals(2, paced.queued(), "one per origin: the second version of 5 replaced the first");
    assertEquals(PACED.updatePacingMs(), paced.nextDeadlineMillis());
    now = PACED.updatePacingMs();
    paced.tick();
    assertEquals(2, three.sent.size());
    ControlMessage.PredicateBatch batch = (ControlMessage.PredicateBatch) three.sent.get(1);
    assertEquals(
        List.of(5, 6), batch.ads().stream().map(ControlMessage.Advertisement::origin).toList());
    assertEquals(2, batch.ads().get(0).seq(), "the version of 5 that replaced the queued one");
    assertEquals(0, paced.queued());
    assertTrue(four.ads().stream().allMatch(a -> a.origin() == 0), "nothing sent back");
  }

  @Test
  void aNewAdjacencyGetsEverything() {
    table.setOwn(enc("x = 1"));
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    Recorder three = new Recorder(3);
    table.adjacencyUp(three);
    List<PredicateAd> ads = three.ads();
    assertEquals(2, ads.size());
    assertEquals(0, ads.get(0).origin());
    assertEquals(5, ads.get(1).origin());
  }

  /** Ticks every hello interval until {@code until}. */
  private void runUntil(long until) {
    while (now < until) {
      now = Math.min(until, table.nextDeadlineMillis());
      table.tick();
    }
  }

  @Test
  void unreachableOriginsExpireWithinAHelloIntervalOfTheTimeout() {
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    runUntil(10_000);
    hops = r -> r == 5 ? -1 : 1;
    long lost = now;
    runUntil(lost + CONFIG.predicateExpiryMs() - 1);
    assertEquals(enc("y = 1"), table.get(5), "kept until the timeout");
    runUntil(lost + CONFIG.predicateExpiryMs() + 2 * CONFIG.helloIntervalMs());
    assertNull(table.get(5), "dropped at most a scan after it");
    assertEquals(2, changes, "changed when it arrived and when it went");
  }

  @Test
  void aScanIsSkippedWhileTheRoutesVersionAndTheHeldOriginsStayTheSame() {
    long[] version = {1};
    table.useRoutes(r -> hops.applyAsInt(r), () -> reachable, () -> version[0]);
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    runUntil(10_000);
    hops = r -> r == 5 ? -1 : 1; // a route lost, but the version does not say so
    runUntil(now + 3 * CONFIG.predicateExpiryMs());
    assertEquals(enc("y = 1"), table.get(5), "not scanned: nothing it looks at changed");
    version[0]++;
    long lost = now;
    runUntil(lost + CONFIG.predicateExpiryMs() + 2 * CONFIG.helloIntervalMs());
    assertNull(table.get(5), "scanned once the version changed, and dropped at the timeout");

    // A reachable origin without an advertisement keeps the scans going: it is asked for again.
    hops = r -> 1;
    reachable = new int[] {9};
    version[0]++;
    one.sent.clear();
    runUntil(now + 3 * CONFIG.deadIntervalMs() + CONFIG.helloIntervalMs());
    assertTrue(
        one.sent.stream().filter(m -> m.equals(new PredicateRequest(0, 9))).count() >= 3,
        "asked again every dead interval: " + one.sent);
  }

  @Test
  void anOriginThatComesBackInTimeIsKept() {
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    hops = r -> r == 5 ? -1 : 1;
    runUntil(CONFIG.predicateExpiryMs() / 2);
    hops = r -> 1;
    runUntil(10 * CONFIG.predicateExpiryMs());
    assertEquals(enc("y = 1"), table.get(5));
  }

  @Test
  void aScanAsksForTheAdvertisementsOfReachableOriginsItLacks() {
    table.receive(new PredicateAd(1, 5, 7, 1, enc("y = 1")));
    reachable = new int[] {5, 9};
    runUntil(CONFIG.helloIntervalMs());
    assertEquals(List.of(new PredicateRequest(0, 9)), one.sent, "9 is asked of its next hop, 1");
  }

  @Test
  void aMissingAdvertisementIsAskedForOnceFromTheNextHop() {
    table.requestIfMissing(9);
    table.requestIfMissing(9);
    assertEquals(List.of(new PredicateRequest(0, 9)), one.sent);
    now += CONFIG.deadIntervalMs();
    table.requestIfMissing(9);
    assertEquals(2, one.sent.size(), "asked again after a dead interval");
    table.receive(new PredicateRequest(2, 9));
    assertTrue(two.sent.isEmpty(), "nothing held, nothing answered");
    table.receive(new PredicateRequest(2, 0));
    assertEquals(1, two.ads().size());
  }

  @Test
  void aNewerVersionOfItsOwnAdvertisementMakesTheRouterJumpPastIt() {
    table.setOwn(enc("x = 1"));
    table.receive(new PredicateAd(1, 0, 100, 50, enc("x = 7")));
    assertEquals(enc("x = 1"), table.get(0));
    runUntil(CONFIG.helloIntervalMs()); // paced: the setOwn flood went out just now
    PredicateAd last = two.ads().get(two.ads().size() - 1);
    assertEquals(100, last.epoch());
    assertEquals(51, last.seq());
    assertEquals(enc("x = 1"), last.predicate());
  }

  @Test
  void anOwnAdvertisementFromALaterEpochMovesTheRouterToThatEpoch() {
    table.setOwn(enc("x = 1"));
    now += CONFIG.helloIntervalMs();
    table.receive(new PredicateAd(1, 0, 5_000, 7, PredicateTableTest.enc("x = 7")));
    PredicateAd last = two.ads().get(two.ads().size() - 1);
    assertEquals(5_000, last.epoch(), "moved to the later epoch");
    assertEquals(8, last.seq());
    assertEquals(enc("x = 1"), last.predicate(), "with its own predicate");
    table.receive(new PredicateAd(1, 0, 5_000, Long.MAX_VALUE, enc("x = 7")));
    runUntil(2 * CONFIG.helloIntervalMs());
    last = two.ads().get(two.ads().size() - 1);
    assertEquals(5_001, last.epoch(), "past the last sequence number of an epoch: the next epoch");
    assertEquals(0, last.seq());
  }

  /**
   * A forged advertisement of router 0 with a far later epoch, held by its neighbour 1: router 0
   * moves past it once and router 1 takes the real one, instead of the two answering each other for
   * ever; router 1 ends up with router 0's predicate.
   */
  @Test
  void aForgedOwnAdvertisementHeldByANeighbourEndsInOneExchange() {
    PredicateTable other = new PredicateTable(1, 200, PARAMS, CONFIG, () -> now, () -> {});
    java.util.ArrayDeque<Runnable> wire = new java.util.ArrayDeque<>();
    int[] messages = {0};
    Face toOther =
        new Face() {
          public int neighbour() {
            return 1;
          }

          public void send(ControlMessage m) {
            messages[0]++;
            wire.add(() -> deliver(other, m));
          }
        };
    Face toTable =
        new Face() {
          public int neighbour() {
            return 0;
          }

          public void send(ControlMessage m) {
            messages[0]++;
            wire.add(() -> deliver(table, m));
          }
        };
    table.adjacencyDown(1);
    table.adjacencyDown(2);
    table.setOwn(enc("x = 1"));
    table.adjacencyUp(toOther);
    other.adjacencyUp(toTable);
    other.receive(new PredicateAd(9, 0, 1L << 62, 0, EncodedPredicate.empty(PARAMS)));
    for (long t = 0; t < 20 * CONFIG.helloIntervalMs(); t += 10) {
      now += 10;
      table.tick();
      other.tick();
      while (!wire.isEmpty()) {
        wire.poll().run();
        assertTrue(messages[0] < 100, "the exchange ends");
      }
    }
    assertEquals(enc("x = 1"), other.get(0), "router 1 holds router 0's real predicate");
  }

  private static void deliver(PredicateTable to, ControlMessage m) {
    switch (m) {
      case PredicateAd a -> to.receive(a);
      case PredicateDelta d -> to.receive(d);
      case PredicateRequest r -> to.receive(r);
      default -> {}
    }
  }

  @Test
  void foreignParametersAndOutOfRangeOriginsAreRejected() {
    EncodedPredicate other =
        new Encoder(new BloomParameters(256, 2)).encode(Predicate.parse("a=1"));
    table.receive(new PredicateAd(1, 5, 1, 1, other));
    table.receive(new PredicateAd(1, 64, 1, 1, enc("a = 1")));
    assertEquals(2, table.rejected());
    assertNull(table.get(5));
    assertTrue(two.sent.isEmpty());
  }
}
