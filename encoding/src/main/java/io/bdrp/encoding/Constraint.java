package io.bdrp.encoding;

import java.util.Comparator;

/**
 * An elementary constraint {@code name op value}, or {@code exists(name)}. Immutable and in
 * canonical form: numeric operands are canonical ({@link Value#canonical()}) and {@code b != true}
 * is written {@code b = false}.
 *
 * <p>A constraint on an attribute the message lacks, or whose value is of another type, is false
 * ({@code exists} excepted, which only asks for presence).
 */
public final class Constraint implements Comparable<Constraint> {
  /** Canonical order: name, operator, operand. */
  public static final Comparator<Constraint> ORDER =
      Comparator.comparing(Constraint::name)
          .thenComparing(Constraint::op)
          .thenComparing(c -> c.value, Comparator.nullsFirst(Comparator.naturalOrder()));

  private final String name;
  private final Op op;
  private final Value value;

  private Constraint(String name, Op op, Value value) {
    this.name = name;
    this.op = op;
    this.value = value;
  }

  /**
   * A binary constraint. Fails if the operator does not apply to the operand's type (for example
   * {@code prefix} on a number, {@code <} on a boolean).
   */
  public static Constraint of(String name, Op op, Value value) {
    Strings.checkName(name);
    if (op == null || value == null) {
      throw new IllegalArgumentException("constraint on " + Strings.quote(name) + " is incomplete");
    }
    if (op == Op.EXISTS) {
      throw new IllegalArgumentException("exists takes no operand; use Constraint.exists(name)");
    }
    if (!op.appliesTo(value.type())) {
      throw new IllegalArgumentException(
          "operator " + op.symbol() + " does not apply to " + describe(value.type()) + " operands");
    }
    Value v = value.canonical();
    if (v.type() == ValueType.BOOLEAN && op == Op.NE) {
      return new Constraint(name, Op.EQ, Value.of(!v.asBoolean()));
    }
    return new Constraint(name, op, v);
  }

  /** {@code exists(name)}: true for any message with an attribute of that name. */
  public static Constraint exists(String name) {
    return new Constraint(Strings.checkName(name), Op.EXISTS, null);
  }

  static String describe(ValueType t) {
    return switch (t) {
      case STRING -> "string";
      case INTEGER, DOUBLE -> "number";
      case BOOLEAN -> "boolean";
    };
  }

  public String name() {
    return name;
  }

  public Op op() {
    return op;
  }

  /** The operand; {@code null} for {@code exists}. */
  public Value value() {
    return value;
  }

  /** Evaluates this constraint on an attribute value ({@code null} when absent). */
  public boolean test(Value v) {
    if (v == null) {
      return false;
    }
    if (op == Op.EXISTS) {
      return true;
    }
    if (!value.type().comparableWith(v.type())) {
      return false;
    }
    switch (op) {
      case PREFIX:
        return v.asString().startsWith(value.asString());
      case SUFFIX:
        return v.asString().endsWith(value.asString());
      case CONTAINS:
        return v.asString().contains(value.asString());
      default:
        break;
    }
    int c = v.compareTo(value);
    return switch (op) {
      case EQ -> c == 0;
      case NE -> c != 0;
      case LT -> c < 0;
      case LE -> c <= 0;
      case GT -> c > 0;
      case GE -> c >= 0;
      default -> throw new AssertionError(op);
    };
  }

  /** Evaluates this constraint on a message. */
  public boolean test(Message m) {
    return test(m.get(name));
  }

  @Override
  public int compareTo(Constraint o) {
    return ORDER.compare(this, o);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Constraint c
        && name.equals(c.name)
        && op == c.op
        && (value == null ? c.value == null : value.equals(c.value));
  }

  @Override
  public int hashCode() {
    return (name.hashCode() * 31 + op.hashCode()) * 31 + (value == null ? 0 : value.hashCode());
  }

  /** The constraint in the predicate language. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    appendTo(sb);
    return sb.toString();
  }

  void appendTo(StringBuilder sb) {
    if (op == Op.EXISTS) {
      sb.append("exists(");
      appendName(sb, name);
      sb.append(')');
      return;
    }
    appendName(sb, name);
    sb.append(' ').append(op.symbol()).append(' ').append(value);
  }

  /** Writes a name bare if it is an identifier of the language, else as a quoted string. */
  static void appendName(StringBuilder sb, String name) {
    if (isIdentifier(name)) {
      sb.append(name);
    } else {
      Strings.appendQuoted(sb, name);
    }
  }

  /**
   * True when {@code s} can be written bare as an attribute name: it starts with a letter or {@code
   * _}, continues with letters, digits, {@code _} or {@code .}, and is not a keyword.
   */
  public static boolean isIdentifier(String s) {
    if (s.isEmpty() || Keywords.isKeyword(s)) {
      return false;
    }
    int first = s.codePointAt(0);
    if (!(Character.isLetter(first) || first == '_')) {
      return false;
    }
    for (int i = Character.charCount(first); i < s.length(); ) {
      int cp = s.codePointAt(i);
      if (!(Character.isLetterOrDigit(cp) || cp == '_' || cp == '.')) {
        return false;
      }
      i += Character.charCount(cp);
    }
    return true;
  }
}
