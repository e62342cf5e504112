package io.bdrp.testbed.chaos;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where a campaign's faults strike, chosen from the topology so that each fault tests what it is
 * meant to: a link on a cycle (its loss leaves the network connected, so traffic must be rerouted
 * around it), a router whose loss leaves the others connected, and a cut of links that splits the
 * network in two connected halves. Among the candidates, the one that carries the most shortest
 * paths is chosen, so that the fault meets traffic.
 *
 * @param routers number of routers
 * @param links each link as {lower router, higher router}
 */
public record Targets(int routers, List<int[]> links) {
  /** A link as its two routers, lower first. */
  public record Link(int a, int b) {
    public Link {
      if (a == b) {
        throw new IllegalArgumentException("a link joins two routers, got " + a + "-" + b);
      }
      int lo = Math.min(a, b);
      b = Math.max(a, b);
      a = lo;
    }

    /** Parses {@code A-B}. */
    public static Link parse(String text) {
      String[] w = text.strip().split("-");
      if (w.length != 2) {
        throw new IllegalArgumentException("link '" + text + "': expected A-B, such as 1-3");
      }
      try {
        return new Link(Integer.parseInt(w[0].strip()), Integer.parseInt(w[1].strip()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("link '" + text + "': expected A-B, such as 1-3");
      }
    }

    @Override
    public String toString() {
      return a + "-" + b;
    }
  }

  /** A cut: links whose loss splits the network; {@code side[r]} is true for one half. */
  public record Cut(List<Link> links, boolean[] side) {
    /** The two halves and the links cut between them. */
    public String describe() {
      List<String> x = new ArrayList<>();
      List<String> y = new ArrayList<>();
      for (int r = 0; r < side.length; r++) {
        (side[r] == side[0] ? x : y).add(Integer.toString(r));
      }
      return "{" + String.join(",", x) + "} from {" + String.join(",", y) + "}, cutting " + links;
    }
  }

  private boolean has(Link l) {
    return links.stream().anyMatch(e -> e[0] == l.a() && e[1] == l.b());
  }

  /** Checks that {@code l} is a link of the network. */
  public Link check(Link l) {
    if (!has(l)) {
      throw new IllegalArgumentException("the topology has no link " + l);
    }
    return l;
  }

  private List<List<Integer>> adjacency(List<Link> without, int withoutRouter) {
    List<List<Integer>> adj = new ArrayList<>();
    for (int i = 0; i < routers; i++) {
      adj.add(new ArrayList<>());
    }
    for (int[] e : links) {
      if (e[0] == withoutRouter || e[1] == withoutRouter) {
        continue;
      }
      if (without.stream().anyMatch(l -> l.a() == e[0] && l.b() == e[1])) {
        continue;
      }
      adj.get(e[0]).add(e[1]);
      adj.get(e[1]).add(e[0]);
    }
    return adj;
  }

  /** Component number of every router (-1 for {@code withoutRouter}). */
  int[] components(List<Link> without, int withoutRouter) {
    List<List<Integer>> adj = adjacency(without, withoutRouter);
    int[] comp = new int[routers];
    Arrays.fill(comp, -1);
    int c = 0;
    for (int s = 0; s < routers; s++) {
      if (s == withoutRouter || comp[s] >= 0) {
        continue;
      }
      ArrayDeque<Integer> q = new ArrayDeque<>(List.of(s));
      comp[s] = c;
      while (!q.isEmpty()) {
        for (int v : adj.get(q.poll())) {
          if (comp[v] < 0) {
            comp[v] = c;
            q.add(v);
          }
        }
      }
      c++;
    }
    return comp;
  }

  private boolean connected(List<Link> without, int withoutRouter) {
    for (int c : components(without, withoutRouter)) {
      if (c > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Shortest paths through each link and each router (as transit), over every ordered pair of
   * routers, one path per pair (the lowest-numbered predecessor first): a rough measure of the
   * traffic each carries under uniform load.
   */
  private long[][] load() {
    List<List<Integer>> adj = adjacency(List.of(), -1);
    long[] linkLoad = new long[links.size()];
    long[] transit = new long[routers];
    for (int s = 0; s < routers; s++) {
      int[] parent = new int[routers];
      Arrays.fill(parent, -1);
      parent[s] = s;
      ArrayDeque<Integer> q = new ArrayDeque<>(List.of(s));
      while (!q.isEmpty()) {
        int u = q.poll();
        List<Integer> next = new ArrayList<>(adj.get(u));
        next.sort(null);
        for (int v : next) {
          if (parent[v] < 0) {
            parent[v] = u;
            q.add(v);
          }
        }
      }
      for (int t = 0; t < routers; t++) {
        if (t == s || parent[t] < 0) {
          continue;
        }
        for (int v = t; v != s; v = parent[v]) {
          int u = parent[v];
          linkLoad[indexOf(new Link(u, v))]++;
          if (u != s) {
            transit[u]++;
          }
        }
      }
    }
    return new long[][] {linkLoad, transit};
  }

  private int indexOf(Link l) {
    for (int i = 0; i < links.size(); i++) {
      if (links.get(i)[0] == l.a() && links.get(i)[1] == l.b()) {
        return i;
      }
    }
    throw new IllegalArgumentException("no link " + l);
  }

  /**
   * The link on a cycle (the network stays connected without it) that carries the most shortest
   * paths; fails if every link is a bridge (a tree has no cycle to reroute over).
   */
  public Link linkOnCycle() {
    long[] linkLoad = load()[0];
    Link best = null;
    long bestLoad = -1;
    for (int i = 0; i < links.size(); i++) {
      Link l = new Link(links.get(i)[0], links.get(i)[1]);
      if (connected(List.of(l), -1) && linkLoad[i] > bestLoad) {
        best = l;
        bestLoad = linkLoad[i];
      }
    }
    if (best == null) {
      throw new IllegalArgumentException(
          "the topology has no cycle: every link's loss would split it; use a topology with"
              + " cycles, such as routers-4 or routers-8");
    }
    return best;
  }

  /** Whether the network stays connected without link {@code l}. */
  public boolean onCycle(Link l) {
    return connected(List.of(check(l)), -1);
  }

  /**
   * The router whose loss leaves the others connected that is a transit router on the most shortest
   * paths (ties: the higher degree, then the lower number).
   */
  public int transitRouter() {
    long[] transit = load()[1];
    int best = -1;
    for (int r = 0; r < routers; r++) {
      if (routers > 2 && !connected(List.of(), r)) {
        continue;
      }
      if (best < 0
          || transit[r] > transit[best]
          || transit[r] == transit[best] && degree(r) > degree(best)) {
        best = r;
      }
    }
    if (best < 0) {
      throw new IllegalArgumentException("every router's loss splits the network");
    }
    return best;
  }

  /** Whether the routers other than {@code r} stay connected without it. */
  public boolean othersConnectedWithout(int r) {
    return connected(List.of(), r);
  }

  int degree(int r) {
    int d = 0;
    for (int[] e : links) {
      if (e[0] == r || e[1] == r) {
        d++;
      }
    }
    return d;
  }

  /**
   * A cut into two connected halves as even as possible, with the fewest links among them: every
   * split is tried for up to 20 routers; beyond that, the half grown breadth-first from router 0.
   */
  public Cut partition() {
    if (routers < 2) {
      throw new IllegalArgumentException("a partition needs at least two routers");
    }
    if (!connected(List.of(), -1)) {
      throw new IllegalArgumentException("the topology is not connected");
    }
    boolean[] best = null;
    int bestImbalance = Integer.MAX_VALUE;
    int bestCut = Integer.MAX_VALUE;
    if (routers <= 20) {
      for (int mask = 1; mask < (1 << routers) - 1; mask++) {
        if ((mask & 1) == 0) {
          continue; // router 0's side is the one in the mask: each split once
        }
        boolean[] side = new boolean[routers];
        for (int r = 0; r < routers; r++) {
          side[r] = (mask >> r & 1) != 0;
        }
        int imbalance = Math.abs(routers - 2 * Integer.bitCount(mask));
        int cut = cutLinks(side).size();
        if ((imbalance < bestImbalance || imbalance == bestImbalance && cut < bestCut)
            && halvesConnected(side)) {
          best = side;
          bestImbalance = imbalance;
          bestCut = cut;
        }
      }
    } else {
      best = new boolean[routers];
      List<List<Integer>> adj = adjacency(List.of(), -1);
      ArrayDeque<Integer> q = new ArrayDeque<>(List.of(0));
      best[0] = true;
      int n = 1;
      while (!q.isEmpty() && n < routers / 2) {
        for (int v : adj.get(q.poll())) {
          if (!best[v] && n < routers / 2) {
            best[v] = true;
            n++;
            q.add(v);
          }
        }
      }
    }
    return new Cut(cutLinks(best), best);
  }

  /** The cut made by removing {@code cut}; fails if it leaves the network connected. */
  public Cut partition(List<Link> cut) {
    cut.forEach(this::check);
    int[] comp = components(cut, -1);
    boolean[] side = new boolean[routers];
    boolean split = false;
    for (int r = 0; r < routers; r++) {
      side[r] = comp[r] == comp[0];
      split |= !side[r];
    }
    if (!split) {
      throw new IllegalArgumentException("cutting " + cut + " leaves the network connected");
    }
    return new Cut(List.copyOf(cut), side);
  }

  private List<Link> cutLinks(boolean[] side) {
    List<Link> out = new ArrayList<>();
    for (int[] e : links) {
      if (side[e[0]] != side[e[1]]) {
        out.add(new Link(e[0], e[1]));
      }
    }
    return out;
  }

  private boolean halvesConnected(boolean[] side) {
    int[] comp = components(cutLinks(side), -1);
    int a = -1;
    int b = -1;
    for (int r = 0; r < routers; r++) {
      if (side[r]) {
        if (a >= 0 && comp[r] != a) {
          return false;
        }
        a = comp[r];
      } else {
        if (b >= 0 && comp[r] != b) {
          return false;
        }
        b = comp[r];
      }
    }
    return true;
  }
}
