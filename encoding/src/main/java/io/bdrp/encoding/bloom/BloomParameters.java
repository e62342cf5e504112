package io.bdrp.encoding.bloom;

/**
 * Width and hash count of the Bloom filters that encode messages and predicates. Every router of a
 * network must use the same parameters: a filter only means something next to filters made with the
 * same M and k.
 *
 * <p>Defaults ({@link #DEFAULT}): M = 8192 bits, k = 1, sharp categories. See {@code
 * docs/encoding.md} for the measured false-positive rates and matching speed that motivate them.
 *
 * @param bits M, the number of bits of a filter, 64 to 8192
 * @param hashes k, the number of bit positions set per category, 1 to 32
 * @param categories the categories messages and constraints are given ({@link CategoryScheme})
 */
public record BloomParameters(int bits, int hashes, CategoryScheme categories) {
  /** The parameters every component uses unless configured otherwise. */
  public static final BloomParameters DEFAULT = new BloomParameters(8192, 1);

  public static final int MIN_BITS = 64;
  public static final int MAX_BITS = 8192;
  public static final int MAX_HASHES = 32;

  /** M and k with the default categories, {@link CategoryScheme#SHARP}. */
  public BloomParameters(int bits, int hashes) {
    this(bits, hashes, CategoryScheme.SHARP);
  }

  public BloomParameters {
    if (categories == null) {
      throw new IllegalArgumentException("a category scheme is required");
    }
    String why = bitsProblem(bits);
    if (why == null) {
      why = hashesProblem(hashes);
    }
    if (why != null) {
      throw new IllegalArgumentException(why);
    }
  }

  /** What is wrong with {@code bits} as M, or null; decoders report it at the field's offset. */
  public static String bitsProblem(int bits) {
    return bits < MIN_BITS || bits > MAX_BITS
        ? "bloom bits (M) must be between " + MIN_BITS + " and " + MAX_BITS + ", got " + bits
        : null;
  }

  /** What is wrong with {@code hashes} as k, or null. */
  public static String hashesProblem(int hashes) {
    return hashes < 1 || hashes > MAX_HASHES
        ? "bloom hashes (k) must be between 1 and " + MAX_HASHES + ", got " + hashes
        : null;
  }

  /** These parameters with another category scheme. */
  public BloomParameters withCategories(CategoryScheme scheme) {
    return new BloomParameters(bits, hashes, scheme);
  }

  /** Number of 64-bit words of a filter. */
  public int words() {
    return (bits + 63) >>> 6;
  }

  /** A new all-zero filter. */
  public long[] newFilter() {
    return new long[words()];
  }
}
