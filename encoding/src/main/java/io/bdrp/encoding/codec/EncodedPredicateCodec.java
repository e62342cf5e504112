package io.bdrp.encoding.codec;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedPredicate;
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
 * bytes. The decoder requires all of that, decoding is linear in the input, and what it allocates
 * is bounded by the input's length ({@link #decode(ByteBuffer)}). M and k travel with the filters
 * so that a router can reject filters made with other parameters than its own ({@link
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
    int bitmap = bitmapLength(p.parameters().words());
    int n = HEADER_BYTES;
    for (int i = 0; i < p.size(); i++) {
      n += Math.min(listLength(p, i, bits), bitmap);
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

  /** Bytes filter i of {@code p} takes as a list of positions: its head and its Rice code. */
  private static int listLength(EncodedPredicate p, int i, int bits) {
    int n = p.bitCount(i);
    int r = riceParameter(bits, n);
    long total = (long) n * (1 + r);
    int prev = -1;
    for (int j = 0; j < n; j++) {
      int pos = p.position(i, j);
      total += (pos - prev - 1) >>> r;
      prev = pos;
    }
    return varint(null, 2 * n) + (int) ((total + 7) >>> 3);
  }

  /** As {@link #listLength(EncodedPredicate, int, int)} for positions {@code f[0 .. n)}. */
  private static int listLength(char[] f, int n, int bits) {
    int r = riceParameter(bits, n);
    long total = (long) n * (1 + r);
    int prev = -1;
    for (int j = 0; j < n; j++) {
      total += (f[j] - prev - 1) >>> r;
      prev = f[j];
    }
    return varint(null, 2 * n) + (int) ((total + 7) >>> 3);
  }

  /**
   * Writes filter i of {@code p} as the list of its positions: the head (2 x n), the gaps. The bits
   * gather in a word and leave it a byte at a time: a gap's unary part in runs of up to 32 ones,
   * its zero and low bits together (r is at most 13), so a filter costs a few operations per byte
   * written rather than per bit.
   */
  private static void writeList(EncodedPredicate p, int i, int bits, ByteBuffer out) {
    int n = p.bitCount(i);
    varint(out, 2 * n);
    int r = riceParameter(bits, n);
    int low = (1 << r) - 1;
    long acc = 0; // the last `pending` bits not yet written, in its low bits
    int pending = 0; // below 8 between steps
    int prev = -1;
    for (int j = 0; j < n; j++) {
      int pos = p.position(i, j);
      int gap = pos - prev - 1;
      prev = pos;
      for (int q = gap >>> r; q > 0; ) {
        int run = Math.min(q, 32);
        acc = acc << run | ((1L << run) - 1);
        pending += run;
        q -= run;
        for (; pending >= 8; pending -= 8) {
          out.put((byte) (acc >>> (pending - 8)));
        }
      }
      acc = acc << (1 + r) | (gap & low); // the zero, then the r low bits
      pending += 1 + r;
      for (; pending >= 8; pending -= 8) {
        out.put((byte) (acc >>> (pending - 8)));
      }
      acc &= (1L << pending) - 1;
    }
    if (pending > 0) { // the last byte, its unused low bits zero
      out.put((byte) (acc << (8 - pending)));
    }
  }

  /** Writes filter i of {@code p} as a bitmap, word by word from its positions. */
  private static void writeBitmap(EncodedPredicate p, int i, int words, ByteBuffer out) {
    varint(out, BITMAP);
    int j = 0;
    int n = p.bitCount(i);
    for (int w = 0; w < words; w++) {
      long word = 0;
      for (int pos; j < n && (pos = p.position(i, j)) >>> 6 == w; j++) {
        word |= 1L << pos;
      }
      out.putLong(word);
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
   * Writes the encoding at the buffer's position and advances it. Works on the filters' positions;
   * no filter is made dense.
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
    for (int i = 0; i < p.size(); i++) {
      if (listLength(p, i, bits) <= bitmapLength(words)) {
        writeList(p, i, bits, b);
      } else {
        writeBitmap(p, i, words, b);
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

  /**
   * Reads one encoded predicate at the buffer's position; advances it only on success.
   *
   * <p><b>Allocation is bounded by the input.</b> Decoding L bytes allocates at most {@value
   * #ALLOCATION_PER_BYTE} x L + {@value #ALLOCATION_FIXED} bytes, whatever the fields claim and
   * whether the decode succeeds or fails: nothing is allocated for a count or a length before the
   * bytes it needs are known to be there, and no filter is made dense. The filters are read twice:
   * once to check everything and count their positions, then into arrays of exactly that size. What
   * is kept is 2 bytes a set bit and 4 a filter ({@link EncodedPredicate#byteSize}); a set bit
   * takes at least one bit of input (a Rice-coded gap or a bitmap bit) and a filter at least one
   * byte, so that is at most 20 x L (16 x L for filters in bitmap form, about 2 x L for the usual
   * filters of a few bits). The rest is two scratch lists of positions, each grown only when a
   * filter needs more room than it has, to what that filter needs (at most 16 x L over a decode),
   * and the reader and an exception: under 3 KiB. {@code EncodedPredicateAllocationTest} and the
   * {@code encodedPredicateAllocation} fuzz target check the bound.
   */
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
    int countAt = r.offset();
    int count = r.u16();
    r.requireItems(countAt, count, "filters", 1, 0);
    int filtersAt = r.position();
    // First pass: every check, and the number of positions.
    Scratch s = new Scratch();
    BitReader br = new BitReader(r);
    long total = 0;
    for (int i = 0; i < count; i++) {
      int filterAt = r.offset();
      int n = readFilter(r, br, i, params, s);
      if (i > 0 && EncodedPredicate.compare(s.prev, 0, s.prevCount, s.cur, 0, n) >= 0) {
        throw WireReader.error(
            filterAt, "filter " + i + " is not greater than the one before it (order or repeat)");
      }
      total += n;
      s.swap(n);
    }
    int end = r.position();
    // Second pass: the same bytes, known good, into arrays of the exact size.
    ByteBuffer again = in.duplicate();
    again.position(filtersAt);
    WireReader r2 = new WireReader(again);
    BitReader br2 = new BitReader(r2);
    EncodedPredicate.Builder b = new EncodedPredicate.Builder(params, count, (int) total);
    for (int i = 0; i < count; i++) {
      int n = readFilter(r2, br2, i, params, s);
      if (!b.append(s.cur, 0, n)) {
        throw new IllegalStateException("filter " + i + " out of order on the second pass");
      }
    }
    EncodedPredicate p = b.build();
    in.position(end);
    return p;
  }

  /** Most bytes a decode allocates per input byte (see {@link #decode(ByteBuffer)}). */
  public static final int ALLOCATION_PER_BYTE = 36;

  /** Bytes a decode may allocate whatever the input's length (see {@link #decode(ByteBuffer)}). */
  public static final int ALLOCATION_FIXED = 16 * 1024;

  /**
   * The positions of the filter being read ({@code cur}) and of the one before it ({@code prev}),
   * for the order check. Each array grows to exactly what one filter needs, when a filter needs
   * more than it has: a filter's positions are bounded by its bytes before it is read.
   */
  private static final class Scratch {
    char[] cur = new char[16];
    char[] prev = new char[16];
    int prevCount;

    /** Makes room for n positions in {@code cur}. */
    void ensure(int n) {
      if (cur.length < n) {
        cur = new char[n];
      }
    }

    /** The filter just read, n positions, becomes the one before the next. */
    void swap(int n) {
      char[] t = prev;
      prev = cur;
      cur = t;
      prevCount = n;
    }
  }

  /**
   * Reads filter i into {@code s.cur}, checking its form, its bounds and that it is in its shorter
   * form; returns its number of positions.
   */
  private static int readFilter(
      WireReader r, BitReader br, int i, BloomParameters params, Scratch s) {
    int bits = params.bits();
    int words = params.words();
    int filterAt = r.offset();
    int head = r.varint(2 * bits, "filter ", i, " head");
    if (head == BITMAP) {
      r.requireItems(filterAt, words, "bitmap words", Long.BYTES, 0);
      s.ensure(bits);
      char[] f = s.cur;
      int n = 0;
      int tail = bits & 63;
      for (int w = 0; w < words; w++) {
        long word = r.i64();
        if (w == words - 1 && tail != 0 && (word >>> tail) != 0) {
          throw WireReader.error(
              filterAt, "filter " + i + " has bits set at or beyond M = " + bits);
        }
        for (; word != 0; word &= word - 1) {
          f[n++] = (char) (w * 64 + Long.numberOfTrailingZeros(word));
        }
      }
      if (listLength(f, n, bits) <= bitmapLength(words)) {
        throw WireReader.error(
            filterAt,
            "filter " + i + " is a bitmap, but its list of positions is no longer (not canonical)");
      }
      return n;
    }
    if ((head & 1) != 0) {
      throw WireReader.error(filterAt, "filter " + i + " has an unknown form (head " + head + ")");
    }
    int n = head >>> 1;
    r.requireItems(filterAt, (n + 7) / 8, "bytes of positions", 1, 0);
    s.ensure(n);
    readPositions(r, br, i, n, bits, s.cur);
    if (r.offset() - filterAt > bitmapLength(words)) {
      throw WireReader.error(
          filterAt,
          "filter " + i + " is a list of positions longer than its bitmap (not canonical)");
    }
    return n;
  }

  /**
   * Reads n Rice-coded gaps as positions into {@code f[0 .. n)}, checking that every position is
   * below M and that the padding bits are zero.
   */
  private static void readPositions(WireReader r, BitReader in, int i, int n, int bits, char[] f) {
    int rice = riceParameter(bits, n);
    in.reset();
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
      f[j] = (char) pos;
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

    /** Starts on a byte boundary, as every filter's positions do. */
    void reset() {
      cur = 0;
      left = 0;
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
