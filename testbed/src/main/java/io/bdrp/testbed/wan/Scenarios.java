package io.bdrp.testbed.wan;

import io.bdrp.workload.WorkloadSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/** The built-in scenarios of {@code bdrp testbed run}, after the paper's §5 experiments. */
public final class Scenarios {
  private Scenarios() {}

  private static final long MBYTE_PER_S = 8_000_000L;

  /** By name, in the order they are listed. */
  public static Map<String, Scenario> all() {
    Map<String, Scenario> m = new LinkedHashMap<>();
    // A minute for both systems: the accounting check CI runs.
    m.put(
        "ci-4",
        new Scenario(
            "ci-4", "routers-4", MBYTE_PER_S, 20, WorkloadSpec.PAPER, 5, 5, 20, 8, 5, 100, 1));
    // Figure 3: one router, 50 clients, high replication (few attribute names, so a message
    // satisfies many predicates).
    m.put(
        "fig3",
        new Scenario(
            "fig3",
            "routers-1",
            MBYTE_PER_S,
            50,
            WorkloadSpec.PAPER.withNames(6, 4),
            1,
            100,
            120,
            5,
            10,
            100,
            3));
    // Figures 4-5: 80 clients over 1, 2, 4, 8 routers, 1 MByte/s links, ramp 1 -> 100 msg/s per
    // client, ~5% client replication.
    for (String n : new String[] {"1", "2", "4", "8"}) {
      m.put(
          "fig45-" + n,
          new Scenario(
              "fig45-" + n,
              "routers-" + n,
              MBYTE_PER_S,
              80,
              WorkloadSpec.PAPER,
              1,
              100,
              180,
              10,
              15,
              100,
              45));
    }
    // Figure 7: 42 routers, 420 clients, ramp to link saturation.
    m.put(
        "fig7-42",
        new Scenario(
            "fig7-42",
            "routers-42",
            MBYTE_PER_S,
            420,
            WorkloadSpec.PAPER,
            0.2,
            20,
            180,
            20,
            20,
            100,
            7));
    return m;
  }
}
