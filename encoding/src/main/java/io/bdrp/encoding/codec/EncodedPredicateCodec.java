package io.bdrp.encoding.codec;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Filters;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Binary encoding of an {@link EncodedPredicate}: the set of Bloom filters a router floods as its
 * aggregate predicate. Big-endian, whatever the byte order set on the buffer.
 *
 * <pre>
 *  +----------+--------+--------------+----------------------------------------------+
 *  | bits u16 | k u8   | count u16    | count filters, ascending                     |
 *  +----------+--------+--------------+----------------------------------------------+
 *    M: 64..8192  1..32   0..65535
 *
 *  filter, as a list of the positions of its set bits (head = 2 x n):
 *  +-------------+---------------------------------------------------------------+
 *  | head varint | n gaps, varint: the first position, then each position minus   |
 *  |             | the one before it minus 1 (positions ascending, all below M)  |
 *  +-------------+---------------------------------------------------------------+
 *  filter, as a bitmap (head = 1):
 *  +-------------+--------------------------------------------------------------+
 *  | head varint | ceil(M/64) x u64, word 0 first; bit b is bit (b mod 64) of   |
 *  |   = 0x01    | word (b / 64)                                                |
 *  +-------------+--------------------------------------------------------------+
 *  varint: unsigned LEB128 (7 bits a byte, least significant group first, high bit = more),
 *  at most 3 bytes, no redundant trailing 0x00 group
 * </pre>
 *
 * <p>A filter of M = 2048 bits with the 2 to 10 bits a conjunction sets takes 5 to 21 bytes as a
 * list instead of 257 as a bitmap: advertisements are sized by the bits they set, not by M. Each
 * filter takes the shorter of its two forms, the list when both are as long.
 *
 * <p>The encoding is canonical, so equal sets have equal bytes and a decoded set re-encodes to the
 * input: filters in the set's canonical order (ascending, words compared unsigned from word 0), no
 * repeats, no bits at or beyond M, each filter in its shorter form, varints without redundant
 * bytes. The decoder requires all of that, and decoding is linear in the input. M and k travel with
 * the filters so that a router can reject filters made with other parameters than its own ({@link
 * #decode(ByteBuffer, BloomParameters)}).
 *
 * <p>Stateless and thread-safe.
 */
public final class EncodedPredicateCodec {
  /** Most filters in one encoded predicate. */
  public static final int MAX_FILTERS = 65_535;

  /** The head of a filter in bitmap form. */
  private static final int BITMAP = 1;

  private EncodedPredicateCodec() {}

  /** Exact number of bytes {@link #encode} writes. */
  public static int encodedLength(EncodedPredicate p) {
    int n = 5;
    for (int i = 0; i < p.size(); i++) {
      n += filterLength(p.filter(i), p.parameters().words());
    }
    return n;
  }

  /** The bytes of one filter in its shorter form. */
  static int filterLength(long[] f, int words) {
    return Math.min(listLength(f), bitmapLength(words));
  }

  private static int bitmapLength(int words) {
    return 1 + words * Long.BYTES;
  }

  /** The bytes of a filter as a list of positions. */
  private static int listLength(long[] f) {
    return list(f, null);
  }

  /**
   * A filter as the list of its positions: the head (2 x n) and the gaps, written to {@code out}
   * unless it is null; returns the bytes they take.
   */
  private static int list(long[] f, ByteBuffer out) {
    int n = Filters.bitCount(f);
    int bytes = varint(out, 2 * n);
    int prev = -1;
    for (int w = 0; w < f.length; w++) {
      long word = f[w];
      while (word != 0) {
        int pos = w * 64 + Long.numberOfTrailingZeros(word);
        word &= word - 1;
        bytes += varint(out, pos - prev - 1);
        prev = pos;
      }
    }
    return bytes;
  }

  /** Writes {@code v} as a varint to {@code out} unless it is null; returns its length. */
  private static int varint(ByteBuffer out, int v) {
    int n = 1;
    for (; v >= 0x80; v >>>= 7, n++) {
      if (out != null) {
        out.put((byte) (v | 0x80));
      }
    }
    if (out != null) {
      out.put((byte) v);
    }
    return n;
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
    int words = p.parameters().words();
    ByteBuffer b = out.duplicate().order(ByteOrder.BIG_ENDIAN);
    b.putShort((short) p.parameters().bits());
    b.put((byte) p.parameters().hashes());
    b.putShort((short) p.size());
    for (int i = 0; i < p.size(); i++) {
      long[] f = p.filter(i);
      if (listLength(f) <= bitmapLength(words)) {
        list(f, b);
      } else {
        varint(b, BITMAP);
        for (long w : f) {
          b.putLong(w);
        }
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
    r.requireItems(countAt, count, "filters", 1, 0);
    long[] flat = new long[count * words];
    long[] f = new long[words];
    int tail = bits & 63;
    for (int i = 0; i < count; i++) {
      int filterAt = r.offset();
      java.util.Arrays.fill(f, 0L);
      int head = r.varint(2 * bits, "filter " + i + " head");
      if (head == BITMAP) {
        r.requireItems(filterAt, words, "bitmap words", Long.BYTES, 0);
        for (int w = 0; w < words; w++) {
          f[w] = r.i64();
        }
        if (tail != 0 && (f[words - 1] >>> tail) != 0) {
          throw WireReader.error(
              filterAt, "filter " + i + " has bits set at or beyond M = " + bits);
        }
        if (listLength(f) <= bitmapLength(words)) {
          throw WireReader.error(
              filterAt,
              "filter "
                  + i
                  + " is a bitmap, but its list of positions is no longer (not canonical)");
        }
      } else if ((head & 1) != 0) {
        throw WireReader.error(
            filterAt, "filter " + i + " has an unknown form (head " + head + ")");
      } else {
        int n = head >>> 1;
        r.requireItems(filterAt, n, "positions", 1, 0);
        int pos = -1;
        for (int j = 0; j < n; j++) {
          int gapAt = r.offset();
          pos += 1 + r.varint(bits, "a position gap");
          if (pos >= bits) {
            throw WireReader.error(
                gapAt, "filter " + i + " has a position at or beyond M = " + bits);
          }
          f[pos >>> 6] |= 1L << pos;
        }
        if (r.offset() - filterAt > bitmapLength(words)) {
          throw WireReader.error(
              filterAt,
              "filter " + i + " is a list of positions longer than its bitmap (not canonical)");
        }
      }
      System.arraycopy(f, 0, flat, i * words, words);
      if (i > 0
          && java.util.Arrays.compareUnsigned(
                  flat, (i - 1) * words, i * words, flat, i * words, (i + 1) * words)
              >= 0) {
        throw WireReader.error(
            filterAt, "filter " + i + " is not greater than the one before it (order or repeat)");
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
