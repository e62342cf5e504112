package io.bdrp.encoding;

/**
 * An immutable typed value: a string, a 64-bit integer, a finite double or a boolean.
 *
 * <p>Integers and doubles compare numerically with each other and exactly (a long is never rounded
 * to a double to compare it). Equality ({@link #equals}) is by type and value; use {@link
 * #compareTo} or {@link #sameValue} for numeric equality across types.
 */
public final class Value implements Comparable<Value> {
  public static final Value TRUE = new Value(ValueType.BOOLEAN, 1, null);
  public static final Value FALSE = new Value(ValueType.BOOLEAN, 0, null);

  /** 2^63 as a double: the first double above every long. */
  private static final double TWO_POW_63 = 9.223372036854775808E18;

  private final ValueType type;
  private final long bits;
  private final String string;

  private Value(ValueType type, long bits, String string) {
    this.type = type;
    this.bits = bits;
    this.string = string;
  }

  /** A string value; fails on unpaired surrogates or more than 64 KiB of UTF-8. */
  public static Value of(String s) {
    return new Value(ValueType.STRING, 0, Strings.checkStringValue(s));
  }

  /**
   * The integers from {@link #SMALL_MIN} below 1024, made once: a decoded message's usual values.
   */
  private static final int SMALL_MIN = -128;

  private static final Value[] SMALL = new Value[1024 - SMALL_MIN];

  static {
    for (int i = 0; i < SMALL.length; i++) {
      SMALL[i] = new Value(ValueType.INTEGER, i + SMALL_MIN, null);
    }
  }

  /** A 64-bit integer value; small ones are shared (values are immutable). */
  public static Value of(long v) {
    long i = v - SMALL_MIN;
    if (i >= 0 && i < SMALL.length) {
      return SMALL[(int) i];
    }
    return new Value(ValueType.INTEGER, v, null);
  }

  /** A double value; fails on NaN and infinities. */
  public static Value of(double d) {
    if (!Double.isFinite(d)) {
      throw new IllegalArgumentException("number is not finite: " + d);
    }
    return new Value(ValueType.DOUBLE, Double.doubleToRawLongBits(d), null);
  }

  /** A boolean value. */
  public static Value of(boolean b) {
    return b ? TRUE : FALSE;
  }

  public ValueType type() {
    return type;
  }

  /** The string; only for {@link ValueType#STRING}. */
  public String asString() {
    check(ValueType.STRING);
    return string;
  }

  /** The integer; only for {@link ValueType#INTEGER}. */
  public long asLong() {
    check(ValueType.INTEGER);
    return bits;
  }

  /** The double; only for {@link ValueType#DOUBLE}. */
  public double asDouble() {
    check(ValueType.DOUBLE);
    return Double.longBitsToDouble(bits);
  }

  /** The numeric value as a double (an integer may round); only for numbers. */
  public double toDouble() {
    return type == ValueType.INTEGER ? (double) bits : asDouble();
  }

  /** The boolean; only for {@link ValueType#BOOLEAN}. */
  public boolean asBoolean() {
    check(ValueType.BOOLEAN);
    return bits != 0;
  }

  /**
   * The raw 64 bits behind a non-string value: the integer, the IEEE bits of the double, or 0/1 for
   * a boolean.
   */
  public long rawBits() {
    return bits;
  }

  private void check(ValueType expected) {
    if (type != expected) {
      throw new IllegalStateException("value is " + type + ", not " + expected);
    }
  }

  /**
   * The canonical form of a number: a double with an integral value in the range of a long becomes
   * that long, so that {@code 50.0} and {@code 50} are the same operand. Other values are returned
   * as they are.
   */
  public Value canonical() {
    if (type == ValueType.DOUBLE) {
      double d = Double.longBitsToDouble(bits);
      if (d == Math.rint(d) && d >= -TWO_POW_63 && d < TWO_POW_63) {
        return of((long) d);
      }
    }
    return this;
  }

  /**
   * True when this double holds an integral value that a long represents exactly, i.e. when {@link
   * #canonical()} would make it an integer.
   */
  public boolean isIntegral() {
    return type == ValueType.INTEGER || canonical().type == ValueType.INTEGER;
  }

  /**
   * True when the two values are equal under the predicate language's equality: same string, same
   * boolean, or numerically equal numbers of either type.
   */
  public boolean sameValue(Value other) {
    if (!type.comparableWith(other.type)) {
      return false;
    }
    return compareTo(other) == 0;
  }

  /**
   * Order: strings before numbers before booleans; strings by code point; numbers numerically and
   * exactly, so an integer and a double of equal value compare as 0 (this order is not consistent
   * with {@link #equals}, which also compares types; canonical operands never hold two numerically
   * equal values of different types); false before true.
   */
  @Override
  public int compareTo(Value o) {
    int fa = family(type);
    int fb = family(o.type);
    if (fa != fb) {
      return Integer.compare(fa, fb);
    }
    return switch (type) {
      case STRING -> Strings.compareCodePoints(string, o.string);
      case BOOLEAN -> Long.compare(bits, o.bits);
      case INTEGER, DOUBLE -> compareNumbers(this, o);
    };
  }

  /**
   * Numeric order of two numbers; returns 0 only for numerically equal values (an integer and a
   * double of equal value compare as 0).
   */
  public static int compareNumbers(Value a, Value b) {
    if (a.type == ValueType.INTEGER) {
      return b.type == ValueType.INTEGER
          ? Long.compare(a.bits, b.bits)
          : compareLongDouble(a.bits, Double.longBitsToDouble(b.bits));
    }
    double x = Double.longBitsToDouble(a.bits);
    if (b.type == ValueType.INTEGER) {
      return -compareLongDouble(b.bits, x);
    }
    double y = Double.longBitsToDouble(b.bits);
    // Not Double.compare: -0.0 and 0.0 are the same number here, and NaN never occurs.
    return x < y ? -1 : (x > y ? 1 : 0);
  }

  /** Exact comparison of a long with a finite double, without rounding the long. */
  public static int compareLongDouble(long l, double d) {
    if (d >= TWO_POW_63) {
      return -1;
    }
    if (d < -TWO_POW_63) {
      return 1;
    }
    long t = (long) d; // truncates toward zero; exact for |d| < 2^63
    if (l != t) {
      return Long.compare(l, t);
    }
    double frac = d - (double) t; // exact: t came from d's integral part
    return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
  }

  private static int family(ValueType t) {
    return switch (t) {
      case STRING -> 0;
      case INTEGER, DOUBLE -> 1;
      case BOOLEAN -> 2;
    };
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Value v)) {
      return false;
    }
    return type == v.type
        && bits == v.bits
        && (string == null ? v.string == null : string.equals(v.string));
  }

  @Override
  public int hashCode() {
    return type == ValueType.STRING ? string.hashCode() : Long.hashCode(bits) * 31 + type.ordinal();
  }

  /** The value in the predicate language's syntax (JSON literals). */
  @Override
  public String toString() {
    return switch (type) {
      case STRING -> Strings.quote(string);
      case INTEGER -> Long.toString(bits);
      // "1.0", "1.5E-7": valid JSON numbers with '.', so the parser reads them back as doubles.
      case DOUBLE -> Double.toString(Double.longBitsToDouble(bits));
      case BOOLEAN -> bits != 0 ? "true" : "false";
    };
  }
}
