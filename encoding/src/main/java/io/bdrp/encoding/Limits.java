package io.bdrp.encoding;

/**
 * Hard bounds on the size of messages and predicates. Every constructor and decoder checks them, so
 * that no peer can make a router allocate without bound.
 */
public final class Limits {
  /** Longest attribute name, in UTF-8 bytes. */
  public static final int MAX_NAME_BYTES = 255;

  /** Longest string value, in UTF-8 bytes. */
  public static final int MAX_STRING_BYTES = 65_535;

  /** Most attributes in one message. */
  public static final int MAX_ATTRIBUTES = 1_024;

  /** Largest message body, in bytes. */
  public static final int MAX_BODY_BYTES = 1 << 20;

  /** Most conjunctions in one predicate, after normalisation to disjunctive normal form. */
  public static final int MAX_CONJUNCTIONS = 1_024;

  /** Most constraints in one conjunction. */
  public static final int MAX_CONSTRAINTS = 64;

  private Limits() {}
}
