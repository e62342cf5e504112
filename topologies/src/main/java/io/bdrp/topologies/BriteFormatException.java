package io.bdrp.topologies;

/**
 * A BRITE file that cannot be read: a non-numeric field, a missing field, an edge to an unknown
 * node, a missing section. The message names the source, the line number and what is wrong, e.g.
 * {@code topo.brite:12: edge line: field 'from' is not an integer: "x"}.
 */
public final class BriteFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String source;
  private final int lineNumber;
  private final String problem;

  /**
   * A format error.
   *
   * @param source the name of what was read (a file name), used in the message
   * @param lineNumber the 1-based line number of the offending line
   * @param problem what is wrong, without the source and line number
   */
  public BriteFormatException(String source, int lineNumber, String problem) {
    super(source + ":" + lineNumber + ": " + problem);
    this.source = source;
    this.lineNumber = lineNumber;
    this.problem = problem;
  }

  /** The name of what was read. */
  public String source() {
    return source;
  }

  /** The 1-based number of the offending line. */
  public int lineNumber() {
    return lineNumber;
  }

  /** What is wrong, without the source and line number. */
  public String problem() {
    return problem;
  }
}
