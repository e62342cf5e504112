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
   * Sets the k bits of a category in {@code filter}. Positions come from double hashing of the
   * category hash (h1 + i·h2, i = 0..k-1), each mapped into [0, M) by a multiply-high.
   */
  public static void add(long[] filter, long category, BloomParameters p) {
    long h1 = category;
    long h2 = fmix(category ^ C1) | 1;
    int m = p.bits();
    for (int i = 0; i < p.hashes(); i++) {
      int bit = (int) Math.unsignedMultiplyHigh(h1 + i * h2, m);
      filter[bit >>> 6] |= 1L << bit;
    }
  }
}
