package io.bdrp.encoding.codec;

/**
 * Thrown by a decoder when its input is not a valid encoding: truncated, over a {@link
 * io.bdrp.encoding.Limits limit}, or naming something the model does not allow (an unknown type
 * tag, malformed UTF-8, a non-finite double, a duplicate name, ...).
 *
 * <p>{@link #offset()} is the byte offset of the offending field, counted from the position at
 * which decoding started (offset 0 is the first byte of the encoding, wherever it sits in the
 * buffer). The message reads {@code offset 17: <what is wrong>}; {@link #detail()} is the part
 * after the offset, for protocols that carry the offset in a field of their own.
 */
public final class CodecException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int offset;
  private final String detail;

  /**
   * @param offset byte offset of the bad field, from the start of the encoding
   * @param detail what is wrong, without the offset (for example {@code unknown type tag 9})
   */
  public CodecException(int offset, String detail) {
    super("offset " + offset + ": " + detail);
    this.offset = offset;
    this.detail = detail;
  }

  /** Byte offset of the bad field, from the start of the encoding. */
  public int offset() {
    return offset;
  }

  /** What is wrong, without the {@code offset N: } prefix. */
  public String detail() {
    return detail;
  }
}
