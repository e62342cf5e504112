package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * Decoding an encoded predicate allocates in proportion to its bytes, as {@link
 * EncodedPredicateCodec#decode(ByteBuffer)} documents: at most {@link
 * EncodedPredicateCodec#ALLOCATION_PER_BYTE} x L + {@link EncodedPredicateCodec#ALLOCATION_FIXED}
 * for L bytes, on adversarial inputs (many empty filters, many 1-bit filters, bitmap filters, the
 * largest count) and on corruptions of them. Guards against the decoder that allocated count x M/8
 * bytes (a dense filter each) after checking only one byte a filter, so that a 65 KB frame cost 64
 * MiB; and against keeping filters dense (what a decoded set holds is checked too).
 */
class EncodedPredicateAllocationTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /**
   * Bytes this thread allocates decoding {@code input}, or -1 when the JVM cannot tell: the least
   * of three decodes after a first that links the code. The decoder allocates the same each time;
   * what the JVM itself allocates on the thread now and then (seen once in CI: 22 KB during one
   * decode of 48 bytes, within the bound on every rerun of the same input) comes on top of it,
   * never instead.
   */
  static long allocatedByDecode(byte[] input) {
    if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
      return -1;
    }
    decodeOrNull(input);
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      long before = THREADS.getCurrentThreadAllocatedBytes();
      decodeOrNull(input);
      least = Math.min(least, THREADS.getCurrentThreadAllocatedBytes() - before);
    }
    return least;
  }

  private static EncodedPredicate decodeOrNull(byte[] input) {
    try {
      return EncodedPredicateCodec.decode(ByteBuffer.wrap(input));
    } catch (CodecException e) {
      return null;
    }
  }

  /** The documented bound for an input of n bytes. */
  static long bound(int n) {
    return (long) EncodedPredicateCodec.ALLOCATION_PER_BYTE * n
        + EncodedPredicateCodec.ALLOCATION_FIXED;
  }

  /** Fails unless decoding {@code input} allocates within the bound; returns the bytes. */
  static long assertWithinBound(byte[] input, String what) {
    long used = allocatedByDecode(input);
    assertTrue(
        used <= bound(input.length),
        () -> what + ": decoding " + input.length + " bytes allocated " + used + " bytes");
    return used;
  }

  private static byte[] header(int bits, int count) {
    return new byte[] {(byte) (bits >>> 8), (byte) bits, 1, 1, (byte) (count >>> 8), (byte) count};
  }

  private static byte[] concat(byte[] head, byte[] body) {
    byte[] out = Arrays.copyOf(head, head.length + body.length);
    System.arraycopy(body, 0, out, head.length, body.length);
    return out;
  }

  /** The largest count, each filter empty (only the first is valid: the rest repeat it). */
  static byte[] manyEmptyFilters(int bits) {
    return concat(header(bits, EncodedPredicateCodec.MAX_FILTERS), new byte[65_535]);
  }

  /** {@code count} distinct filters of one bit (M must be at least count). */
  static byte[] oneBitFilters(BloomParameters p, int count) {
    List<char[]> fs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      fs.add(new char[] {(char) i});
    }
    return EncodedPredicateCodec.toBytes(EncodedPredicate.ofPositions(p, fs));
  }

  /** {@code count} distinct filters of two bits, {a, a + d} for d = 1, 2, ... */
  static byte[] twoBitFilters(BloomParameters p, int count) {
    List<char[]> fs = new ArrayList<>();
    for (int d = 1; fs.size() < count; d++) {
      for (int a = 0; a + d < p.bits() && fs.size() < count; a++) {
        fs.add(new char[] {(char) a, (char) (a + d)});
      }
    }
    return EncodedPredicateCodec.toBytes(EncodedPredicate.ofPositions(p, fs));
  }

  /** {@code count} filters in bitmap form: every bit set but one. */
  static byte[] bitmapFilters(BloomParameters p, int count) {
    List<long[]> fs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long[] f = p.newFilter();
      Arrays.fill(f, -1L);
      int tail = p.bits() & 63;
      if (tail != 0) {
        f[f.length - 1] = (1L << tail) - 1;
      }
      f[i >>> 6] &= ~(1L << i);
      fs.add(f);
    }
    return EncodedPredicateCodec.toBytes(EncodedPredicate.ofFilters(p, fs));
  }

  /** Made once: the largest take a moment to encode. */
  private static List<byte[]> adversarial;

  static synchronized List<byte[]> adversarialInputs() {
    if (adversarial == null) {
      adversarial = makeAdversarialInputs();
    }
    return adversarial;
  }

  private static List<byte[]> makeAdversarialInputs() {
    BloomParameters m64 = new BloomParameters(64, 1);
    BloomParameters m8192 = BloomParameters.DEFAULT;
    return List.of(
        manyEmptyFilters(8192),
        manyEmptyFilters(64),
        concat(header(8192, 65_535), new byte[] {2, 0}), // the largest count, two bytes of body
        oneBitFilters(m64, 64),
        oneBitFilters(m8192, 8192),
        twoBitFilters(m64, 2016),
        twoBitFilters(m8192, 65_535),
        bitmapFilters(m64, 1),
        bitmapFilters(m8192, 63),
        bitmapFilters(new BloomParameters(130, 1), 100));
  }

  @Test
  void adversarialInputsAllocateWithinTheBound() {
    for (byte[] input : adversarialInputs()) {
      EncodedPredicate p = decodeOrNull(input);
      String what =
          p == null ? "rejected input" : p.size() + " filters of M = " + p.parameters().bits();
      assertWithinBound(input, what);
      if (p != null) {
        // What is kept is the positions and starts: at most 20 bytes an input byte.
        assertTrue(p.byteSize() <= 20L * input.length, what + " holds " + p.byteSize());
      }
    }
  }

  @Test
  void oneBitFiltersCostAFewBytesEach() {
    // 8,192 one-bit filters at the default M: 3 bytes each on the wire, 6 held (1 KiB before).
    byte[] input = oneBitFilters(BloomParameters.DEFAULT, 8192);
    EncodedPredicate p = decodeOrNull(input);
    assertEquals(8192, p.size());
    assertEquals(2 * 8192 + 4 * 8193, p.byteSize());
    long used = assertWithinBound(input, "one-bit filters");
    assertTrue(used < 0 || used <= 12L * 8192 + EncodedPredicateCodec.ALLOCATION_FIXED, "" + used);
  }

  @Property(tries = 300)
  void corruptionsOfAdversarialInputsAllocateWithinTheBound(@ForAll long seed) {
    Random r = new Random(seed);
    List<byte[]> inputs = adversarialInputs();
    byte[] b = inputs.get(r.nextInt(inputs.size())).clone();
    switch (r.nextInt(4)) {
      case 0 -> b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
      case 1 -> b[4 + r.nextInt(2)] = (byte) r.nextInt(256); // the count
      case 2 -> b = Arrays.copyOf(b, r.nextInt(b.length + 1));
      default -> b[6 + r.nextInt(Math.max(1, b.length - 6))] = (byte) (r.nextBoolean() ? 1 : 0xff);
    }
    assertWithinBound(b, "corrupted input");
  }
}
