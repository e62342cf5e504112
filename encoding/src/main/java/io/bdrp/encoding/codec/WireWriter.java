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

  /** Writes a name field; the model guarantees 1 to 255 bytes of UTF-8. */
  static void putName(ByteBuffer out, String name) {
    out.put((byte) Strings.utf8Length(name));
    putUtf8(out, name);
  }

  /** Writes a value without its type tag. */
  static void putValue(ByteBuffer out, Value v) {
    switch (v.type()) {
      case STRING -> {
        String s = v.asString();
        out.putShort((short) Strings.utf8Length(s));
        putUtf8(out, s);
      }
      // rawBits() is the long itself, the IEEE-754 bits of the double, or 0/1.
      case INTEGER, DOUBLE -> out.putLong(v.rawBits());
      case BOOLEAN -> out.put((byte) v.rawBits());
    }
  }

  /**
   * Writes the UTF-8 bytes of a well-formed string (the model rejects unpaired surrogates), without
   * allocating an intermediate array.
   */
  static void putUtf8(ByteBuffer out, String s) {
    for (int i = 0; i < s.length(); i++) {
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
  }
}
