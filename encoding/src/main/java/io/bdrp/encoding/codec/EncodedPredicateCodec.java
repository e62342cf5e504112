package io.bdrp.encoding.codec;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Binary encoding of an {@link EncodedPredicate}: the set of Bloom filters a router floods as its
 * aggregate predicate. Big-endian, whatever the byte order set on the buffer.
 *
 * <pre>
 *  +----------+--------+--------------+--------------------------------------------+
 *  | bits u16 | k u8   | count u16    | count filters, each ceil(bits/64) x u64    |
 *  +----------+--------+--------------+--------------------------------------------+
 *    M: 64..8192  1..32   0..65535       word 0 first; bit b of the filter is bit
 *                                        (b mod 64) of word (b / 64)
 * </pre>
 *
 * <p>Filters are written in the set's canonical order (ascending, words compared unsigned from word
 * 0), and the decoder requires that order, with no repeats and no bits at or beyond M, so that
 * decoding is linear in the input. M and k travel with the filters so that a router can reject
 * filters made with other parameters than its own ({@link #decode(ByteBuffer, BloomParameters)}).
 *
 * <p>Stateless and thread-safe.
 */
public final class EncodedPredicateCodec {
  /** Most filters in one encoded predicate. */
  public static final int MAX_FILTERS = 65_535;

  private EncodedPredicateCodec() {}

  /** Exact number of bytes {@link #encode} writes. */
  public static int encodedLength(EncodedPredicate p) {
    return 5 + p.byteSize();
  }

  /**
   * Writes the encoding at the buffer's position and advances it.
   *
   * @throws java.nio.BufferOverflowException if it does not fit; nothing is written then
   * @throws IllegalArgumentException if the set has more than {@link #MAX_FILTERS} filters
   */
  public static void encode(EncodedPredicate p, ByteBuffer out) {
    if (p.size() > MAX_FILTERS) {
      throw new IllegalArgumentException(
          "encoded predicate has " + p.size() + " filters, more than " + MAX_FILTERS);
    }
    if (out.remaining() < encodedLength(p)) {
      throw new java.nio.BufferOverflowException();
    }
    ByteBuffer b = out.duplicate().order(ByteOrder.BIG_ENDIAN);
    b.putShort((short) p.parameters().bits());
    b.put((byte) p.parameters().hashes());
    b.putShort((short) p.size());
    for (int i = 0; i < p.size(); i++) {
      for (long w : p.filter(i)) {
        b.putLong(w);
      }
    }
    out.position(b.position());
  }

  /** The encoding as a new array. */
  public static byte[] toBytes(EncodedPredicate p) {
    ByteBuffer b = ByteBuffer.allocate(encodedLength(p));
    encode(p, b);
    return b.array();
  }

  /** Reads one encoded predicate at the buffer's position; advances it only on success. */
  public static EncodedPredicate decode(ByteBuffer in) {
    WireReader r = new WireReader(in);
    int bitsAt = r.offset();
    int bits = r.u16();
    String why = BloomParameters.bitsProblem(bits);
    if (why != null) {
      throw WireReader.error(bitsAt, why);
    }
    int kAt = r.offset();
    int k = r.u8();
    why = BloomParameters.hashesProblem(k);
    if (why != null) {
      throw WireReader.error(kAt, why);
    }
    BloomParameters params = new BloomParameters(bits, k);
    int words = params.words();
    int countAt = r.offset();
    int count = r.u16();
    r.requireItems(countAt, count, "filters", words * Long.BYTES, 0);
    long[] flat = new long[count * words];
    int tail = bits & 63;
    for (int f = 0; f < count; f++) {
      int filterAt = r.offset();
      for (int w = 0; w < words; w++) {
        flat[f * words + w] = r.i64();
      }
      if (tail != 0 && (flat[f * words + words - 1] >>> tail) != 0) {
        throw WireReader.error(filterAt, "filter " + f + " has bits set at or beyond M = " + bits);
      }
      if (f > 0
          && java.util.Arrays.compareUnsigned(
                  flat, (f - 1) * words, f * words, flat, f * words, (f + 1) * words)
              >= 0) {
        throw WireReader.error(
            filterAt, "filter " + f + " is not greater than the one before it (order or repeat)");
      }
    }
    EncodedPredicate p = EncodedPredicate.ofSortedFilters(params, flat);
    in.position(r.position());
    return p;
  }

  /**
   * As {@link #decode(ByteBuffer)}, and fails unless the filters were made with {@code expected}:
   * filters of other parameters cannot be matched against this router's messages.
   */
  public static EncodedPredicate decode(ByteBuffer in, BloomParameters expected) {
    int start = in.position();
    EncodedPredicate p = decode(in);
    if (!p.parameters().equals(expected)) {
      in.position(start);
      throw new CodecException(
          0,
          "filters use M="
              + p.parameters().bits()
              + " k="
              + p.parameters().hashes()
              + ", this network uses M="
              + expected.bits()
              + " k="
              + expected.hashes());
    }
    return p;
  }
}
