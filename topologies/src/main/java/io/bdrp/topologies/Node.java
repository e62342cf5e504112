package io.bdrp.topologies;

/**
 * One node line of a BRITE file: {@code NodeId xpos ypos indegree outdegree ASid type}.
 *
 * <p>Immutable and safe to share between threads.
 *
 * @param id the node id as written in the file (non-negative; ids need not start at 0 nor be
 *     contiguous)
 * @param x x coordinate on the plane (BRITE plane units; BRITE treats one unit as one km)
 * @param y y coordinate on the plane
 * @param inDegree in-degree as written in the file (BRITE writes the undirected degree twice)
 * @param outDegree out-degree as written in the file
 * @param asId id of the autonomous system the node belongs to, {@code -1} in flat router-level
 *     topologies
 * @param type node type, a single token such as {@code RT_NODE} or {@code AS_NODE}
 */
public record Node(int id, double x, double y, int inDegree, int outDegree, int asId, String type) {

  /** Node type BRITE gives to routers. */
  public static final String ROUTER = "RT_NODE";

  /** AS id of nodes that belong to no AS (flat router-level topologies). */
  public static final int NO_AS = -1;

  /**
   * Checks the fields.
   *
   * @throws IllegalArgumentException naming the field if the id or a degree is negative, a
   *     coordinate is not finite, or the type is not a single non-empty token
   */
  public Node {
    if (id < 0) {
      throw new IllegalArgumentException("node id must be >= 0, got " + id);
    }
    Fields.requireFinite("node " + id, "x", x);
    Fields.requireFinite("node " + id, "y", y);
    if (inDegree < 0 || outDegree < 0) {
      throw new IllegalArgumentException(
          "node " + id + ": degrees must be >= 0, got " + inDegree + " and " + outDegree);
    }
    Fields.requireToken("node " + id, "type", type);
  }
}
