package io.bdrp.encoding;

/**
 * Constraint operators.
 *
 * <ul>
 *   <li>numbers (integers and doubles, compared numerically): {@code = != < <= > >=}
 *   <li>strings (ordered by Unicode code point): {@code = != < <= > >= prefix suffix contains}
 *   <li>booleans: {@code = !=}
 *   <li>any type: {@code exists(name)}
 * </ul>
 */
public enum Op {
  EQ("=", (byte) 1),
  NE("!=", (byte) 2),
  GT(">", (byte) 5),
  GE(">=", (byte) 6),
  LT("<", (byte) 3),
  LE("<=", (byte) 4),
  PREFIX("prefix", (byte) 7),
  SUFFIX("suffix", (byte) 8),
  CONTAINS("contains", (byte) 9),
  EXISTS("exists", (byte) 10);

  private final String symbol;
  private final byte wireCode;

  Op(String symbol, byte wireCode) {
    this.symbol = symbol;
    this.wireCode = wireCode;
  }

  /** The operator as written in the predicate language. */
  public String symbol() {
    return symbol;
  }

  /** The code that identifies this operator in binary codecs. */
  public byte wireCode() {
    return wireCode;
  }

  /** True when the operator applies to operands of this type. */
  public boolean appliesTo(ValueType type) {
    return switch (this) {
      case EQ, NE -> true;
      case LT, LE, GT, GE -> type != ValueType.BOOLEAN;
      case PREFIX, SUFFIX, CONTAINS -> type == ValueType.STRING;
      case EXISTS -> false;
    };
  }

  /** The operator with this wire code, or {@code null} if unknown. */
  public static Op fromWireCode(byte code) {
    for (Op op : values()) {
      if (op.wireCode == code) {
        return op;
      }
    }
    return null;
  }

  /** The binary operator written as {@code symbol}, or {@code null} (exists is not binary). */
  public static Op fromSymbol(String symbol) {
    for (Op op : values()) {
      if (op != EXISTS && op.symbol.equals(symbol)) {
        return op;
      }
    }
    return null;
  }
}
