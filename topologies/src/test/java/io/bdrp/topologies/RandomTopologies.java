package io.bdrp.topologies;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Seeded generator of arbitrary valid topologies for writer/reader property tests: sparse ids with
 * gaps, doubles from a pool of awkward values (tiny, huge, negative zero, long fractions), any AS
 * ids, several node and edge types, all three direction states and zero to two model lines.
 */
final class RandomTopologies {
  private static final double[] DOUBLES = {
    0.0,
    -0.0,
    1.0,
    0.1,
    1e-300,
    4.9e-324,
    1.7976931348623157e308,
    123456.789,
    1e21,
    1e-7,
    299.792458,
    0.30000000000000004,
    672.402409275874,
    2.242893012591644
  };
  private static final String[] NODE_TYPES = {"RT_NODE", "AS_NODE", "X"};
  private static final String[] EDGE_TYPES = {"E_RT", "E_AS", "E_AS_BORDER", "E_RT_STUB"};
  private static final String[] MODELS = {
    "Model (1 - RTWaxman):  5 5 5 1  2  0.15000000596046448 0.20000000298023224 1 1 10.0 1024.0",
    "Model ( 2 ): 20 1000 100 2 2 3 10 1e+06",
    "Model\t(6 - BottomUp):\t12 2",
    "Model (0 - Manual): caf\u00e9 network"
  };

  private RandomTopologies() {}

  static Topology random(long seed) {
    Random r = new Random(seed);
    int n = 1 + r.nextInt(r.nextBoolean() ? 5 : 40);
    Set<Integer> ids = new HashSet<>();
    List<Node> nodes = new ArrayList<>();
    int start = r.nextBoolean() ? 0 : r.nextInt(1000);
    while (nodes.size() < n) {
      int id = r.nextBoolean() ? start + nodes.size() : r.nextInt(Integer.MAX_VALUE);
      if (ids.add(id)) {
        nodes.add(
            new Node(
                id,
                signed(r, number(r)),
                signed(r, number(r)),
                r.nextInt(100),
                r.nextInt(100),
                r.nextInt(300) - 1,
                NODE_TYPES[r.nextInt(NODE_TYPES.length)]));
      }
    }
    List<Edge> edges = new ArrayList<>();
    Set<Long> pairs = new HashSet<>();
    Set<Integer> edgeIds = new HashSet<>();
    int attempts = r.nextInt(3 * n + 1);
    Edge.Direction[] directions = Edge.Direction.values();
    for (int k = 0; k < attempts; k++) {
      int a = r.nextInt(n);
      int b = r.nextInt(n);
      int id = r.nextInt(10 * n + 10);
      if (a == b || !pairs.add(Topology.pairKey(a, b)) || !edgeIds.add(id)) {
        continue;
      }
      edges.add(
          new Edge(
              id,
              nodes.get(a).id(),
              nodes.get(b).id(),
              number(r),
              number(r),
              number(r),
              r.nextInt(300) - 1,
              r.nextInt(300) - 1,
              EDGE_TYPES[r.nextInt(EDGE_TYPES.length)],
              directions[r.nextInt(directions.length)]));
    }
    List<String> models = new ArrayList<>();
    int modelCount = r.nextInt(3);
    for (int k = 0; k < modelCount; k++) {
      models.add(MODELS[r.nextInt(MODELS.length)]);
    }
    return Topology.of(models, nodes, edges);
  }

  /** A non-negative double: from the pool, or a random one of any magnitude. */
  private static double number(Random r) {
    if (r.nextBoolean()) {
      return DOUBLES[r.nextInt(DOUBLES.length)];
    }
    return r.nextDouble() * Math.pow(10, r.nextInt(40) - 20);
  }

  private static double signed(Random r, double x) {
    return r.nextBoolean() ? -x : x;
  }
}
