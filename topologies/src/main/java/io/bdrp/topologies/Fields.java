package io.bdrp.topologies;

/** Field checks shared by {@link Node}, {@link Edge} and {@link Topology}. Stateless. */
final class Fields {
  private Fields() {}

  static void requireFinite(String owner, String field, double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException(owner + ": " + field + " must be finite, got " + value);
    }
  }

  static void requireFiniteNonNegative(String owner, String field, double value) {
    requireFinite(owner, field, value);
    if (value < 0) {
      throw new IllegalArgumentException(owner + ": " + field + " must be >= 0, got " + value);
    }
  }

  /** A token is what a BRITE line can hold in one field: non-empty, no whitespace, no NUL. */
  static void requireToken(String owner, String field, String value) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(owner + ": " + field + " must not be empty");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isWhitespace(c) || c == '\0' || Character.isISOControl(c)) {
        throw new IllegalArgumentException(
            owner
                + ": "
                + field
                + " must be a single token without spaces or control characters, got \""
                + value
                + "\"");
      }
    }
  }
}
