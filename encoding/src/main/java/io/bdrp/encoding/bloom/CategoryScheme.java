package io.bdrp.encoding.bloom;

import java.util.Locale;

/**
 * Which categories a message and a constraint are given before they become Bloom filters. Every
 * router of a network must use the same scheme (it travels with M and k on the wire).
 *
 * <ul>
 *   <li>{@link #PAPER}: the paper's categories (§3). An attribute has its existence and equality
 *       categories; a constraint {@code =} the equality category, every other typed constraint the
 *       existence category. A range, prefix, suffix or substring constraint is therefore covered by
 *       every message that has the attribute.
 *   <li>{@link #SHARP}: the paper's categories plus categories for the first and last two and three
 *       characters of a string, the character pairs it contains (hashed into {@value
 *       Categories#PAIR_BUCKETS} buckets per name) and the magnitude of a number at several
 *       resolutions. A prefix or suffix constraint maps to the category of its leading or trailing
 *       characters and its pairs, a substring constraint to its pairs, and a numeric range to one
 *       to a few magnitude buckets that cover it. See {@code docs/encoding.md} for the measurements
 *       that chose them.
 * </ul>
 */
public enum CategoryScheme {
  PAPER(0),
  SHARP(1);

  private final int wireId;

  CategoryScheme(int wireId) {
    this.wireId = wireId;
  }

  /** The number that stands for the scheme on the wire. */
  public int wireId() {
    return wireId;
  }

  /** The scheme with this wire number, or null. */
  public static CategoryScheme ofWireId(int id) {
    for (CategoryScheme s : values()) {
      if (s.wireId == id) {
        return s;
      }
    }
    return null;
  }

  /** The name used in configuration files and on the command line. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The scheme named {@code name} ({@code paper} or {@code sharp}, any case).
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static CategoryScheme parse(String name) {
    for (CategoryScheme s : values()) {
      if (s.configName().equalsIgnoreCase(name.trim())) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "unknown category scheme '" + name + "' (expected 'sharp' or 'paper')");
  }
}
