package io.bdrp.topologies;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Seeded generator of flat router-level topologies after BRITE's two router models, written from
 * the models' published definitions.
 *
 * <h2>Placement</h2>
 *
 * Nodes are placed uniformly at random on the integer points of an {@code HS × HS} plane ({@code 0
 * <= x, y < HS}), at most one node per point, as BRITE's random placement (NP = 1) does. {@code LS}
 * only matters for BRITE's heavy-tailed placement, which this generator does not offer; it is
 * checked and recorded so that parameters read like BRITE's.
 *
 * <h2>Incremental growth</h2>
 *
 * Nodes join in id order. The first {@code min(N, m)} nodes form a path (node {@code i} links to
 * node {@code i-1}); every later node links to {@code m} distinct earlier nodes. So the topology is
 * connected, and it has {@code min(N, m) - 1 + m · max(0, N - m)} edges. Each edge goes {@code
 * from} the node that joined {@code to} the earlier one. (Waxman files written by BRITE itself have
 * {@code m · N} edges, e.g. 40 for 20 nodes and {@code m = 2}, so BRITE starts its growth
 * differently; the count above follows from the model's definition.)
 *
 * <ul>
 *   <li><b>Waxman</b> (model 1, RTWaxman): a joining node {@code u} picks each link among the
 *       earlier nodes not yet picked with probability proportional to {@code P(u,v) = α ·
 *       exp(-d(u,v) / (β · L))}, where {@code d} is the euclidean distance and {@code L = HS·√2}
 *       the largest distance on the plane. This is the distribution of "draw a candidate uniformly
 *       and keep it with probability {@code P(u,v)}, until {@code m} are kept" without its
 *       unbounded retries; {@code α} scales every {@code P(u,v)} alike and therefore cancels: it is
 *       checked and recorded, but does not change the graph. Small {@code β} favours short links.
 *   <li><b>Barabási–Albert</b> (model 2, RTBarabasi): a joining node picks each link among the
 *       earlier nodes not yet picked with probability {@code P(i) = d_i / Σ d_j}, the degrees
 *       counted before the joining node's own links (uniformly if every degree is 0, which happens
 *       only for the second node when {@code m = 1}).
 * </ul>
 *
 * <h2>Edge attributes</h2>
 *
 * Length is the euclidean distance; delay (ms) is {@code length / }{@link #LIGHT_SPEED_KM_PER_MS},
 * the constant the Java BRITE uses (its files have {@code length / delay = 299.792458}: plane units
 * are km, delay is ms). Bandwidth (Mbps, as in BRITE) is {@code BWmin} for constant bandwidth or
 * uniform in {@code [BWmin, BWmax]}. Nodes get type {@code RT_NODE}, AS id {@code -1} and their
 * degree as in- and out-degree; edges get type {@code E_RT}, AS ids {@code -1} and direction {@code
 * U}.
 *
 * <h2>Reproducibility</h2>
 *
 * All randomness comes from one {@link java.util.Random} seeded with {@link Params#seed()}, whose
 * algorithm the JDK specifies, used in a fixed order (placement, then links, then bandwidths), and
 * all floating point goes through {@link StrictMath}; so a given {@link Params} gives the same
 * topology on every JVM. The single model line of a generated topology is {@link
 * Params#modelLine()}, which records every parameter and the seed; {@link
 * Params#fromModelLine(String)} reads it back.
 *
 * <p>Stateless: {@link #generate(Params)} may be called from any thread.
 */
public final class BriteGenerator {
  /**
   * Speed of light in km per ms: delay (ms) = length (plane units, taken as km) / this. The value
   * the Java BRITE divides by.
   */
  public static final double LIGHT_SPEED_KM_PER_MS = 299.792458;

  /** Marks model lines written by this generator ({@code generator=bdrp}). */
  public static final String GENERATOR_TAG = "bdrp";

  private BriteGenerator() {}

  /** The two router-level models, with BRITE's model numbers and names. */
  public enum Model {
    /** Waxman: links favour nearby nodes. */
    WAXMAN(1, "RTWaxman"),
    /** Barabási–Albert: links favour nodes of high degree. */
    BARABASI_ALBERT(2, "RTBarabasi");

    private final int briteNumber;
    private final String briteName;

    Model(int briteNumber, String briteName) {
      this.briteNumber = briteNumber;
      this.briteName = briteName;
    }

    /** BRITE's model number (1 or 2). */
    public int briteNumber() {
      return briteNumber;
    }

    /** BRITE's model name ({@code RTWaxman} or {@code RTBarabasi}). */
    public String briteName() {
      return briteName;
    }
  }

  /** How edges get their bandwidth, with BRITE's {@code BWdist} numbers. */
  public enum Bandwidth {
    /** Every edge gets {@code BWmin}. */
    CONSTANT(1),
    /** Each edge gets a value drawn uniformly from {@code [BWmin, BWmax]}. */
    UNIFORM(2);

    private final int briteNumber;

    Bandwidth(int briteNumber) {
      this.briteNumber = briteNumber;
    }

    /** BRITE's {@code BWdist} number. */
    public int briteNumber() {
      return briteNumber;
    }
  }

  /**
   * All inputs of one generation; immutable. Build one with {@link #waxman(int, int, long)} or
   * {@link #barabasiAlbert(int, int, long)} and adjust it with the {@code with...} methods.
   *
   * @param model the model
   * @param n {@code N}: number of nodes, {@code 1 <= N <= HS·HS}
   * @param hs {@code HS}: side of the plane, in plane units (km); default 1000
   * @param ls {@code LS}: side of a high-level square, {@code 1 <= LS <= HS}; default 100
   * @param m {@code m}: links per joining node, {@code >= 1}; default 2
   * @param alpha Waxman {@code α}, {@code 0 < α <= 1}, default 0.15; 0 for Barabási–Albert
   * @param beta Waxman {@code β}, finite and {@code > 0}, default 0.2; 0 for Barabási–Albert
   * @param bandwidth {@code BWdist}; default constant
   * @param bwMinMbps {@code BWmin} in Mbps, {@code > 0}; default 10
   * @param bwMaxMbps {@code BWmax} in Mbps, {@code >= BWmin}; default 10
   * @param seed seed of the random number generator
   */
  public record Params(
      Model model,
      int n,
      int hs,
      int ls,
      int m,
      double alpha,
      double beta,
      Bandwidth bandwidth,
      double bwMinMbps,
      double bwMaxMbps,
      long seed) {

    private static final Pattern LINE = Pattern.compile("Model \\((\\d+) - (\\w+)\\):(.*)");

    /**
     * Checks every knob.
     *
     * @throws IllegalArgumentException naming the knob that is out of range
     */
    public Params {
      if (model == null) {
        throw new IllegalArgumentException("model must not be null");
      }
      if (bandwidth == null) {
        throw new IllegalArgumentException("bandwidth (BWdist) must not be null");
      }
      if (n < 1) {
        throw new IllegalArgumentException("N must be >= 1, got " + n);
      }
      if (hs < 1) {
        throw new IllegalArgumentException("HS must be >= 1, got " + hs);
      }
      if (ls < 1 || ls > hs) {
        throw new IllegalArgumentException("LS must be in 1..HS=" + hs + ", got " + ls);
      }
      if ((long) hs * hs < n) {
        throw new IllegalArgumentException(
            "N=" + n + " nodes do not fit on the " + hs + "x" + hs + " plane (N <= HS*HS)");
      }
      if (m < 1) {
        throw new IllegalArgumentException("m must be >= 1, got " + m);
      }
      if (model == Model.WAXMAN) {
        if (!(alpha > 0 && alpha <= 1)) {
          throw new IllegalArgumentException("alpha must be in (0, 1], got " + alpha);
        }
        if (!(beta > 0 && Double.isFinite(beta))) {
          throw new IllegalArgumentException("beta must be finite and > 0, got " + beta);
        }
      } else if (alpha != 0 || beta != 0) {
        throw new IllegalArgumentException(
            "alpha and beta are Waxman parameters; Barabasi-Albert needs 0 for both, got "
                + alpha
                + " and "
                + beta);
      }
      if (!(bwMinMbps > 0 && Double.isFinite(bwMinMbps))) {
        throw new IllegalArgumentException("BWmin must be finite and > 0, got " + bwMinMbps);
      }
      if (!(bwMaxMbps >= bwMinMbps && Double.isFinite(bwMaxMbps))) {
        throw new IllegalArgumentException(
            "BWmax must be finite and >= BWmin=" + bwMinMbps + ", got " + bwMaxMbps);
      }
    }

    /** Waxman with {@code N = n}, {@code m}, the seed, and the defaults for everything else. */
    public static Params waxman(int n, int m, long seed) {
      return new Params(Model.WAXMAN, n, 1000, 100, m, 0.15, 0.2, Bandwidth.CONSTANT, 10, 10, seed);
    }

    /** Barabási–Albert with {@code N = n}, {@code m}, the seed, and the defaults. */
    public static Params barabasiAlbert(int n, int m, long seed) {
      return new Params(
          Model.BARABASI_ALBERT, n, 1000, 100, m, 0, 0, Bandwidth.CONSTANT, 10, 10, seed);
    }

    /** A copy with plane side {@code hs} and high-level square side {@code ls}. */
    public Params withPlane(int hs, int ls) {
      return new Params(model, n, hs, ls, m, alpha, beta, bandwidth, bwMinMbps, bwMaxMbps, seed);
    }

    /** A copy with Waxman parameters {@code alpha} and {@code beta}. */
    public Params withWaxman(double alpha, double beta) {
      return new Params(model, n, hs, ls, m, alpha, beta, bandwidth, bwMinMbps, bwMaxMbps, seed);
    }

    /** A copy with the given bandwidth distribution and bounds (Mbps). */
    public Params withBandwidth(Bandwidth bandwidth, double bwMinMbps, double bwMaxMbps) {
      return new Params(model, n, hs, ls, m, alpha, beta, bandwidth, bwMinMbps, bwMaxMbps, seed);
    }

    /** A copy with another seed. */
    public Params withSeed(long seed) {
      return new Params(model, n, hs, ls, m, alpha, beta, bandwidth, bwMinMbps, bwMaxMbps, seed);
    }

    /**
     * The model line that records these parameters, with BRITE's names, e.g. {@code Model (1 -
     * RTWaxman): N=42 HS=1000 LS=100 NP=1 IG=1 m=1 alpha=0.15 beta=0.2 BWdist=1 BWmin=8.0 BWmax=8.0
     * seed=7 generator=bdrp}. {@code NP=1} (random placement) and {@code IG=1} (incremental growth)
     * are the only values this generator has; {@code alpha} and {@code beta} appear for Waxman
     * only.
     */
    public String modelLine() {
      StringBuilder s = new StringBuilder();
      s.append("Model (")
          .append(model.briteNumber())
          .append(" - ")
          .append(model.briteName())
          .append("):");
      s.append(" N=").append(n).append(" HS=").append(hs).append(" LS=").append(ls);
      s.append(" NP=1 IG=1 m=").append(m);
      if (model == Model.WAXMAN) {
        s.append(" alpha=").append(alpha).append(" beta=").append(beta);
      }
      s.append(" BWdist=").append(bandwidth.briteNumber());
      s.append(" BWmin=").append(bwMinMbps).append(" BWmax=").append(bwMaxMbps);
      s.append(" seed=").append(seed).append(" generator=").append(GENERATOR_TAG);
      return s.toString();
    }

    /**
     * The parameters recorded in a model line written by {@link #modelLine()}.
     *
     * @throws IllegalArgumentException if the line was not written by this generator, or a key is
     *     missing, unknown, repeated or has a bad value (the message names it)
     */
    public static Params fromModelLine(String line) {
      Matcher head = LINE.matcher(line.strip());
      if (!head.matches()) {
        throw new IllegalArgumentException(
            "not a generator model line (expected \"Model (k - Name): key=value ...\"): " + line);
      }
      Model model = null;
      for (Model candidate : Model.values()) {
        if (Integer.toString(candidate.briteNumber()).equals(head.group(1))
            && candidate.briteName().equals(head.group(2))) {
          model = candidate;
        }
      }
      if (model == null) {
        throw new IllegalArgumentException(
            "unknown model \"" + head.group(1) + " - " + head.group(2) + "\" in: " + line);
      }
      Map<String, String> kv = new LinkedHashMap<>();
      for (String token : head.group(3).strip().split("\\s+")) {
        int eq = token.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(
              "expected key=value, got \"" + token + "\" in: " + line);
        }
        if (kv.put(token.substring(0, eq), token.substring(eq + 1)) != null) {
          throw new IllegalArgumentException(
              "key " + token.substring(0, eq) + " appears twice in: " + line);
        }
      }
      List<String> keys =
          new ArrayList<>(List.of("N", "HS", "LS", "NP", "IG", "m", "BWdist", "BWmin", "BWmax"));
      keys.addAll(List.of("seed", "generator"));
      if (model == Model.WAXMAN) {
        keys.addAll(List.of("alpha", "beta"));
      }
      for (String key : kv.keySet()) {
        if (!keys.contains(key)) {
          throw new IllegalArgumentException("unknown key " + key + " in: " + line);
        }
      }
      for (String key : keys) {
        if (!kv.containsKey(key)) {
          throw new IllegalArgumentException("missing key " + key + " in: " + line);
        }
      }
      if (!GENERATOR_TAG.equals(kv.get("generator"))) {
        throw new IllegalArgumentException(
            "generator=" + kv.get("generator") + " is not " + GENERATOR_TAG + " in: " + line);
      }
      if (!"1".equals(kv.get("NP")) || !"1".equals(kv.get("IG"))) {
        throw new IllegalArgumentException(
            "only NP=1 (random placement) and IG=1 (incremental growth) are known, in: " + line);
      }
      Bandwidth bandwidth = null;
      for (Bandwidth candidate : Bandwidth.values()) {
        if (Integer.toString(candidate.briteNumber()).equals(kv.get("BWdist"))) {
          bandwidth = candidate;
        }
      }
      if (bandwidth == null) {
        throw new IllegalArgumentException(
            "BWdist=" + kv.get("BWdist") + " is neither 1 (constant) nor 2 (uniform) in: " + line);
      }
      boolean waxman = model == Model.WAXMAN;
      return new Params(
          model,
          intValue(kv, "N"),
          intValue(kv, "HS"),
          intValue(kv, "LS"),
          intValue(kv, "m"),
          waxman ? doubleValue(kv, "alpha") : 0,
          waxman ? doubleValue(kv, "beta") : 0,
          bandwidth,
          doubleValue(kv, "BWmin"),
          doubleValue(kv, "BWmax"),
          longValue(kv, "seed"));
    }

    private static int intValue(Map<String, String> kv, String key) {
      try {
        return Integer.parseInt(kv.get(key));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + "=" + kv.get(key) + " is not an integer", e);
      }
    }

    private static long longValue(Map<String, String> kv, String key) {
      try {
        return Long.parseLong(kv.get(key));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + "=" + kv.get(key) + " is not an integer", e);
      }
    }

    private static double doubleValue(Map<String, String> kv, String key) {
      try {
        return Double.parseDouble(kv.get(key));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + "=" + kv.get(key) + " is not a number", e);
      }
    }
  }

  /** Generates the topology that {@code params} describe. */
  public static Topology generate(Params params) {
    Random random = new Random(params.seed());
    int n = params.n();
    int[] xs = new int[n];
    int[] ys = new int[n];
    place(params.hs(), random, xs, ys);

    int[] degree = new int[n];
    List<int[]> links = new ArrayList<>();
    double[] weight = new double[n];
    boolean[] picked = new boolean[n];
    int m = params.m();
    double betaL = params.beta() * params.hs() * StrictMath.sqrt(2);
    for (int u = 1; u < n; u++) {
      if (u < m) {
        links.add(new int[] {u, u - 1});
        degree[u]++;
        degree[u - 1]++;
        continue;
      }
      int[] targets = new int[m];
      for (int k = 0; k < m; k++) {
        if (params.model() == Model.WAXMAN) {
          waxmanWeights(u, xs, ys, betaL, picked, weight);
        } else {
          for (int v = 0; v < u; v++) {
            weight[v] = picked[v] ? 0 : degree[v];
          }
        }
        targets[k] = pick(u, weight, picked, random);
        picked[targets[k]] = true;
      }
      for (int t : targets) {
        links.add(new int[] {u, t});
        picked[t] = false;
      }
      for (int t : targets) {
        degree[t]++;
      }
      degree[u] += m;
    }

    List<Node> nodes = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      nodes.add(new Node(i, xs[i], ys[i], degree[i], degree[i], Node.NO_AS, Node.ROUTER));
    }
    List<Edge> edges = new ArrayList<>(links.size());
    for (int id = 0; id < links.size(); id++) {
      int from = links.get(id)[0];
      int to = links.get(id)[1];
      double length = StrictMath.hypot(xs[from] - xs[to], ys[from] - ys[to]);
      double bandwidth =
          params.bandwidth() == Bandwidth.CONSTANT
              ? params.bwMinMbps()
              : params.bwMinMbps()
                  + (params.bwMaxMbps() - params.bwMinMbps()) * random.nextDouble();
      edges.add(
          new Edge(
              id,
              from,
              to,
              length,
              length / LIGHT_SPEED_KM_PER_MS,
              bandwidth,
              Node.NO_AS,
              Node.NO_AS,
              Edge.ROUTER_LINK,
              Edge.Direction.UNDIRECTED));
    }
    return Topology.of(List.of(params.modelLine()), nodes, edges);
  }

  /** Distinct uniform integer points of the {@code hs × hs} plane, in node order. */
  private static void place(int hs, Random random, int[] xs, int[] ys) {
    Set<Long> used = new HashSet<>();
    for (int i = 0; i < xs.length; i++) {
      int x;
      int y;
      do {
        x = random.nextInt(hs);
        y = random.nextInt(hs);
      } while (!used.add(((long) x << 32) | y));
      xs[i] = x;
      ys[i] = y;
    }
  }

  /**
   * Fills {@code weight[0..u-1]} with {@code P(u,v)} up to a common factor: 0 for picked nodes,
   * {@code exp(-(d(u,v) - dmin) / (β·L))} for the others, where {@code dmin} is the distance to the
   * nearest unpicked node. Dividing by {@code α · exp(-dmin / (β·L))} leaves the proportions alone
   * and keeps the nearest node at weight 1, so the weights never all underflow to 0.
   */
  private static void waxmanWeights(
      int u, int[] xs, int[] ys, double betaL, boolean[] picked, double[] weight) {
    double dmin = Double.POSITIVE_INFINITY;
    for (int v = 0; v < u; v++) {
      if (!picked[v]) {
        dmin = Math.min(dmin, StrictMath.hypot(xs[u] - xs[v], ys[u] - ys[v]));
      }
    }
    for (int v = 0; v < u; v++) {
      weight[v] =
          picked[v]
              ? 0
              : StrictMath.exp(-(StrictMath.hypot(xs[u] - xs[v], ys[u] - ys[v]) - dmin) / betaL);
    }
  }

  /**
   * One node among {@code 0..u-1} that is not picked, with probability proportional to its weight,
   * or uniformly if all weights are 0.
   */
  private static int pick(int u, double[] weight, boolean[] picked, Random random) {
    double total = 0;
    for (int v = 0; v < u; v++) {
      total += weight[v];
    }
    if (total > 0) {
      double r = random.nextDouble() * total;
      int last = -1;
      for (int v = 0; v < u; v++) {
        if (weight[v] > 0) {
          last = v;
          r -= weight[v];
          if (r < 0) {
            return v;
          }
        }
      }
      return last; // r stayed >= 0 only through rounding: the last candidate owns that sliver
    }
    int free = 0;
    for (int v = 0; v < u; v++) {
      if (!picked[v]) {
        free++;
      }
    }
    int r = random.nextInt(free);
    for (int v = 0; v < u; v++) {
      if (!picked[v] && r-- == 0) {
        return v;
      }
    }
    throw new IllegalStateException("no unpicked node among " + u);
  }
}
