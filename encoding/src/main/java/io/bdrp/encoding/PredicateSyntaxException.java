package io.bdrp.encoding;

/**
 * A predicate text that does not parse, with the column (1-based, counted in Unicode code points)
 * and the token where the problem is. The message reads {@code column 14: expected a value after
 * '>' but found '&&'}.
 */
public final class PredicateSyntaxException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final int column;
  private final String token;
  private final String problem;

  public PredicateSyntaxException(int column, String token, String problem) {
    super("column " + column + ": " + problem);
    this.column = column;
    this.token = token;
    this.problem = problem;
  }

  /** Column of the offending token, 1-based, in code points. */
  public int column() {
    return column;
  }

  /** The offending token as written, or {@code "end of input"}. */
  public String token() {
    return token;
  }

  /** The message without the column prefix. */
  public String problem() {
    return problem;
  }
}
