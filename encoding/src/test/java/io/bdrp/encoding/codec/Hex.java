package io.bdrp.encoding.codec;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/** Hex strings for byte vectors; spaces and {@code |} may separate fields for readability. */
final class Hex {
  private Hex() {}

  static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex.replaceAll("[\\s|]", ""));
  }

  static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  static ByteBuffer buffer(String hex) {
    return ByteBuffer.wrap(bytes(hex));
  }

  /** The bytes of {@code hex} with those at {@code offset} replaced by {@code replacement}. */
  static ByteBuffer patched(String hex, int offset, String replacement) {
    byte[] b = bytes(hex);
    byte[] r = bytes(replacement);
    System.arraycopy(r, 0, b, offset, r.length);
    return ByteBuffer.wrap(b);
  }

  /** The first {@code length} bytes of {@code hex}. */
  static ByteBuffer prefix(String hex, int length) {
    byte[] b = bytes(hex);
    // The bytes past the limit stay in the array: a decoder that ignored the limit would read them.
    return ByteBuffer.wrap(b, 0, length).slice();
  }
}
