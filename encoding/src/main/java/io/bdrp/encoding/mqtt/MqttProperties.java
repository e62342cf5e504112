package io.bdrp.encoding.mqtt;

import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * MQTT 5 user properties in bdrp terms (docs/mqtt.md, "The mapping").
 *
 * <p>A PUBLISH's user properties become two kinds of attributes ({@link #put}):
 *
 * <ul>
 *   <li>{@value #USER}{@code name}: the first value of each name, typed by {@link #typed}, so that
 *       predicates compare it as a number or a boolean where it reads as one ({@code
 *       mqtt.user.value > 25});
 *   <li>{@value #USER_LIST}: every property in order, duplicates kept, as a JSON array of [name,
 *       value] pairs of strings, so that a delivery leaves with exactly the properties the
 *       publisher sent, in its order [MQTT-3.3.2-18].
 * </ul>
 *
 * Stateless.
 */
public final class MqttProperties {
  /** A user property: a name and a value, both strings (either may be empty). */
  public record UserProperty(String name, String value) {
    public UserProperty {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
    }
  }

  /** Prefix of the attributes that hold the first value of each user property name, typed. */
  public static final String USER = "mqtt.user.";

  /**
   * String attribute: every user property in order, duplicates kept, as the JSON array {@code
   * [["name","value"],...]}.
   */
  public static final String USER_LIST = "mqtt.userList";

  private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]*)");
  private static final Pattern DECIMAL =
      Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");

  private MqttProperties() {}

  /**
   * The value of a user property as an attribute: {@code "true"} and {@code "false"} are booleans;
   * an integer literal ({@code -?(0|[1-9][0-9]*)}) within the 64-bit range is an integer; a number
   * with a fraction or an exponent in JSON's syntax whose value is a finite double is a double;
   * anything else, including an integer literal beyond the 64-bit range, {@code "+1"}, {@code
   * "007"}, {@code " 1"}, {@code "1."}, {@code "NaN"} and {@code "TRUE"}, stays a string.
   */
  public static Value typed(String value) {
    if (value.equals("true")) {
      return Value.TRUE;
    }
    if (value.equals("false")) {
      return Value.FALSE;
    }
    if (!value.isEmpty()) {
      char c = value.charAt(0);
      if (c == '-' || (c >= '0' && c <= '9')) {
        if (INTEGER.matcher(value).matches()) {
          try {
            return Value.of(Long.parseLong(value));
          } catch (NumberFormatException beyondLong) {
            return Value.of(value);
          }
        }
        if (DECIMAL.matcher(value).matches()) {
          double d = Double.parseDouble(value);
          if (Double.isFinite(d)) {
            return Value.of(d);
          }
        }
      }
    }
    return Value.of(value);
  }

  /**
   * A typed value as a user property's text: a string as it is, an integer in decimal, a double as
   * {@link Double#toString}, a boolean as {@code true} or {@code false}; {@link #typed} reads each
   * back to the same value.
   */
  public static String text(Value v) {
    return switch (v.type()) {
      case STRING -> v.asString();
      case INTEGER -> Long.toString(v.asLong());
      case DOUBLE -> Double.toString(v.asDouble());
      case BOOLEAN -> v.asBoolean() ? "true" : "false";
    };
  }

  /**
   * Adds the attributes of these user properties to {@code b}: {@value #USER_LIST} with all of
   * them, and {@value #USER}{@code name} with the first value of each name whose attribute name
   * fits {@link Limits#MAX_NAME_BYTES} (a longer name is only in the list). Adds nothing for no
   * properties.
   *
   * @return {@code b}
   * @throws IllegalArgumentException if a name or value is not well-formed UTF-16, or the list
   *     takes more than {@link Limits#MAX_STRING_BYTES} bytes of UTF-8 as {@value #USER_LIST}
   */
  public static Message.Builder put(Message.Builder b, List<UserProperty> properties) {
    if (properties.isEmpty()) {
      return b;
    }
    StringBuilder list = new StringBuilder();
    list.append('[');
    Set<String> seen = new HashSet<>();
    int userPrefixBytes = USER.length();
    for (int i = 0; i < properties.size(); i++) {
      UserProperty p = properties.get(i);
      if (Strings.firstUnpairedSurrogate(p.name()) >= 0
          || Strings.firstUnpairedSurrogate(p.value()) >= 0) {
        throw new IllegalArgumentException(
            "user property " + (i + 1) + " has an unpaired surrogate (not well-formed UTF-8)");
      }
      if (i > 0) {
        list.append(',');
      }
      list.append('[');
      Strings.appendQuoted(list, p.name());
      list.append(',');
      Strings.appendQuoted(list, p.value());
      list.append(']');
      if (seen.add(p.name())
          && userPrefixBytes + Strings.utf8Length(p.name()) <= Limits.MAX_NAME_BYTES) {
        b.put(USER + p.name(), typed(p.value()));
      }
    }
    list.append(']');
    String encoded = list.toString();
    int bytes = Strings.utf8Length(encoded);
    if (bytes > Limits.MAX_STRING_BYTES) {
      throw new IllegalArgumentException(
          "user properties take "
              + bytes
              + " bytes as "
              + USER_LIST
              + ", more than the limit of "
              + Limits.MAX_STRING_BYTES);
    }
    return b.put(USER_LIST, encoded);
  }

  /**
   * The user properties of a message, in order: those of {@value #USER_LIST} when it is a string in
   * the documented encoding, else one per {@value #USER}{@code name} attribute in name order with
   * its value as {@link #text} (a message a bdrp client published), else none.
   */
  public static List<UserProperty> of(Message m) {
    Value list = m.get(USER_LIST);
    if (list != null && list.type() == ValueType.STRING) {
      List<UserProperty> decoded = new ListReader(list.asString()).read();
      if (decoded != null) {
        return decoded;
      }
    }
    List<UserProperty> out = new ArrayList<>();
    // Names are sorted, so those that start with USER follow where USER itself is or would be.
    int at = m.indexOf(USER);
    int from = at >= 0 ? at : -at - 1;
    for (int i = from; i < m.size() && m.name(i).startsWith(USER); i++) {
      out.add(new UserProperty(m.name(i).substring(USER.length()), text(m.value(i))));
    }
    return out;
  }

  /** Reads {@code [["name","value"],...]} (JSON, whitespace allowed); null if it is not that. */
  private static final class ListReader {
    private final String s;
    private int pos;

    ListReader(String s) {
      this.s = s;
    }

    List<UserProperty> read() {
      List<UserProperty> out = new ArrayList<>();
      if (!take('[')) {
        return null;
      }
      if (take(']')) {
        return end() ? out : null;
      }
      do {
        if (!take('[')) {
          return null;
        }
        String name = string();
        if (name == null || !take(',')) {
          return null;
        }
        String value = string();
        if (value == null || !take(']')) {
          return null;
        }
        out.add(new UserProperty(name, value));
      } while (take(','));
      return take(']') && end() ? out : null;
    }

    private void skipSpace() {
      while (pos < s.length() && " \t\n\r".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
    }

    private boolean take(char c) {
      skipSpace();
      if (pos < s.length() && s.charAt(pos) == c) {
        pos++;
        return true;
      }
      return false;
    }

    private boolean end() {
      skipSpace();
      return pos == s.length();
    }

    /** A JSON string, or null. */
    private String string() {
      if (!take('"')) {
        return null;
      }
      StringBuilder out = new StringBuilder();
      while (pos < s.length()) {
        char c = s.charAt(pos++);
        if (c == '"') {
          String str = out.toString();
          return Strings.firstUnpairedSurrogate(str) < 0 ? str : null;
        }
        if (c < 0x20) {
          return null;
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (pos >= s.length()) {
          return null;
        }
        char e = s.charAt(pos++);
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (pos + 4 > s.length()) {
              return null;
            }
            int code = 0;
            for (int k = 0; k < 4; k++) {
              int d = Character.digit(s.charAt(pos++), 16);
              if (d < 0) {
                return null;
              }
              code = code * 16 + d;
            }
            out.append((char) code);
          }
          default -> {
            return null;
          }
        }
      }
      return null;
    }
  }
}
