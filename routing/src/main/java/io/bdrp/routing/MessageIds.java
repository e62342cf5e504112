package io.bdrp.routing;

import java.security.SecureRandom;

/**
 * The message ids that one router gives the messages its hosts publish: unique per source router,
 * and unpredictable to every other router, so that no neighbour can send DATA carrying a router's
 * next ids ahead of it and have its genuine messages dropped as duplicates ({@link
 * DataPlane.Drop#DUPLICATE}).
 *
 * <p><b>How.</b> Id n is {@code E_k(router << 48 | (first + n) mod 2^48)}, where {@code E_k} is a
 * permutation of 64-bit words under a 128-bit key k: a balanced Feistel network of four rounds over
 * 32-bit halves whose round function is SipHash-1-3 of (round, half) under k, truncated to 32 bits.
 * Four Feistel rounds of a pseudo-random function make a strong pseudo-random permutation
 * (Luby-Rackoff), so ids seen on the wire tell nothing about the next ones: no stride, no counter,
 * no router number shows. A router's key is drawn once per process from {@link SecureRandom}
 * ({@link #secure}); the simulator and tests use a key from a seed ({@link #seeded}), so that their
 * runs repeat.
 *
 * <p><b>Uniqueness.</b> The pre-images of one generator are distinct (2^48 ids before the counter
 * comes round) and a permutation maps them to distinct ids: ids of one run never repeat, and
 * generators that share a key (every router of a simulation) never give the same id. Runs of one
 * router with different keys are independent permutations: two ids of two runs are equal with
 * probability 2^-64, so that, for a run of a million messages, the chance that any of them equals
 * one of the at most 65,536 broadcasts a receiver's duplicate window remembers ({@link
 * BroadcastWindow}) is below 2^-28. Carrying the counter on across restarts ({@code first}) keeps
 * the pre-images of one router distinct as well, so that a fixed key would also give ids unique
 * across its runs.
 *
 * <p><b>Cost.</b> Twenty SipHash rounds of arithmetic on longs per id, no allocation. Owned by the
 * data plane's thread.
 */
public final class MessageIds {
  private final long k0;
  private final long k1;
  private final long prefix;
  private long counter;

  private MessageIds(long k0, long k1, int router, long first) {
    if (router < 0 || router > 0xFFFF) {
      throw new IllegalArgumentException("router " + router + " outside 0..65535");
    }
    this.k0 = k0;
    this.k1 = k1;
    this.prefix = (long) router << 48;
    this.counter = first;
  }

  /**
   * The ids of {@code router} under a key drawn now from {@link SecureRandom}: what a router uses.
   *
   * @param first where the counter starts (a router's epoch times 64 keeps the pre-images of its
   *     runs apart)
   */
  public static MessageIds secure(int router, long first) {
    SecureRandom random = new SecureRandom();
    return new MessageIds(random.nextLong(), random.nextLong(), router, first);
  }

  /**
   * The ids of {@code router} under a key made from {@code seed}: repeatable, and predictable to
   * anyone who knows the seed. For the simulator and tests, never for a router on a network.
   */
  public static MessageIds seeded(long seed, int router, long first) {
    return new MessageIds(mix(seed), mix(seed ^ 0x9E37_79B9_7F4A_7C15L), router, first);
  }

  /** The next id. */
  public long next() {
    return permute(k0, k1, prefix | (counter++ & 0xFFFF_FFFF_FFFFL));
  }

  /** Ids given so far, plus the first counter value. */
  long counter() {
    return counter;
  }

  /**
   * A 64-bit value derived from this generator's key for {@code purpose}: secret when the key is,
   * repeatable when it is seeded. The duplicate window keys its table with it.
   */
  long derive(long purpose) {
    return sip13(k0, k1, 0xD0D0_0000_0000_0000L ^ purpose);
  }

  /** The keyed permutation: four Feistel rounds over the 32-bit halves of {@code x}. */
  static long permute(long k0, long k1, long x) {
    long l = x >>> 32;
    long r = x & 0xFFFF_FFFFL;
    for (long round = 0; round < 4; round++) {
      long f = sip13(k0, k1, (round << 32) | r) & 0xFFFF_FFFFL;
      long t = r;
      r = l ^ f;
      l = t;
    }
    return (l << 32) | r;
  }

  /** The inverse of {@link #permute}: for tests. */
  static long unpermute(long k0, long k1, long y) {
    long l = y >>> 32;
    long r = y & 0xFFFF_FFFFL;
    for (long round = 3; round >= 0; round--) {
      long t = l;
      l = r ^ (sip13(k0, k1, (round << 32) | t) & 0xFFFF_FFFFL);
      r = t;
    }
    return (l << 32) | r;
  }

  /** SipHash-1-3 of the one 8-byte word {@code m} under key (k0, k1). */
  static long sip13(long k0, long k1, long m) {
    long v0 = k0 ^ 0x736f_6d65_7073_6575L;
    long v1 = k1 ^ 0x646f_7261_6e64_6f6dL;
    long v2 = k0 ^ 0x6c79_6765_6e65_7261L;
    long v3 = k1 ^ 0x7465_6462_7974_6573L;
    // One compression round per word: the message, then the final word (length 8, no tail).
    v3 ^= m;
    v0 += v1;
    v1 = Long.rotateLeft(v1, 13) ^ v0;
    v0 = Long.rotateLeft(v0, 32);
    v2 += v3;
    v3 = Long.rotateLeft(v3, 16) ^ v2;
    v0 += v3;
    v3 = Long.rotateLeft(v3, 21) ^ v0;
    v2 += v1;
    v1 = Long.rotateLeft(v1, 17) ^ v2;
    v2 = Long.rotateLeft(v2, 32);
    v0 ^= m;
    long b = 8L << 56;
    v3 ^= b;
    v0 += v1;
    v1 = Long.rotateLeft(v1, 13) ^ v0;
    v0 = Long.rotateLeft(v0, 32);
    v2 += v3;
    v3 = Long.rotateLeft(v3, 16) ^ v2;
    v0 += v3;
    v3 = Long.rotateLeft(v3, 21) ^ v0;
    v2 += v1;
    v1 = Long.rotateLeft(v1, 17) ^ v2;
    v2 = Long.rotateLeft(v2, 32);
    v0 ^= b;
    v2 ^= 0xFF;
    for (int i = 0; i < 3; i++) {
      v0 += v1;
      v1 = Long.rotateLeft(v1, 13) ^ v0;
      v0 = Long.rotateLeft(v0, 32);
      v2 += v3;
      v3 = Long.rotateLeft(v3, 16) ^ v2;
      v0 += v3;
      v3 = Long.rotateLeft(v3, 21) ^ v0;
      v2 += v1;
      v1 = Long.rotateLeft(v1, 17) ^ v2;
      v2 = Long.rotateLeft(v2, 32);
    }
    return v0 ^ v1 ^ v2 ^ v3;
  }

  /** A 64-bit finaliser (murmur3's): every input bit spreads over the output. */
  static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51_afd7_ed55_8ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ce_b9fe_1a85_ec53L;
    return z ^ (z >>> 33);
  }
}
