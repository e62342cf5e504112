package io.bdrp.encoding;

/**
 * The type of an attribute value or constraint operand.
 *
 * <p>{@link #INTEGER} and {@link #DOUBLE} belong to one comparison family: they compare numerically
 * with each other, so {@code price = 50} matches {@code price = 50.0}.
 */
public enum ValueType {
  STRING((byte) 1, '$'),
  INTEGER((byte) 2, '#'),
  DOUBLE((byte) 3, '#'),
  BOOLEAN((byte) 4, '?');

  private final byte wireTag;
  private final char categoryTag;

  ValueType(byte wireTag, char categoryTag) {
    this.wireTag = wireTag;
    this.categoryTag = categoryTag;
  }

  /** The tag that identifies this type in binary codecs. */
  public byte wireTag() {
    return wireTag;
  }

  /**
   * The type identifier used in encoding categories (paper §3): {@code $} strings, {@code #}
   * numbers (integers and doubles alike), {@code ?} booleans.
   */
  public char categoryTag() {
    return categoryTag;
  }

  /** True for integers and doubles. */
  public boolean isNumeric() {
    return this == INTEGER || this == DOUBLE;
  }

  /** True when values of the two types can be compared with each other. */
  public boolean comparableWith(ValueType other) {
    return categoryTag == other.categoryTag;
  }

  /** The type with the given wire tag, or {@code null} if the tag is unknown. */
  public static ValueType fromWireTag(byte tag) {
    return switch (tag) {
      case 1 -> STRING;
      case 2 -> INTEGER;
      case 3 -> DOUBLE;
      case 4 -> BOOLEAN;
      default -> null;
    };
  }
}
