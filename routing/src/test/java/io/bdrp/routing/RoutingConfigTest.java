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

  /** The bounds on PREDICATES: documented defaults, and each bad value named by its knob. */
  @Test
  void predicateBoundsHaveTheirDefaultsAndAreValidated() {
    RoutingConfig d = RoutingConfig.DEFAULT;
    assertEquals(1 << 20, d.maxControlFrameBytes(), "the router's default frame limit");
    assertEquals(65_535, d.maxOriginFilters());
    assertEquals(8L << 20, d.maxOriginFilterBytes());
    assertEquals(256L << 20, d.maxPredicateFilterBytes());
    assertTrue(d.acceptMatchAll());
    assertEquals(d, d.toBuilder().build());
    for (var bad :
        java.util.List.<java.util.Map.Entry<String, Runnable>>of(
            java.util.Map.entry(
                "maxControlFrameBytes",
                () -> RoutingConfig.builder().maxControlFrameBytes(1023).build()),
            java.util.Map.entry(
                "maxOriginFilters", () -> RoutingConfig.builder().maxOriginFilters(65_536).build()),
            java.util.Map.entry(
                "maxOriginFilters", () -> RoutingConfig.builder().maxOriginFilters(0).build()),
            java.util.Map.entry(
                "maxOriginFilterBytes",
                () -> RoutingConfig.builder().maxOriginFilterBytes(0).build()),
            java.util.Map.entry(
                "maxPredicateFilterBytes",
                () ->
                    RoutingConfig.builder()
                        .maxOriginFilterBytes(100)
                        .maxPredicateFilterBytes(99)
                        .build()))) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, bad.getValue()::run);
      assertTrue(e.getMessage().startsWith(bad.getKey()), e.getMessage());
    }
  }
}
