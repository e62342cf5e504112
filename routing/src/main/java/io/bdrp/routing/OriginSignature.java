package io.bdrp.routing;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A router's signature over one of its own claims ({@link OriginAuthority#routeClaim}, {@link
 * OriginAuthority#advertisementClaim}): opaque bytes, 1 to {@value #MAX_BYTES} of them (an ECDSA
 * P-256 signature in DER takes at most 72, an Ed25519 one 64). Relays carry it unchanged.
 * Immutable.
 */
public final class OriginSignature {
  /** Most bytes of a signature (its length travels as a u8). */
  public static final int MAX_BYTES = 255;

  private final byte[] bytes;

  /**
   * @throws IllegalArgumentException if {@code bytes} is empty or longer than {@value #MAX_BYTES}
   */
  public OriginSignature(byte[] bytes) {
    if (bytes.length == 0 || bytes.length > MAX_BYTES) {
      throw new IllegalArgumentException(
          "a signature of " + bytes.length + " bytes, outside 1.." + MAX_BYTES);
    }
    this.bytes = bytes.clone();
  }

  /** A copy of the signature's bytes. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** The number of bytes. */
  public int length() {
    return bytes.length;
  }

  /** The byte at {@code i}, without copying. */
  public byte byteAt(int i) {
    return bytes[i];
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OriginSignature s && Arrays.equals(bytes, s.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "sig:" + HexFormat.of().formatHex(bytes, 0, Math.min(8, bytes.length)) + "..";
  }
}
