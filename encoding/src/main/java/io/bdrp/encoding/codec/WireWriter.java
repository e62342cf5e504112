package io.bdrp.encoding.codec;

import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import java.nio.ByteBuffer;

/**
 * Writing helpers shared by the encoders. The buffer passed in must be big-endian and have room for
 * what is written (the encoders check the total length first). Stateless.
 */
final class WireWriter {
  private WireWriter() {}

  /** Bytes of a name field: u8 length and the UTF-8 bytes. */
  static int nameLength(String name) {
    return 1 + Strings.utf8Length(name);
  }

  /** Bytes of a value, not counting its type tag. */
  static int valueLength(Value v) {
    return switch (v.type()) {
      case STRING -> 2 + Strings.utf8Length(v.asString());
      case INTEGER, DOUBLE -> 8;
      case BOOLEAN -> 1;
    };
  }

  /**
   * Writes a name field; the model guarantees 1 to 255 bytes of UTF-8. The length byte is written
   * after the name, from the bytes it took, so the name is measured only once per encoding (by the
   * encoder's length).
   */
  static void putName(ByteBuffer out, String name) {
    int at = out.position();
    out.position(at + 1);
    out.put(at, (byte) putUtf8(out, name));
  }

  /** Writes a value without its type tag. */
  static void putValue(ByteBuffer out, Value v) {
    switch (v.type()) {
      case STRING -> {
        int at = out.position();
        out.position(at + 2);
        out.putShort(at, (short) putUtf8(out, v.asString()));
      }
      // rawBits() is the long itself, the IEEE-754 bits of the double, or 0/1.
      case INTEGER, DOUBLE -> out.putLong(v.rawBits());
      case BOOLEAN -> out.put((byte) v.rawBits());
    }
  }

  /**
   * Writes the UTF-8 bytes of a well-formed string (the model rejects unpaired surrogates), without
   * allocating an intermediate array, and returns how many it wrote. Into an array with room for
   * the whole string, its ASCII prefix (most names and values are ASCII) is stored straight.
   */
  static int putUtf8(ByteBuffer out, String s) {
    int start = out.position();
    int length = s.length();
    int i = 0;
    if (out.hasArray() && out.remaining() >= length) {
      // Never past the limit: an ASCII prefix has at most length bytes.
      byte[] a = out.array();
      int p = out.arrayOffset() + start;
      for (char c; i < length && (c = s.charAt(i)) < 0x80; i++) {
        a[p + i] = (byte) c;
      }
      out.position(start + i);
    }
    for (; i < length; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        out.put((byte) c);
      } else if (c < 0x800) {
        out.put((byte) (0xC0 | c >> 6));
        out.put((byte) (0x80 | c & 0x3F));
      } else if (Character.isHighSurrogate(c)) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        out.put((byte) (0xF0 | cp >> 18));
        out.put((byte) (0x80 | cp >> 12 & 0x3F));
        out.put((byte) (0x80 | cp >> 6 & 0x3F));
        out.put((byte) (0x80 | cp & 0x3F));
      } else {
        out.put((byte) (0xE0 | c >> 12));
        out.put((byte) (0x80 | c >> 6 & 0x3F));
        out.put((byte) (0x80 | c & 0x3F));
      }
    }
    return out.position() - start;
  }
}
