package io.bdrp.workload;

/**
 * Parameters of the paper's workload model (§5.1.4). {@link #PAPER} holds the published values; the
 * paper does not say how many attribute names there are, so {@code stringNames} and {@code
 * integerNames} are this project's choice (they set how often two messages share an attribute, and
 * so the replication factor).
 *
 * @param attributesPerMessage attributes in a message (paper: 10)
 * @param stringFraction fraction of a message's attributes that are strings (paper: 0.6)
 * @param integerMax integers are uniform in [0, integerMax] (paper: 100)
 * @param stringNames number of distinct string attribute names (s0, s1, ...)
 * @param integerNames number of distinct integer attribute names (i0, i1, ...)
 * @param conjunctionsPerPredicate conjunctions in a predicate (paper: 20)
 * @param minConstraints fewest constraints in a conjunction (paper: 1)
 * @param maxConstraints most constraints in a conjunction (paper: 5; 1 in the comparisons)
 * @param stringConstraintFraction fraction of constraints on strings (paper: as messages, 0.6)
 * @param stringEqualityFraction string constraints that are {@code =} (paper: 0.7; the rest split
 *     equally among prefix, suffix and contains)
 * @param integerEqualityFraction integer constraints that are {@code =} (paper: 0.8; the rest split
 *     equally among {@code <} and {@code >})
 */
public record WorkloadSpec(
    int attributesPerMessage,
    double stringFraction,
    int integerMax,
    int stringNames,
    int integerNames,
    int conjunctionsPerPredicate,
    int minConstraints,
    int maxConstraints,
    double stringConstraintFraction,
    double stringEqualityFraction,
    double integerEqualityFraction) {

  /**
   * The paper's workload, with 12 string and 8 integer attribute names: a predicate of 20
   * conjunctions of 1 to 5 constraints matches about 10% of messages (24 and 16 names give about
   * 5%, the client replication of the paper's comparisons).
   */
  public static final WorkloadSpec PAPER =
      new WorkloadSpec(10, 0.6, 100, 12, 8, 20, 1, 5, 0.6, 0.7, 0.8);

  public WorkloadSpec {
    check(attributesPerMessage >= 1, "attributesPerMessage must be at least 1");
    check(fraction(stringFraction), "stringFraction must be within [0, 1]");
    check(integerMax >= 0, "integerMax must be non-negative");
    int strings = (int) Math.round(attributesPerMessage * stringFraction);
    check(
        strings <= stringNames,
        "stringNames ("
            + stringNames
            + ") must be at least the "
            + strings
            + " string attributes of a message");
    check(
        attributesPerMessage - strings <= integerNames,
        "integerNames ("
            + integerNames
            + ") must be at least the "
            + (attributesPerMessage - strings)
            + " integer attributes of a message");
    check(conjunctionsPerPredicate >= 1, "conjunctionsPerPredicate must be at least 1");
    check(
        minConstraints >= 1 && maxConstraints >= minConstraints,
        "need 1 <= minConstraints <= maxConstraints");
    check(fraction(stringConstraintFraction), "stringConstraintFraction must be within [0, 1]");
    check(fraction(stringEqualityFraction), "stringEqualityFraction must be within [0, 1]");
    check(fraction(integerEqualityFraction), "integerEqualityFraction must be within [0, 1]");
    check(
        stringConstraintFraction == 0 || stringNames > 0,
        "string constraints need stringNames > 0");
    check(
        stringConstraintFraction == 1 || integerNames > 0,
        "integer constraints need integerNames > 0");
  }

  private static boolean fraction(double f) {
    return f >= 0 && f <= 1;
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /** Number of string attributes in each message. */
  public int stringAttributes() {
    return (int) Math.round(attributesPerMessage * stringFraction);
  }

  /** A copy with another number of conjunctions per predicate. */
  public WorkloadSpec withConjunctions(int n) {
    return new WorkloadSpec(
        attributesPerMessage,
        stringFraction,
        integerMax,
        stringNames,
        integerNames,
        n,
        minConstraints,
        maxConstraints,
        stringConstraintFraction,
        stringEqualityFraction,
        integerEqualityFraction);
  }

  /** A copy with conjunctions of {@code min} to {@code max} constraints. */
  public WorkloadSpec withConstraints(int min, int max) {
    return new WorkloadSpec(
        attributesPerMessage,
        stringFraction,
        integerMax,
        stringNames,
        integerNames,
        conjunctionsPerPredicate,
        min,
        max,
        stringConstraintFraction,
        stringEqualityFraction,
        integerEqualityFraction);
  }

  /** A copy with other name pool sizes. */
  public WorkloadSpec withNames(int strings, int integers) {
    return new WorkloadSpec(
        attributesPerMessage,
        stringFraction,
        integerMax,
        strings,
        integers,
        conjunctionsPerPredicate,
        minConstraints,
        maxConstraints,
        stringConstraintFraction,
        stringEqualityFraction,
        integerEqualityFraction);
  }
}
