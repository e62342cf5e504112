package io.bdrp.encoding;

import java.nio.charset.StandardCharsets;

/** String helpers shared by the model, the matchers and the codecs. */
public final class Strings {
  private Strings() {}

  /**
   * Compares two strings by Unicode code point, which is the order the predicate language defines
   * for {@code <} and {@code >}. ({@link String#compareTo} compares UTF-16 units and orders U+FFFF
   * after U+10000.)
   */
  public static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        // Surrogates (0xD800-0xDFFF) encode code points above 0xFFFF, so they sort after
        // every other UTF-16 unit when comparing by code point.
        boolean sx = Character.isSurrogate(x);
        boolean sy = Character.isSurrogate(y);
        if (sx != sy) {
          return sx ? 1 : -1;
        }
        return Character.compare(x, y);
      }
    }
    return Integer.compare(a.length(), b.length());
  }

  /**
   * Number of bytes of the UTF-8 encoding of {@code s}, which must be well-formed (no unpaired
   * surrogates).
   */
  public static int utf8Length(String s) {
    // Names and most values are ASCII: one byte a character, found by one comparison each.
    int n = s.length();
    int i = 0;
    while (i < n && s.charAt(i) < 0x80) {
      i++;
    }
    int bytes = i;
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c)) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /** Index of the first unpaired surrogate in {@code s}, or -1 if it is well-formed. */
  public static int firstUnpairedSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
        } else {
          return i;
        }
      } else if (Character.isLowSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  /** UTF-8 bytes of a well-formed string. */
  public static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Checks an attribute name: non-empty, well-formed, at most {@link Limits#MAX_NAME_BYTES}.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static String checkName(String name) {
    if (name == null) {
      throw new IllegalArgumentException("attribute name is null");
    }
    if (name.isEmpty()) {
      throw new IllegalArgumentException("attribute name is empty");
    }
    if (name.length() <= Limits.MAX_NAME_BYTES && isAscii(name)) {
      return name; // no surrogates, and one byte of UTF-8 a character
    }
    if (firstUnpairedSurrogate(name) >= 0) {
      throw new IllegalArgumentException(
          "attribute name has an unpaired surrogate: " + quote(name));
    }
    int bytes = utf8Length(name);
    if (bytes > Limits.MAX_NAME_BYTES) {
      throw new IllegalArgumentException(
          "attribute name is "
              + bytes
              + " bytes of UTF-8, more than the limit of "
              + Limits.MAX_NAME_BYTES);
    }
    return name;
  }

  /**
   * Checks a string value: well-formed, at most {@link Limits#MAX_STRING_BYTES}.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static String checkStringValue(String value) {
    if (value == null) {
      throw new IllegalArgumentException("string value is null");
    }
    if (firstUnpairedSurrogate(value) >= 0) {
      throw new IllegalArgumentException("string value has an unpaired surrogate");
    }
    int bytes = utf8Length(value);
    if (bytes > Limits.MAX_STRING_BYTES) {
      throw new IllegalArgumentException(
          "string value is "
              + bytes
              + " bytes of UTF-8, more than the limit of "
              + Limits.MAX_STRING_BYTES);
    }
    return value;
  }

  /** The string as a JSON string literal (double quotes, JSON escapes). */
  public static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2);
    appendQuoted(out, s);
    return out.toString();
  }

  /** Appends {@code s} as a JSON string literal. */
  public static void appendQuoted(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
