package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.ControlMessage.SeqnoRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * With a wall clock, a node refuses control messages naming an epoch more than maxEpochAheadMs
 * ahead of it (counted), and takes those within the bound; without one, it takes any epoch.
 */
class EpochCeilingTest {
  private static final BloomParameters PARAMS = new BloomParameters(128, 2);
  private static final RoutingConfig CONFIG =
      RoutingConfig.builder().maxRouters(64).maxEpochAheadMs(60_000).build();
  private static final long WALL = 1_700_000_000_000L;

  private final List<ControlMessage> sent = new ArrayList<>();

  private RoutingNode node(boolean wallClock) {
    RoutingNode n = new RoutingNode(0, WALL, CONFIG, PARAMS, () -> 0);
    n.addLink(
        new Face() {
          @Override
          public int neighbour() {
            return 1;
          }

          @Override
          public void send(ControlMessage m) {
            sent.add(m);
          }
        },
        1);
    if (wallClock) {
      n.useWallClock(() -> WALL);
    }
    sent.clear(); // its first hello
    return n;
  }

  private static PredicateAd ad(int origin, long epoch) {
    EncodedPredicate p = new Encoder(PARAMS).encode(Predicate.parse("x = 1"));
    return new PredicateAd(1, origin, epoch, 1, p);
  }

  @Test
  void messagesFromTooFarAheadAreRefusedAndCounted() {
    RoutingNode n = node(true);
    long far = WALL + 60_001;
    assertFalse(n.receive(ad(5, far)));
    assertFalse(n.receive(ad(0, 1L << 62)), "not even for its own origin");
    assertFalse(n.receive(new Hello(1, far, 0)));
    assertFalse(n.receive(new RouteUpdate(1, List.of(new Route(5, far, 1, 1, false)))));
    assertFalse(n.receive(new SeqnoRequest(1, 0, far, 1, 3)));
    assertEquals(5, n.futureEpochs());
    assertNull(n.predicates().get(5));
    assertTrue(sent.isEmpty(), "nothing answered");
    assertTrue(n.receive(new PredicateRequest(1, 5)), "a request names no epoch");
  }

  @Test
  void epochsWithinTheBoundAreTaken() {
    RoutingNode n = node(true);
    assertTrue(n.receive(ad(5, WALL + 60_000)));
    assertEquals(0, n.futureEpochs());
    assertTrue(n.predicates().get(5) != null);
  }

  @Test
  void withoutAWallClockNoEpochIsRefused() {
    RoutingNode n = node(false);
    assertTrue(n.receive(ad(5, 1L << 62)));
    assertEquals(0, n.futureEpochs());
  }
}
