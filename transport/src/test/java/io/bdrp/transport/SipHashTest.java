package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class SipHashTest {
  private static final byte[] KEY = bytes(16);

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  /** The function's published test vectors: key 00..0f, message 00..(n-1). */
  @Test
  void referenceVectors() {
    long[][] vectors = {
      {0, 0x726fdb47dd0e0e31L},
      {8, 0x93f5f5799a932462L},
      {15, 0xa129ca6149be45e5L},
      {63, 0x958a324ceb064572L}
    };
    long k0 = SipHash.k0(KEY);
    long k1 = SipHash.k1(KEY);
    for (long[] v : vectors) {
      int n = (int) v[0];
      assertEquals(v[1], SipHash.hash(k0, k1, bytes(n), 0, n), "array, " + n + " bytes");
      byte[] padded = new byte[n + 5];
      System.arraycopy(bytes(n), 0, padded, 3, n);
      assertEquals(
          v[1],
          SipHash.hash(k0, k1, Unpooled.wrappedBuffer(padded), 3, n),
          "buffer at an offset, " + n + " bytes");
    }
  }

  @Test
  void everyLengthAgreesBetweenArrayAndBuffer() {
    byte[] b = bytes(200);
    for (int n = 0; n <= 200; n++) {
      assertEquals(
          SipHash.hash(7, 9, b, 0, n), SipHash.hash(7, 9, Unpooled.wrappedBuffer(b), 0, n), "" + n);
    }
  }
}
