package io.bdrp.topologies;

import java.util.Objects;

/**
 * One edge line of a BRITE file: {@code EdgeId from to length delay bandwidth ASfrom ASto type
 * [direction]}.
 *
 * <p>Immutable and safe to share between threads.
 *
 * @param id the edge id as written in the file (non-negative)
 * @param from node id of the source end (for generated edges: the node that joined later)
 * @param to node id of the destination end
 * @param length euclidean length on the plane (BRITE plane units, taken as km)
 * @param delay propagation delay; BRITE writes milliseconds (length / {@link
 *     BriteGenerator#LIGHT_SPEED_KM_PER_MS})
 * @param bandwidth bandwidth; BRITE writes Mbps
 * @param asFrom AS id of the source node, {@code -1} in flat router-level topologies
 * @param asTo AS id of the destination node, {@code -1} in flat router-level topologies
 * @param type edge type, a single token such as {@code E_RT}, {@code E_AS} or {@code E_AS_BORDER}
 * @param direction the optional tenth field ({@code U} or {@code D}), or {@link Direction#ABSENT}
 */
public record Edge(
    int id,
    int from,
    int to,
    double length,
    double delay,
    double bandwidth,
    int asFrom,
    int asTo,
    String type,
    Direction direction) {

  /** Edge type BRITE gives to links between two routers. */
  public static final String ROUTER_LINK = "E_RT";

  /**
   * The direction field some BRITE versions write after the type. bdrp's routing view treats every
   * edge as undirected whatever this says; the field is kept so that files read back unchanged.
   */
  public enum Direction {
    /** {@code U}: the edge is undirected. */
    UNDIRECTED("U"),
    /** {@code D}: the edge is directed from {@code from} to {@code to}. */
    DIRECTED("D"),
    /** The file had no direction field. */
    ABSENT("");

    private final String token;

    Direction(String token) {
      this.token = token;
    }

    /** The token written in the file; empty for {@link #ABSENT}. */
    public String token() {
      return token;
    }

    /**
     * The direction written as {@code token}.
     *
     * @throws IllegalArgumentException if the token is neither {@code U} nor {@code D}
     */
    public static Direction ofToken(String token) {
      return switch (token) {
        case "U" -> UNDIRECTED;
        case "D" -> DIRECTED;
        default ->
            throw new IllegalArgumentException("direction must be U or D, got \"" + token + "\"");
      };
    }
  }

  /**
   * Checks the fields.
   *
   * @throws IllegalArgumentException naming the field if an id is negative, a number is not finite
   *     or is negative, or the type is not a single non-empty token
   */
  public Edge {
    if (id < 0) {
      throw new IllegalArgumentException("edge id must be >= 0, got " + id);
    }
    String owner = "edge " + id;
    if (from < 0 || to < 0) {
      throw new IllegalArgumentException(
          owner + ": node ids must be >= 0, got from=" + from + " to=" + to);
    }
    Fields.requireFiniteNonNegative(owner, "length", length);
    Fields.requireFiniteNonNegative(owner, "delay", delay);
    Fields.requireFiniteNonNegative(owner, "bandwidth", bandwidth);
    Fields.requireToken(owner, "type", type);
    Objects.requireNonNull(direction, "direction");
  }
}
