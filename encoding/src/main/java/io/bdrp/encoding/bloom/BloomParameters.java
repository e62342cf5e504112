package io.bdrp.encoding.bloom;

/**
 * Width and hash count of the Bloom filters that encode messages and predicates. Every router of a
 * network must use the same parameters: a filter only means something next to filters made with the
 * same M and k.
 *
 * <p>Defaults ({@link #DEFAULT}): M = 2048 bits, k = 2. See {@code docs/encoding.md} for the
 * measured false-positive rates and matching speed that motivate them.
 *
 * @param bits M, the number of bits of a filter, 64 to 8192
 * @param hashes k, the number of bit positions set per category, 1 to 32
 */
public record BloomParameters(int bits, int hashes) {
  /** The parameters every component uses unless configured otherwise. */
  public static final BloomParameters DEFAULT = new BloomParameters(2048, 2);

  public static final int MIN_BITS = 64;
  public static final int MAX_BITS = 8192;
  public static final int MAX_HASHES = 32;

  public BloomParameters {
    if (bits < MIN_BITS || bits > MAX_BITS) {
      throw new IllegalArgumentException(
          "bloom bits (M) must be between " + MIN_BITS + " and " + MAX_BITS + ", got " + bits);
    }
    if (hashes < 1 || hashes > MAX_HASHES) {
      throw new IllegalArgumentException(
          "bloom hashes (k) must be between 1 and " + MAX_HASHES + ", got " + hashes);
    }
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
