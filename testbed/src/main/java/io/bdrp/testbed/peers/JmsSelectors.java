package io.bdrp.testbed.peers;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import jakarta.jms.JMSException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * bdrp predicates as JMS message selectors for ActiveMQ, and bdrp messages as JMS properties, such
 * that a message set up by {@link #setProperties} is selected by {@link #selector(Predicate)}
 * exactly when {@link Predicate#matches} holds on it. Stateless; safe from any thread.
 *
 * <p><b>Names.</b> A selector names a property by a bare identifier: ActiveMQ's grammar takes
 * {@code [A-Za-z_$][A-Za-z0-9_$]*} and has no quoted identifiers, the keywords {@code NOT AND OR
 * BETWEEN LIKE ESCAPE IN IS TRUE FALSE NULL XPATH XQUERY} are reserved in any case, and names that
 * start with {@code JMS} or {@code AMQ} have meanings of their own (headers such as {@code
 * JMSType}, broker properties such as {@code AMQ_SCHEDULED_DELAY}). {@link #propertyName} maps an
 * attribute name to a property name: a name of ASCII letters, digits and {@code _} that does not
 * start with a digit, is not a keyword and does not start with {@code JMS} or {@code AMQ} (ignoring
 * case) is kept as it is; any other name becomes {@code $} followed by the name with each UTF-16
 * unit other than an ASCII letter, digit or {@code _} written as {@code $} and four lower-case hex
 * digits ({@code content-type} is {@code $content$002dtype}, {@code true} is {@code $true}). Kept
 * names contain no {@code $} and encoded ones start with it, so the mapping is injective.
 *
 * <p><b>Values.</b> Strings, integers, doubles and booleans become String, Long, Double and Boolean
 * properties; a double {@code -0.0} is set as {@code 0.0}, because ActiveMQ compares doubles with
 * {@link Double#compareTo}, which puts {@code -0.0} below {@code 0.0}, while bdrp takes them as the
 * same number. A message with a string that holds U+0000 or a character above U+FFFF is refused:
 * ActiveMQ's OpenWire writes a string property as modified UTF-8 and the receiving side decodes it
 * as UTF-8, so the broker would see U+FFFD in their place and select on a different value.
 *
 * <p><b>Meaning.</b> A selector selects a message when it evaluates to TRUE; a comparison with a
 * missing property is UNKNOWN, so a constraint on a missing attribute is false in both systems. A
 * comparison of values of different types, however, is FALSE in ActiveMQ, not UNKNOWN, so {@code
 * NOT} would turn it true: no translation negates a comparison that can meet another type. The
 * translation of each constraint:
 *
 * <ul>
 *   <li>{@code exists(x)}: {@code x IS NOT NULL}.
 *   <li>Booleans: {@code x = TRUE} or {@code x = FALSE}.
 *   <li>Strings: {@code =} as {@code =}; {@code !=} as {@code (x LIKE '%' AND x <> 'v')}, the LIKE
 *       holding only for strings; {@code prefix}, {@code suffix} and {@code contains} as {@code x
 *       LIKE 'v%'}, {@code '%v'} and {@code '%v%'}, with {@code %}, {@code _} and {@code \} in the
 *       operand escaped by {@code \} ({@code ESCAPE '\'}). Quotes are doubled in every literal.
 *   <li>String order: JMS has no {@code <} on strings and ActiveMQ refuses a string literal beside
 *       {@code <}, but compares two string values with {@link String#compareTo} when the string
 *       comes from an expression: {@code x < 'v' + ''} (ActiveMQ concatenates strings with {@code
 *       +}). That order is by UTF-16 unit; it differs from bdrp's order by code point only where
 *       the first difference puts a character in U+E000..U+FFFF against a surrogate pair, so for
 *       each such character of the operand the selector adds or removes the strings that share the
 *       operand's prefix before it and have a character of the other class there (a range test on
 *       that prefix).
 *   <li>Numbers: {@code x op n}, with {@code !=} as {@code (x < n OR x > n)}. ActiveMQ compares a
 *       Long with a Double by rounding the Long to a double and a Double with a Long literal by
 *       rounding the literal, which is exact for every canonical operand except a long outside the
 *       doubles (as {@code 2^53 + 1}) and the double 2^63. For those two the selector splits on the
 *       property's type, told apart by its text ({@code '' + x LIKE '%.%'} holds for a Double,
 *       whose text always has a point, and not for a Long), and compares each type with a literal
 *       of its own kind: a Long with the long operand (every Long is below 2^63), a Double with
 *       2^63 or with the doubles next below and above the long operand.
 * </ul>
 *
 * <p><b>What cannot be expressed.</b> Every predicate has a translation. {@link Predicate#NONE} is
 * {@code FALSE}; bdrp has no predicate that takes every message (a conjunction holds at least one
 * constraint), and the JMS way to take everything is a consumer without a selector. Two limits
 * remain. Size: a consumer's selector travels in OpenWire as a string of less than 32,767 bytes of
 * modified UTF-8 (the default tight encoding), and a predicate near bdrp's limits (1,024
 * conjunctions, 64 KiB strings) can translate to more; the client then cannot send the consumer and
 * {@code createConsumer} fails. Portability: the string order and the two numeric cases above use
 * ActiveMQ's string {@code +}, an extension of its selector engine that other JMS brokers may
 * refuse.
 */
public final class JmsSelectors {
  /** ActiveMQ's selector keywords; an identifier may not be one of them in any case. */
  private static final Set<String> KEYWORDS =
      Set.of(
          "NOT", "AND", "OR", "BETWEEN", "LIKE", "ESCAPE", "IN", "IS", "TRUE", "FALSE", "NULL",
          "XPATH", "XQUERY");

  /** 2^63: the one double that ActiveMQ cannot compare exactly with every Long. */
  private static final double TWO_POW_63 = 9.223372036854775808E18;

  /** U+10000, the least supplementary character. */
  private static final String FIRST_SUPPLEMENTARY = "\uD800\uDC00";

  /** U+E000, the first character above the surrogates. */
  private static final String FIRST_ABOVE_SURROGATES = "\uE000";

  private JmsSelectors() {}

  /**
   * A JMS selector that ActiveMQ evaluates to TRUE on a message set up by {@link #setProperties}
   * exactly when {@code p} matches the bdrp message; {@code FALSE} for {@link Predicate#NONE},
   * {@code TRUE} for {@link Predicate#ALL}. See the class description for the translation of each
   * operator.
   */
  public static String selector(Predicate p) {
    if (p.isEmpty()) {
      return "FALSE";
    }
    if (p.isAll()) {
      return "TRUE";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < p.size(); i++) {
      if (i > 0) {
        sb.append(" OR ");
      }
      Conjunction c = p.get(i);
      boolean group = p.size() > 1 && c.size() > 1;
      if (group) {
        sb.append('(');
      }
      for (int j = 0; j < c.size(); j++) {
        if (j > 0) {
          sb.append(" AND ");
        }
        appendConstraint(sb, c.get(j));
      }
      if (group) {
        sb.append(')');
      }
    }
    return sb.toString();
  }

  /**
   * Sets every attribute of {@code m} on {@code jms} as a property named by {@link #propertyName}:
   * strings with {@code setStringProperty}, integers with {@code setLongProperty}, doubles with
   * {@code setDoubleProperty} ({@code -0.0} as {@code 0.0}) and booleans with {@code
   * setBooleanProperty}. Other properties of {@code jms} are left alone, unless one has the same
   * name, which is overwritten.
   *
   * @throws IllegalArgumentException if a string holds U+0000 or a character above U+FFFF, which
   *     OpenWire would alter on the way to the broker; nothing is set then
   * @throws JMSException if the JMS message refuses a property (for instance when read-only)
   */
  public static void setProperties(jakarta.jms.Message jms, Message m) throws JMSException {
    for (int i = 0; i < m.size(); i++) {
      Value v = m.value(i);
      if (v.type() == ValueType.STRING && !survivesOpenWire(v.asString())) {
        throw new IllegalArgumentException(
            "attribute "
                + Strings.quote(m.name(i))
                + " holds U+0000 or a character above U+FFFF, which ActiveMQ's OpenWire alters"
                + " on the way to the broker (written as modified UTF-8, read as UTF-8)");
      }
    }
    for (int i = 0; i < m.size(); i++) {
      String name = propertyName(m.name(i));
      Value v = m.value(i);
      switch (v.type()) {
        case STRING -> jms.setStringProperty(name, v.asString());
        case INTEGER -> jms.setLongProperty(name, v.asLong());
        case DOUBLE -> {
          double d = v.asDouble();
          jms.setDoubleProperty(name, d == 0 ? 0.0 : d);
        }
        case BOOLEAN -> jms.setBooleanProperty(name, v.asBoolean());
      }
    }
  }

  /**
   * True when ActiveMQ delivers a string property with this value unchanged: it has neither U+0000
   * nor a character above U+FFFF.
   */
  private static boolean survivesOpenWire(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0 || Character.isSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The JMS property name for a bdrp attribute name: the name itself when it is a plain ASCII
   * identifier that is neither a selector keyword nor starts with {@code JMS} or {@code AMQ}
   * (ignoring case), else {@code $} and the name with every UTF-16 unit other than {@code
   * [A-Za-z0-9_]} written as {@code $} and four lower-case hex digits. Injective, and every result
   * is a selector identifier.
   *
   * @throws IllegalArgumentException if {@code attribute} is not a valid bdrp attribute name
   */
  public static String propertyName(String attribute) {
    Strings.checkName(attribute);
    if (keptAsIs(attribute)) {
      return attribute;
    }
    StringBuilder sb = new StringBuilder(attribute.length() * 2 + 1).append('$');
    for (int i = 0; i < attribute.length(); i++) {
      char c = attribute.charAt(i);
      if (isAsciiLetter(c) || isAsciiDigit(c) || c == '_') {
        sb.append(c);
      } else {
        sb.append(String.format(Locale.ROOT, "$%04x", (int) c));
      }
    }
    return sb.toString();
  }

  private static boolean keptAsIs(String name) {
    char first = name.charAt(0);
    if (!(isAsciiLetter(first) || first == '_')) {
      return false;
    }
    for (int i = 1; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!(isAsciiLetter(c) || isAsciiDigit(c) || c == '_')) {
        return false;
      }
    }
    String upper = name.toUpperCase(Locale.ROOT);
    return !KEYWORDS.contains(upper) && !upper.startsWith("JMS") && !upper.startsWith("AMQ");
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  private static boolean isAsciiDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static void appendConstraint(StringBuilder sb, Constraint c) {
    String id = propertyName(c.name());
    if (c.op() == Op.EXISTS) {
      sb.append(id).append(" IS NOT NULL");
      return;
    }
    Value v = c.value();
    switch (v.type()) {
      case STRING -> appendString(sb, id, c.op(), v.asString());
      case BOOLEAN ->
          sb.append(id).append(" = ").append(v.asBoolean() == (c.op() == Op.EQ) ? "TRUE" : "FALSE");
      case INTEGER, DOUBLE -> appendNumber(sb, id, c.op(), v.canonical());
    }
  }

  private static void appendString(StringBuilder sb, String id, Op op, String s) {
    switch (op) {
      case EQ -> sb.append(id).append(" = ").append(literal(s));
      case NE ->
          sb.append('(')
              .append(id)
              .append(" LIKE '%' AND ")
              .append(id)
              .append(" <> ")
              .append(literal(s))
              .append(')');
      case PREFIX -> appendLike(sb, id, "", s, "%");
      case SUFFIX -> appendLike(sb, id, "%", s, "");
      case CONTAINS -> appendLike(sb, id, "%", s, "%");
      case LT, LE, GT, GE -> appendStringOrder(sb, id, op, s);
      default -> throw new IllegalArgumentException("operator " + op.symbol() + " on a string");
    }
  }

  /** {@code id LIKE 'before' + escaped(s) + 'after'}, with an ESCAPE clause when one is needed. */
  private static void appendLike(
      StringBuilder sb, String id, String before, String s, String after) {
    sb.append(id);
    appendLikePattern(sb, false, before, s, after);
  }

  private static void appendLikePattern(
      StringBuilder sb, boolean not, String before, String s, String after) {
    StringBuilder pattern = new StringBuilder(s.length() + 4).append(before);
    boolean escaped = false;
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '%' || ch == '_' || ch == '\\') {
        pattern.append('\\');
        escaped = true;
      }
      pattern.append(ch);
    }
    pattern.append(after);
    sb.append(not ? " NOT LIKE " : " LIKE ").append(literal(pattern.toString()));
    if (escaped) {
      sb.append(" ESCAPE '\\'");
    }
  }

  /**
   * String order by code point. ActiveMQ orders by UTF-16 unit, which agrees with code points
   * except at a first difference between a unit in U+E000..U+FFFF and a surrogate: there a
   * supplementary character is above by code point and below by unit. For each character of {@code
   * s} in U+E000..U+FFFF ("high" positions) a string that shares the prefix before it and has a
   * supplementary character there is misplaced below {@code s}; for each supplementary character of
   * {@code s} ("pair" positions) a string with a character of U+E000..U+FFFF there is misplaced
   * above it. The selector is the unit order without the strings it misplaces onto the asked side,
   * or with those it misplaces off it.
   */
  private static void appendStringOrder(StringBuilder sb, String id, Op op, String s) {
    List<String> highPrefixes = new ArrayList<>();
    List<String> pairPrefixes = new ArrayList<>();
    for (int i = 0; i < s.length(); ) {
      char ch = s.charAt(i);
      if (ch >= '\uE000') {
        highPrefixes.add(s.substring(0, i));
      } else if (Character.isHighSurrogate(ch)) {
        pairPrefixes.add(s.substring(0, i));
      }
      i += Character.charCount(s.codePointAt(i));
    }
    boolean below = op == Op.LT || op == Op.LE;
    // Prefixes after which a string is on the asked side of s by unit but not by code point
    // (unitOnly), or by code point but not by unit (codePointOnly).
    List<String> unitOnly = below ? highPrefixes : pairPrefixes;
    List<String> codePointOnly = below ? pairPrefixes : highPrefixes;
    if (unitOnly.isEmpty() && codePointOnly.isEmpty()) {
      appendUnitCompare(sb, id, op.symbol(), s);
      return;
    }
    sb.append("((");
    appendUnitCompare(sb, id, op.symbol(), s);
    for (String prefix : unitOnly) {
      sb.append(" AND ");
      if (below) {
        appendNotSupplementaryAfter(sb, id, prefix);
      } else {
        appendNotHighAfter(sb, id, prefix);
      }
    }
    sb.append(')');
    for (String prefix : codePointOnly) {
      sb.append(" OR ");
      if (below) {
        appendHighAfter(sb, id, prefix);
      } else {
        appendSupplementaryAfter(sb, id, prefix);
      }
    }
    sb.append(')');
  }

  /** {@code id op 's' + ''}: a string comparison that ActiveMQ accepts, ordered by UTF-16 unit. */
  private static void appendUnitCompare(StringBuilder sb, String id, String op, String s) {
    sb.append(id).append(' ').append(op).append(' ').append(literal(s)).append(" + ''");
  }

  /** The string starts with {@code prefix} and a supplementary character follows it. */
  private static void appendSupplementaryAfter(StringBuilder sb, String id, String prefix) {
    sb.append('(');
    appendUnitCompare(sb, id, ">=", prefix + FIRST_SUPPLEMENTARY);
    sb.append(" AND ");
    appendUnitCompare(sb, id, "<", prefix + FIRST_ABOVE_SURROGATES);
    sb.append(')');
  }

  /** Negation of {@link #appendSupplementaryAfter} among strings. */
  private static void appendNotSupplementaryAfter(StringBuilder sb, String id, String prefix) {
    sb.append('(');
    appendUnitCompare(sb, id, "<", prefix + FIRST_SUPPLEMENTARY);
    sb.append(" OR ");
    appendUnitCompare(sb, id, ">=", prefix + FIRST_ABOVE_SURROGATES);
    sb.append(')');
  }

  /** The string starts with {@code prefix} and a character of U+E000..U+FFFF follows it. */
  private static void appendHighAfter(StringBuilder sb, String id, String prefix) {
    sb.append('(');
    appendUnitCompare(sb, id, ">=", prefix + FIRST_ABOVE_SURROGATES);
    sb.append(" AND ").append(id);
    appendLikePattern(sb, false, "", prefix, "%");
    sb.append(')');
  }

  /** Negation of {@link #appendHighAfter} among strings. */
  private static void appendNotHighAfter(StringBuilder sb, String id, String prefix) {
    sb.append('(');
    appendUnitCompare(sb, id, "<", prefix + FIRST_ABOVE_SURROGATES);
    sb.append(" OR ").append(id);
    appendLikePattern(sb, true, "", prefix, "%");
    sb.append(')');
  }

  private static void appendNumber(StringBuilder sb, String id, Op op, Value v) {
    if (op == Op.NE) {
      // Not NOT (x = n): that is true for a property of another type.
      sb.append('(');
      appendNumber(sb, id, Op.LT, v);
      sb.append(" OR ");
      appendNumber(sb, id, Op.GT, v);
      sb.append(')');
      return;
    }
    String sym = op.symbol();
    if (v.type() == ValueType.INTEGER) {
      long n = v.asLong();
      double d = n;
      if (d != TWO_POW_63 && (long) d == n) {
        // n is a double too: a Long property compares exactly, a Double one with n as a double.
        sb.append(id).append(' ').append(sym).append(' ').append(n);
        return;
      }
      // Between two doubles: a Double property is below n when at most the lower one, above n
      // when at least the upper one, and never equal to it.
      boolean roundedDown = Value.compareLongDouble(n, d) > 0;
      double lower = roundedDown ? d : Math.nextDown(d);
      double upper = roundedDown ? Math.nextUp(d) : d;
      String forDouble =
          switch (op) {
            case LT, LE -> id + " <= " + lower;
            case GT, GE -> id + " >= " + upper;
            default -> null;
          };
      appendByType(sb, id, forDouble, id + ' ' + sym + ' ' + n);
      return;
    }
    double d = v.asDouble();
    if (d != TWO_POW_63) {
      // Not integral, or beyond every long: no Long rounds onto it.
      sb.append(id).append(' ').append(sym).append(' ').append(d);
      return;
    }
    // 2^63: every Long is below it, but the largest ones round to it.
    String forLong =
        switch (op) {
          case LT, LE -> id + " <= " + Long.MAX_VALUE;
          default -> null;
        };
    appendByType(sb, id, id + ' ' + sym + ' ' + d, forLong);
  }

  /**
   * {@code forDouble} for a Double property, {@code forLong} for any other one (a null condition
   * holds for no property of that type). The text of a Double always has a point and that of a Long
   * never does; each condition is false for strings and booleans.
   */
  private static void appendByType(StringBuilder sb, String id, String forDouble, String forLong) {
    sb.append('(');
    if (forDouble != null) {
      sb.append("('' + ").append(id).append(" LIKE '%.%' AND ").append(forDouble).append(')');
    }
    if (forLong != null) {
      if (forDouble != null) {
        sb.append(" OR ");
      }
      sb.append("('' + ").append(id).append(" NOT LIKE '%.%' AND ").append(forLong).append(')');
    }
    sb.append(')');
  }

  /** A JMS string literal: single-quoted, quotes doubled. */
  private static String literal(String s) {
    return "'" + s.replace("'", "''") + "'";
  }
}
