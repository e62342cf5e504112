package io.bdrp.encoding.codec;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Filters;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Binary encoding of an {@link EncodedPredicate}: the set of Bloom filters a router floods as its
 * aggregate predicate. Big-endian, whatever the byte order set on the buffer.
 *
 * <pre>
 *  +----------+--------+------------+-----------+-----------------------------------+
 *  | bits u16 | k u8   | scheme u8  | count u16 | count filters, ascending          |
 *  +----------+--------+------------+-----------+-----------------------------------+
 *    M: 64..8192  1..32  categories:   0..65535
 *                        0 paper, 1 sharp
 *
 *  filter, as a list of the positions of its set bits (head = 2 x n, n >= 0):
 *  +-------------+---------------------------------------------------------------+
 *  | head varint | n gaps, Rice-coded with r = floor(log2(floor(M / n))), packed  |
 *  |             | most significant bit first, the last byte padded with 0 bits  |
 *  +-------------+---------------------------------------------------------------+
 *  gap: the first position, then each position minus the one before it minus 1
 *  (positions ascending, all below M); a gap g is q = g >> r one-bits, a zero bit,
 *  then the r low bits of g, most significant first
 *  filter, as a bitmap (head = 1):
 *  +-------------+--------------------------------------------------------------+
 *  | head varint | ceil(M/64) x u64, word 0 first; bit b is bit (b mod 64) of   |
 *  |   = 0x01    | word (b / 64)                                                |
 *  +-------------+--------------------------------------------------------------+
 *  varint: unsigned LEB128 (7 bits a byte, least significant group first, high bit = more),
 *  at most 3 bytes, no redundant trailing 0x00 group
 * </pre>
 *
 * <p>A filter of n set bits takes about 1 + n (log2(M/n) + 2) / 8 bytes as a list: with the default
 * M = 8192, 5 bytes for 2 bits and about 13 for 8, instead of 1,025 as a bitmap. Advertisements are
 * sized by the bits they set, not by M. Each filter takes the shorter of its two forms, the list
 * when both are as long.
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

  /** Bytes before the first filter: M, k, the category scheme and the count. */
  private static final int HEADER_BYTES = 6;

  private EncodedPredicateCodec() {}

  /** Exact number of bytes {@link #encode} writes. */
  public static int encodedLength(EncodedPredicate p) {
    return p.wireLength(EncodedPredicateCodec::measure);
  }

  private static int measure(EncodedPredicate p) {
    int bits = p.parameters().bits();
    long[] f = p.parameters().newFilter();
    int n = HEADER_BYTES;
    for (int i = 0; i < p.size(); i++) {
      p.filterInto(i, f);
      n += Math.min(list(f, bits, null), bitmapLength(f.length));
    }
    return n;
  }

  private static int bitmapLength(int words) {
    return 1 + words * Long.BYTES;
  }

  /** The Rice parameter of a list of n positions below M: floor(log2(floor(M / n))). */
  static int riceParameter(int bits, int n) {
    return 31 - Integer.numberOfLeadingZeros(Math.max(1, bits / Math.max(1, n)));
  }

  /**
   * A filter as the list of its positions: the head (2 x n) and the Rice-coded gaps, written to
   * {@code out} unless it is null; returns the bytes they take.
   */
  private static int list(long[] f, int bits, ByteBuffer out) {
    int n = Filters.bitCount(f);
    int bytes = varint(out, 2 * n);
    int r = riceParameter(bits, n);
    BitWriter w = out == null ? null : new BitWriter(out);
    long total = 0;
    int prev = -1;
    for (int i = 0; i < f.length; i++) {
      for (long word = f[i]; word != 0; word &= word - 1) {
        int pos = i * 64 + Long.numberOfTrailingZeros(word);
        int gap = pos - prev - 1;
        prev = pos;
        int q = gap >>> r;
        total += q + 1 + r;
        if (w != null) {
          for (int j = 0; j < q; j++) {
            w.put(1);
          }
          w.put(0);
          for (int b = r - 1; b >= 0; b--) {
            w.put((gap >>> b) & 1);
          }
        }
      }
    }
    if (w != null) {
      w.pad();
    }
    return bytes + (int) ((total + 7) >>> 3);
  }

  /** Bits into bytes, most significant bit first. */
  private static final class BitWriter {
    private final ByteBuffer out;
    private int acc;
    private int pending;

    BitWriter(ByteBuffer out) {
      this.out = out;
    }

    void put(int bit) {
      acc = acc << 1 | bit;
      if (++pending == 8) {
        out.put((byte) acc);
        acc = 0;
        pending = 0;
      }
    }

    /** Writes the last byte, its unused low bits zero. */
    void pad() {
      if (pending > 0) {
        out.put((byte) (acc << (8 - pending)));
      }
    }
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
    b.put((byte) p.parameters().categories().wireId());
    b.putShort((short) p.size());
    int bits = p.parameters().bits();
    long[] f = p.parameters().newFilter();
    for (int i = 0; i < p.size(); i++) {
      p.filterInto(i, f);
      if (list(f, bits, null) <= bitmapLength(words)) {
        list(f, bits, b);
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
    int schemeAt = r.offset();
    int schemeId = r.u8();
    CategoryScheme scheme = CategoryScheme.ofWireId(schemeId);
    if (scheme == null) {
      throw WireReader.error(schemeAt, "unknown category scheme " + schemeId);
    }
    BloomParameters params = new BloomParameters(bits, k, scheme);
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
        if (list(f, bits, null) <= bitmapLength(words)) {
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
        r.requireItems(filterAt, (n + 7) / 8, "bytes of positions", 1, 0);
        readPositions(r, i, n, bits, f);
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
   * Reads n Rice-coded gaps into {@code f} (cleared), checking that every position is below M and
   * that the padding bits are zero.
   */
  private static void readPositions(WireReader r, int i, int n, int bits, long[] f) {
    int rice = riceParameter(bits, n);
    BitReader in = new BitReader(r);
    int pos = -1;
    for (int j = 0; j < n; j++) {
      int gapAt = r.offset();
      long gap = 0;
      while (in.bit() == 1) {
        gap += 1L << rice;
        if (pos + 1 + gap >= bits) {
          throw WireReader.error(gapAt, "filter " + i + " has a position at or beyond M = " + bits);
        }
      }
      for (int b = rice - 1; b >= 0; b--) {
        gap |= (long) in.bit() << b;
      }
      pos += 1 + (int) Math.min(gap, bits);
      if (pos >= bits) {
        throw WireReader.error(gapAt, "filter " + i + " has a position at or beyond M = " + bits);
      }
      f[pos >>> 6] |= 1L << pos;
    }
    if (in.unreadBits() != 0) {
      throw WireReader.error(
          r.offset() - 1, "filter " + i + " has non-zero padding bits (not canonical)");
    }
  }

  /** Bits from bytes, most significant bit first. */
  private static final class BitReader {
    private final WireReader r;
    private int cur; // the byte being read
    private int left; // its unread bits

    BitReader(WireReader r) {
      this.r = r;
    }

    int bit() {
      if (left == 0) {
        cur = r.u8();
        left = 8;
      }
      return (cur >>> --left) & 1;
    }

    /** The unread bits of the last byte read (its padding, once every gap is read). */
    int unreadBits() {
      return cur & ((1 << left) - 1);
    }
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
              + " categories "
              + p.parameters().categories().configName()
              + ", this network uses M="
              + expected.bits()
              + " k="
              + expected.hashes()
              + " categories "
              + expected.categories().configName());
    }
    return p;
  }
}
