package io.bdrp.testbed.wan;

import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The built-in scenarios of {@code bdrp testbed run}, after the paper's §5 experiments. */
public final class Scenarios {
  private Scenarios() {}

  private static final long MBYTE_PER_S = 8_000_000L;

  /**
   * The paper's workload with 24 string and 16 integer names: a client's 20-conjunction predicate
   * matches about 5% of messages, the client replication of the paper's comparisons.
   */
  public static final WorkloadSpec FIVE_PERCENT = WorkloadSpec.PAPER.withNames(24, 16);

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
              FIVE_PERCENT,
              1,
              100,
              180,
              10,
              15,
              100,
              45));
    }
    // Figure 7's base run: 42 routers, 420 clients, ~5% replication, ramped until the links
    // saturate. The links are at 125 kB/s rather than the paper's 1 MByte/s and the rates are
    // low so that on a two-core machine, which also runs the 420 clients and the oracle, the
    // links saturate before the CPU does (about 1,300 msg/s into the 42 routers). The settle
    // pause is a minute: every router's advertisement (about 44 kB) must cross every 125 kB/s
    // link, which takes the first 15-20 s after the clients have set their predicates.
    Scenario fig7 =
        new Scenario(
            "fig7-42",
            "routers-42",
            MBYTE_PER_S / 8,
            420,
            FIVE_PERCENT,
            0.1,
            2,
            120,
            60,
            20,
            100,
            7);
    m.put("fig7-42", fig7);
    for (Suite.Group g : fig7Groups(fig7)) {
      for (Suite.Entry e : g.entries()) {
        m.putIfAbsent(e.scenario().name(), e.scenario());
      }
    }
    return m;
  }

  /** The suites, by name: each runs several scenarios and plots them together. */
  public static Map<String, Suite> suites() {
    Map<String, Scenario> all = all();
    Map<String, Suite> m = new LinkedHashMap<>();
    List<Suite.Entry> sizes = new ArrayList<>();
    for (String n : new String[] {"1", "2", "4", "8"}) {
      sizes.add(
          new Suite.Entry(n + (n.equals("1") ? " router" : " routers"), all.get("fig45-" + n)));
    }
    m.put(
        "fig45",
        new Suite(
            "fig45",
            Suite.Layout.GRID,
            List.of(new Suite.Group("80 clients, 1 MByte/s links", List.copyOf(sizes)))));
    m.put("fig7", new Suite("fig7", Suite.Layout.LINES, fig7Groups(all.get("fig7-42"))));
    return m;
  }

  /** Figure 7's four dimensions around its base run. */
  private static List<Suite.Group> fig7Groups(Scenario base) {
    WorkloadSpec w = base.workload();
    return List.of(
        new Suite.Group(
            "clients",
            List.of(
                new Suite.Entry("420 clients", base),
                new Suite.Entry(
                    "630 clients", base.withName("fig7-clients-630").withClients(630)))),
        new Suite.Group(
            "conjunctions (filters) per predicate",
            List.of(
                new Suite.Entry(
                    "10", base.withName("fig7-filters-10").withWorkload(w.withConjunctions(10))),
                new Suite.Entry("20", base),
                new Suite.Entry(
                    "40", base.withName("fig7-filters-40").withWorkload(w.withConjunctions(40))))),
        new Suite.Group(
            "constraints per conjunction",
            List.of(
                new Suite.Entry(
                    "1-3",
                    base.withName("fig7-constraints-1-3").withWorkload(w.withConstraints(1, 3))),
                new Suite.Entry("1-5", base),
                new Suite.Entry(
                    "2-6",
                    base.withName("fig7-constraints-2-6").withWorkload(w.withConstraints(2, 6))))),
        new Suite.Group(
            "link capacity",
            List.of(
                new Suite.Entry(
                    kBytes(base.linkRateBits() / 2),
                    base.withName("fig7-links-half").withLinkRate(base.linkRateBits() / 2)),
                new Suite.Entry(kBytes(base.linkRateBits()), base),
                new Suite.Entry(
                    kBytes(base.linkRateBits() * 2),
                    base.withName("fig7-links-double").withLinkRate(base.linkRateBits() * 2)))));
  }

  private static String kBytes(long bits) {
    return bits / 8000 + " kB/s";
  }
}
