package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.StringJoiner;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * Flooding with changes: four routers in a ring (so a version reaches a router by two paths, and a
 * change can arrive for a base it no longer holds), each changing its aggregate at random, links
 * going down and up, messages delivered in a random order across links (in order on each). Once
 * everything is delivered, every router holds every other router's current aggregate exactly: no
 * sequence of changes, whole advertisements and resyncs leaves a filter missing (a false negative)
 * or one too many.
 */
class AdvertisementFloodingPropertyTest {
  private static final int N = 4;
  private static final BloomParameters PARAMS = new BloomParameters(256, 2);
  private static final Encoder ENCODER = new Encoder(PARAMS);
  private static final RoutingConfig CONFIG =
      RoutingConfig.builder().maxRouters(N).updatePacingMs(20).build();

  private long now;
  private PredicateTable[] tables;
  private boolean[][] up;

  /** Messages in flight on the link a → b, in order. */
  private final List<ArrayDeque<ControlMessage>> links = new ArrayList<>();

  @Property(tries = 300)
  void everyRouterEndsWithEveryAggregateExactly(@ForAll long seed) {
    run(seed);
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++) {
        assertEquals(tables[j].get(j), tables[i].get(j), "router " + i + " on router " + j);
      }
    }
  }

  @Test
  void theRunsSendChanges() {
    long deltas = 0;
    for (long seed = 0; seed < 20; seed++) {
      run(seed);
      for (PredicateTable t : tables) {
        deltas += t.deltasSent();
      }
    }
    assertTrue(deltas > 0, "no advertisement went as a change");
  }

  private void run(long seed) {
    Random random = new Random(seed);
    now = 0;
    tables = new PredicateTable[N];
    up = new boolean[N][N];
    links.clear();
    for (int i = 0; i < N * N; i++) {
      links.add(new ArrayDeque<>());
    }
    for (int i = 0; i < N; i++) {
      tables[i] = new PredicateTable(i, 1, PARAMS, CONFIG, () -> now, () -> {});
    }
    for (int i = 0; i < N; i++) {
      connect(i, (i + 1) % N);
    }
    for (int step = 0; step < 400; step++) {
      int action = random.nextInt(100);
      if (action < 15) {
        tables[random.nextInt(N)].setOwn(aggregate(random));
      } else if (action < 80) {
        deliverOne(random);
      } else if (action < 97) {
        now += random.nextInt(60);
        for (PredicateTable t : tables) {
          t.tick();
        }
      } else {
        int a = random.nextInt(N);
        int b = (a + 1) % N;
        disconnect(a, b);
        connect(a, b);
      }
    }
    settle();
  }

  /** An aggregate of 4 to 12 of 24 equality conjunctions: consecutive ones differ in a few. */
  private static EncodedPredicate aggregate(Random random) {
    StringJoiner p = new StringJoiner(" || ");
    int n = 4 + random.nextInt(9);
    for (int i = 0; i < n; i++) {
      p.add("x = " + random.nextInt(24));
    }
    return ENCODER.encode(Predicate.parse(p.toString()));
  }

  private ArrayDeque<ControlMessage> link(int a, int b) {
    return links.get(a * N + b);
  }

  private void connect(int a, int b) {
    up[a][b] = up[b][a] = true;
    tables[a].adjacencyUp(TestFaces.face(b, m -> link(a, b).add(m)));
    tables[b].adjacencyUp(TestFaces.face(a, m -> link(b, a).add(m)));
  }

  private void disconnect(int a, int b) {
    up[a][b] = up[b][a] = false;
    link(a, b).clear();
    link(b, a).clear();
    tables[a].adjacencyDown(b);
    tables[b].adjacencyDown(a);
  }

  private boolean deliverOne(Random random) {
    List<Integer> busy = new ArrayList<>();
    for (int i = 0; i < links.size(); i++) {
      if (!links.get(i).isEmpty()) {
        busy.add(i);
      }
    }
    if (busy.isEmpty()) {
      return false;
    }
    int l = busy.get(random.nextInt(busy.size()));
    ControlMessage m = links.get(l).poll();
    receive(tables[l % N], m);
    return true;
  }

  private static void receive(PredicateTable t, ControlMessage m) {
    switch (m) {
      case ControlMessage.PredicateAd a -> t.receive(a);
      case ControlMessage.PredicateDelta d -> t.receive(d);
      case ControlMessage.PredicateRequest r -> t.receive(r);
      case ControlMessage.PredicateBatch b -> {
        for (ControlMessage.Advertisement a : b.ads()) {
          switch (a) {
            case ControlMessage.PredicateAd ad -> t.receive(ad);
            case ControlMessage.PredicateDelta d -> t.receive(d);
          }
        }
      }
      default -> throw new AssertionError("unexpected " + m);
    }
  }

  /** Delivers and ticks until nothing is in flight or queued. */
  private void settle() {
    Random order = new Random(0);
    for (int round = 0; round < 10_000; round++) {
      while (deliverOne(order)) {
        // drain
      }
      now += CONFIG.helloIntervalMs();
      for (PredicateTable t : tables) {
        t.tick();
      }
      boolean idle = links.stream().allMatch(ArrayDeque::isEmpty);
      for (PredicateTable t : tables) {
        idle &= t.queued() == 0;
      }
      if (idle) {
        return;
      }
    }
    throw new AssertionError("did not settle");
  }
}
