package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * SipHash-2-4, the keyed 64-bit MAC that authenticates every DATA datagram of a UDP link (a
 * router's JVM and its kernel fast path compute the same function: see docs/security.md). Key words
 * and message words are read little-endian, as in the function's definition; the result is written
 * little-endian where it travels. Stateless; no allocation.
 */
public final class SipHash {
  private SipHash() {}

  /** The key's first word: bytes 0..7 of a 16-byte key, little-endian. */
  public static long k0(byte[] key) {
    return le(key, 0);
  }

  /** The key's second word: bytes 8..15 of a 16-byte key, little-endian. */
  public static long k1(byte[] key) {
    return le(key, 8);
  }

  /** SipHash-2-4 of {@code len} bytes of {@code b} from {@code off}. */
  public static long hash(long k0, long k1, byte[] b, int off, int len) {
    return hash(k0, k1, Unpooled.wrappedBuffer(b), off, len);
  }

  /** SipHash-2-4 of {@code len} bytes of {@code b} from index {@code off} (indices unchanged). */
  public static long hash(long k0, long k1, ByteBuf b, int off, int len) {
    long v0 = k0 ^ 0x736f6d6570736575L;
    long v1 = k1 ^ 0x646f72616e646f6dL;
    long v2 = k0 ^ 0x6c7967656e657261L;
    long v3 = k1 ^ 0x7465646279746573L;
    int words = len >>> 3;
    long last = ((long) len) << 56; // the last block: the length, then the bytes after the words
    for (int i = 0; i < (len & 7); i++) {
      last |= (b.getByte(off + 8 * words + i) & 0xffL) << (8 * i);
    }
    // Each word, then the last block, two rounds each; then four rounds of finalization (over
    // nothing, with v2 marked).
    for (int w = 0; w <= words + 1; w++) {
      long m = w < words ? b.getLongLE(off + 8 * w) : w == words ? last : 0;
      int rounds = 2;
      if (w > words) {
        v2 ^= 0xff;
        rounds = 4;
      }
      v3 ^= m;
      for (int r = 0; r < rounds; r++) {
        v0 += v1;
        v1 = Long.rotateLeft(v1, 13);
        v1 ^= v0;
        v0 = Long.rotateLeft(v0, 32);
        v2 += v3;
        v3 = Long.rotateLeft(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = Long.rotateLeft(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = Long.rotateLeft(v1, 17);
        v1 ^= v2;
        v2 = Long.rotateLeft(v2, 32);
      }
      v0 ^= m;
    }
    return v0 ^ v1 ^ v2 ^ v3;
  }

  private static long le(byte[] b, int i) {
    long v = 0;
    for (int j = 7; j >= 0; j--) {
      v = (v << 8) | (b[i + j] & 0xffL);
    }
    return v;
  }
}
