package io.bdrp.encoding.bloom;

import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;

/**
 * Categorisation of attributes and constraints (paper §3), computed directly as 64-bit hashes of
 * the category so that no category string is ever built.
 *
 * <p>Categories:
 *
 * <ul>
 *   <li>existence {@code ∃·t·name}: hash of (1, t, name);
 *   <li>equality {@code t·name=value}: hash of (2, t, name, canonical value).
 * </ul>
 *
 * where t is the type identifier {@link ValueType#categoryTag()} ({@code $} strings, {@code #}
 * numbers, {@code ?} booleans). An attribute {@code name = v} has both categories; a constraint
 * with operator {@code =} has the equality category, any other typed constraint the existence
 * category. Numbers are hashed in canonical form: an integral double in the range of a long is
 * hashed as that long, so {@code price = 50} and {@code price = 50.0} have one category. The name
 * is length-prefixed, so no choice of names and values makes two categories collide as inputs (the
 * hash itself may collide, which only adds false positives).
 *
 * <p>The hash is part of the network protocol: routers exchange filters built from it, so it is
 * fixed here and must not change without a protocol version bump. Stateless and thread-safe.
 */
public final class Categories {
  private static final long SEED = 0x62647270_2D636174L; // "bdrp-cat"
  private static final long C1 = 0x9E3779B97F4A7C15L;
  private static final long C2 = 0xC2B2AE3D27D4EB4FL;
  private static final long C3 = 0x165667B19E3779F9L;
  private static final double TWO_POW_63 = 9.223372036854775808E18;

  private Categories() {}

  private static long step(long h, long x) {
    return Long.rotateLeft(h ^ (x * C1), 29) * C2 + C3;
  }

  /** The murmur3 64-bit finaliser: spreads every input bit over the output. */
  static long fmix(long h) {
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h;
  }

  private static long name(long h, String name) {
    int n = name.length();
    h = step(h, n);
    for (int i = 0; i < n; i++) {
      h = step(h, name.charAt(i));
    }
    return h;
  }

  /** Hash of the existence category {@code ∃·tag·name}. */
  public static long existence(char typeTag, String name) {
    return fmix(name(step(step(SEED, 1), typeTag), name));
  }

  /** Hash of the equality category {@code tag·name=value}, value in canonical form. */
  public static long equality(String name, Value v) {
    long h = name(step(step(SEED, 2), v.type().categoryTag()), name);
    switch (v.type()) {
      case STRING -> {
        String s = v.asString();
        int n = s.length();
        h = step(h, n);
        for (int i = 0; i < n; i++) {
          h = step(h, s.charAt(i));
        }
      }
      case INTEGER -> h = step(step(h, 'L'), v.asLong());
      case DOUBLE -> {
        double d = v.asDouble();
        if (d == Math.rint(d) && d >= -TWO_POW_63 && d < TWO_POW_63) {
          h = step(step(h, 'L'), (long) d);
        } else {
          h = step(step(h, 'D'), Double.doubleToLongBits(d));
        }
      }
      case BOOLEAN -> h = step(step(h, 'B'), v.asBoolean() ? 1 : 0);
    }
    return fmix(h);
  }

  /**
   * Buckets into which a string's character pairs are hashed, per attribute name: a message sets at
   * most this many pair categories for a string, however long.
   */
  public static final int PAIR_BUCKETS = 64;

  /** Levels of magnitude buckets: a level-l bucket spans 2^l consecutive {@link #cell cells}. */
  static final int[] MAGNITUDE_LEVELS = {0, 2, 4, 6, 8};

  /** Number of cells; cells of non-negative numbers start at half of it. */
  static final int CELLS = 512;

  /**
   * Hash of the category "the string value of {@code name} starts with the {@code length} chars of
   * {@code s}" (length 2 or 3, at most {@code s.length()}).
   */
  public static long prefix(String name, String s, int length) {
    long h = name(step(step(SEED, 3), length), name);
    for (int i = 0; i < length; i++) {
      h = step(h, s.charAt(i));
    }
    return fmix(h);
  }

  /**
   * Hash of the category "the string value of {@code name} ends with the last {@code length} chars
   * of {@code s}".
   */
  public static long suffix(String name, String s, int length) {
    long h = name(step(step(SEED, 4), length), name);
    for (int i = s.length() - length; i < s.length(); i++) {
      h = step(h, s.charAt(i));
    }
    return fmix(h);
  }

  /** The bucket, in [0, {@link #PAIR_BUCKETS}), of the character pair (a, b). */
  public static int pairBucket(char a, char b) {
    return (int) (fmix(((long) a << 16 | b) * C1) >>> 58);
  }

  /** Hash of the category "the string value of {@code name} has a char pair in bucket b". */
  public static long pair(String name, int bucket) {
    return fmix(step(name(step(SEED, 5), name), bucket));
  }

  /**
   * The magnitude cell of an integer, in [8, 504): 0 to 3 each have a cell, every larger
   * power-of-two range [2^e, 2^(e+1)) is split into four cells by the two bits after its leading
   * one, and negative numbers mirror the non-negative ones below cell 256. Cells are ordered as the
   * numbers are: {@code a <= b} implies {@code cell(a) <= cell(b)}.
   */
  public static int cell(long v) {
    if (v < 0) {
      return CELLS - 1 - cell(~v);
    }
    if (v < 4) {
      return CELLS / 2 + (int) v;
    }
    int e = 63 - Long.numberOfLeadingZeros(v);
    return CELLS / 2 + 4 * (e - 1) + (int) ((v >>> (e - 2)) & 3);
  }

  /**
   * The cell of a finite double: that of its floor, clamped to the range of a long (floor and clamp
   * keep the order, so ranges over mixed integers and doubles are covered).
   */
  public static int cell(double d) {
    if (d >= TWO_POW_63) {
      return cell(Long.MAX_VALUE);
    }
    if (d < -TWO_POW_63) {
      return cell(Long.MIN_VALUE);
    }
    return cell((long) Math.floor(d));
  }

  /** The cell of a number, integer or double. */
  public static int cell(Value number) {
    return number.type() == ValueType.INTEGER ? cell(number.asLong()) : cell(number.asDouble());
  }

  /**
   * Hash of the category "the number {@code name} lies in bucket {@code index} of level {@code
   * level}".
   */
  public static long magnitude(String name, int level, int index) {
    return fmix(step(step(name(step(SEED, 6), name), level), index));
  }

  /**
   * Sets the k bits of a category in {@code filter}. Positions come from double hashing of the
   * category hash (h1 + i·h2, i = 0..k-1), each mapped into [0, M) by a multiply-high.
   */
  public static void add(long[] filter, long category, BloomParameters p) {
    long h2 = fmix(category ^ C1) | 1;
    int m = p.bits();
    for (int i = 0; i < p.hashes(); i++) {
      int bit = position(category, h2, i, m);
      filter[bit >>> 6] |= 1L << bit;
    }
  }

  /**
   * Writes the k positions of a category (as {@link #add} sets them, repeats possible) to {@code
   * dst} from {@code at}; returns the index after them.
   */
  static int positions(long category, BloomParameters p, int[] dst, int at) {
    long h2 = fmix(category ^ C1) | 1;
    int m = p.bits();
    for (int i = 0; i < p.hashes(); i++) {
      dst[at++] = position(category, h2, i, m);
    }
    return at;
  }

  private static int position(long h1, long h2, int i, int m) {
    return (int) Math.unsignedMultiplyHigh(h1 + i * h2, m);
  }
}
