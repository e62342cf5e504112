package io.bdrp.encoding.codec;

import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bounds-checked big-endian reader over the bytes between a buffer's position and its limit, shared
 * by the decoders. Every read first checks that the bytes are there and throws {@link
 * CodecException} otherwise, so no read ever goes past the limit; every length is checked against
 * its bound and against the remaining bytes before anything is allocated for it.
 *
 * <p>One instance serves one decode call on one thread. It reads through a private duplicate of the
 * caller's buffer, so the caller's position, limit and byte order are never touched; the decoder
 * moves the caller's position only once the whole value has decoded. {@link MessageCodec.Decoder}
 * keeps one instance for many decodes, one after another, and reads its big-endian input in place
 * ({@link #readInPlace}).
 */
final class WireReader {
  private ByteBuffer buf;
  private int base;
  private int limit;
  private int pos;

  /** Created on the first string; strict: malformed input is reported, never replaced. */
  private CharsetDecoder utf8;

  /** Reused for every string of one decode call; grown as needed, never past the input size. */
  private CharBuffer chars;

  private byte[] ascii;

  WireReader(ByteBuffer in) {
    this.buf = in.duplicate().order(ByteOrder.BIG_ENDIAN);
    this.base = in.position();
    this.limit = in.limit();
    this.pos = base;
  }

  /**
   * A reader for {@link #readInPlace}, which keeps its scratch state from one input to the next.
   */
  WireReader() {}

  /**
   * Reads the big-endian {@code in} itself from its position, not a duplicate: {@link #window}
   * moves its position and limit, which the caller sets again when the decode ends, whether it
   * succeeds ({@link #position()}) or fails ({@link #start()} and {@link #end()}).
   */
  void readInPlace(ByteBuffer in) {
    this.buf = in;
    this.base = in.position();
    this.limit = in.limit();
    this.pos = base;
  }

  /** Absolute buffer index of the first byte. */
  int start() {
    return base;
  }

  /** Absolute buffer index after the last byte. */
  int end() {
    return limit;
  }

  /** Offset of the next byte, from the start of the encoding. */
  int offset() {
    return pos - base;
  }

  /** Absolute buffer index of the next byte (for the caller's new position). */
  int position() {
    return pos;
  }

  int remaining() {
    return limit - pos;
  }

  static CodecException error(int offset, String detail) {
    return new CodecException(offset, detail);
  }

  /** Fails unless {@code n} more bytes are there. */
  void require(long n) {
    if (n > remaining()) {
      throw error(
          offset(),
          "truncated: need " + n + (n == 1 ? " byte, " : " bytes, ") + remaining() + " remain");
    }
  }

  /**
   * Fails unless {@code count} items of at least {@code minBytesEach} bytes (plus {@code trailer}
   * bytes after them) can fit in what remains. Called before a loop over the items, so that a large
   * count in a short input fails at once.
   */
  void requireItems(int at, long count, String items, int minBytesEach, int trailer) {
    long need = count * minBytesEach + trailer;
    if (need > remaining()) {
      throw error(
          at,
          "truncated: "
              + count
              + " "
              + items
              + " need at least "
              + need
              + " bytes, "
              + remaining()
              + " remain");
    }
  }

  /** Fails if a count or length read at {@code at} is over its limit. */
  static void checkLimit(int at, String what, long value, long max) {
    if (value > max) {
      throw error(at, what + " " + value + " exceeds the limit of " + max);
    }
  }

  /**
   * An unsigned LEB128 varint of at most 3 bytes and at most {@code max} (below 2^21); a redundant
   * trailing zero group is refused, so every value has one encoding.
   */
  int varint(int max, String what) {
    return varint(max, what, -1, "");
  }

  /**
   * As {@link #varint(int, String)} for a field named {@code prefix + index + suffix} (or {@code
   * prefix} alone when index is negative); the name is built only for an error, so that reading a
   * field of every item of a long list allocates nothing.
   */
  int varint(int max, String prefix, int index, String suffix) {
    int at = offset();
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      if (shift == 21) {
        throw error(at, name(prefix, index, suffix) + ": varint longer than 3 bytes");
      }
      int b = u8();
      v |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) {
          throw error(
              at,
              name(prefix, index, suffix) + ": varint with a redundant zero byte (not canonical)");
        }
        break;
      }
    }
    if (v > max) {
      throw error(at, name(prefix, index, suffix) + " " + v + " exceeds " + max);
    }
    return v;
  }

  private static String name(String prefix, int index, String suffix) {
    return index < 0 ? prefix : prefix + index + suffix;
  }

  int u8() {
    require(1);
    return buf.get(pos++) & 0xFF;
  }

  int u16() {
    require(2);
    int v = buf.getShort(pos) & 0xFFFF;
    pos += 2;
    return v;
  }

  long u32() {
    require(4);
    long v = buf.getInt(pos) & 0xFFFF_FFFFL;
    pos += 4;
    return v;
  }

  long i64() {
    require(8);
    long v = buf.getLong(pos);
    pos += 8;
    return v;
  }

  /**
   * The reader's buffer with its position and limit around the next {@code n} bytes, to be copied
   * out at once and then passed by with {@link #skipWindow}; {@code n} is checked. No view made.
   */
  ByteBuffer window(int n) {
    require(n);
    return buf.limit(pos + n).position(pos);
  }

  /** Passes the {@code n} bytes of the last {@link #window} and gives the buffer its limit back. */
  void skipWindow(int n) {
    buf.limit(limit);
    pos += n;
  }

  /** Reads {@code n} raw bytes; {@code n} must have been checked against its limit. */
  byte[] bytes(int n) {
    require(n);
    byte[] out = new byte[n];
    buf.get(pos, out);
    pos += n;
    return out;
  }

  /**
   * Reads {@code n} bytes of strict UTF-8: overlong forms, lone continuation bytes, encoded
   * surrogates, code points above U+10FFFF and sequences cut short are errors at the offset of the
   * first bad byte.
   */
  String utf8(int n, String what) {
    require(n);
    // Most names and values are ASCII, which is valid UTF-8 as it stands: copy it straight.
    if (ascii == null || ascii.length < n) {
      ascii = new byte[Math.max(n, 64)];
    }
    buf.get(pos, ascii, 0, n);
    int high = 0;
    for (int i = 0; i < n; i++) {
      high |= ascii[i];
    }
    if (high >= 0) {
      pos += n;
      return new String(ascii, 0, n, StandardCharsets.ISO_8859_1);
    }
    if (utf8 == null) {
      utf8 =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT);
    }
    // UTF-8 never yields more UTF-16 units than it has bytes, and n <= remaining().
    if (chars == null || chars.capacity() < n) {
      chars = CharBuffer.allocate(Math.max(n, 16));
    }
    chars.clear();
    utf8.reset();
    buf.limit(pos + n).position(pos);
    CoderResult r = utf8.decode(buf, chars, true);
    if (!r.isError()) {
      r = utf8.flush(chars);
    }
    int bad = buf.position() - base;
    buf.limit(limit);
    if (r.isError()) {
      throw error(bad, "malformed UTF-8 in " + what);
    }
    pos += n;
    return chars.flip().toString();
  }

  /** Reads an attribute name: u8 length (1 to {@link Limits#MAX_NAME_BYTES}) and UTF-8 bytes. */
  String name() {
    int at = offset();
    int n = u8();
    if (n == 0) {
      throw error(at, "attribute name length is 0");
    }
    checkLimit(at, "attribute name length", n, Limits.MAX_NAME_BYTES);
    require(n);
    if (ascii == null || ascii.length < n) {
      ascii = new byte[Math.max(n, 64)];
    }
    buf.get(pos, ascii, 0, n);
    String known = NameCache.get(ascii, n);
    if (known != null) {
      pos += n;
      return known;
    }
    String name = utf8(n, "attribute name");
    NameCache.put(ascii, n, name);
    return name;
  }

  /**
   * Whether the next attribute name is {@code utf8}, byte for byte; if so, passes it, and if not
   * (or too few bytes remain to tell) moves nothing. Compared where it lies: no copy, no string.
   */
  boolean nameIs(byte[] utf8) {
    int n = utf8.length;
    if (remaining() < 1 + n || (buf.get(pos) & 0xFF) != n) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      if (buf.get(pos + 1 + i) != utf8[i]) {
        return false;
      }
    }
    pos += 1 + n;
    return true;
  }

  /** Reads a type tag. */
  ValueType typeTag() {
    int at = offset();
    int tag = u8();
    ValueType t = ValueType.fromWireTag((byte) tag);
    if (t == null) {
      throw error(at, "unknown type tag " + tag);
    }
    return t;
  }

  /** Reads a value of a known type. */
  Value value(ValueType type) {
    int at = offset();
    return switch (type) {
      case STRING -> {
        int n = u16();
        checkLimit(at, "string length", n, Limits.MAX_STRING_BYTES);
        yield Value.of(utf8(n, "string value"));
      }
      case INTEGER -> Value.of(i64());
      case DOUBLE -> {
        double d = Double.longBitsToDouble(i64());
        if (!Double.isFinite(d)) {
          throw error(at, "double is not finite: " + d);
        }
        yield Value.of(d);
      }
      case BOOLEAN -> {
        int b = u8();
        if (b > 1) {
          throw error(at, "boolean byte is " + b + ", must be 0 or 1");
        }
        yield Value.of(b == 1);
      }
    };
  }
}
