package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RoutingConfigTest {
  /** Found by fuzzing the router's YAML loader: {@code 2 * helloIntervalMs} overflowed. */
  @Test
  void aHugeHelloIntervalDoesNotWrapTheDeadIntervalCheck() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RoutingConfig.builder().helloIntervalMs(1L << 62).deadIntervalMs(10).build());
    assertTrue(e.getMessage().startsWith("deadIntervalMs (10) must exceed"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> RoutingConfig.builder().helloIntervalMs(Long.MAX_VALUE).build());
  }

  @Test
  void aHugeUpdateIntervalDoesNotWrapTheRouteExpiryCheck() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RoutingConfig.builder().updateIntervalMs(1L << 62).routeExpiryMs(10).build());
    assertTrue(e.getMessage().startsWith("routeExpiryMs (10) must exceed"), e.getMessage());
  }

  @Test
  void theBoundsAreStillExclusive() {
    RoutingConfig c =
        RoutingConfig.builder()
            .helloIntervalMs(Long.MAX_VALUE / 4)
            .deadIntervalMs(Long.MAX_VALUE / 2 + 1)
            .build();
    assertEquals(Long.MAX_VALUE / 2 + 1, c.deadIntervalMs());
    assertThrows(
        IllegalArgumentException.class,
        () -> RoutingConfig.builder().helloIntervalMs(1000).deadIntervalMs(2000).build());
    assertThrows(
        IllegalArgumentException.class,
        () -> RoutingConfig.builder().helloIntervalMs(1000).deadIntervalMs(-5000).build());
  }
}
