package io.bdrp.transport;

import io.bdrp.encoding.codec.CodecException;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * Bounds-checked big-endian reader over the body of one frame, shared by the frame codecs. Every
 * read first checks that its bytes are there, and every count or length is checked against its
 * limit and against the bytes that remain before anything is allocated for it; any fault is a
 * {@link ProtocolException} with {@link ErrorCode#MALFORMED_FRAME} that names the frame type and
 * the offset of the bad field in the body. Reads never go past the end of the body, so a peer can
 * never make a decoder allocate more than the frame holds.
 *
 * <p>One instance serves one decode on one thread. It advances the reader index of the buffer it is
 * given, which the caller owns.
 */
public final class FrameReader {
  private final ByteBuf buf;
  private final int base;
  private final int end;
  private final FrameType type;

  /**
   * The body as one NIO buffer, made by the first {@link #part} and re-positioned for each later
   * one, so that a frame of many parts (a PREDICATE_BATCH) does not allocate a view a part.
   */
  private ByteBuffer view;

  /** Position in {@link #view} of the body's first byte. */
  private int viewBase;

  /**
   * @param body the frame body, from its reader index to its writer index
   * @param type the frame's type, named in error messages
   */
  public FrameReader(ByteBuf body, FrameType type) {
    this.buf = body;
    this.base = body.readerIndex();
    this.end = body.writerIndex();
    this.type = type;
  }

  /** Offset of the next byte from the start of the body. */
  public int offset() {
    return buf.readerIndex() - base;
  }

  /** Bytes left in the body. */
  public int remaining() {
    return end - buf.readerIndex();
  }

  /** The error for a fault at {@code offset} of this body. */
  public ProtocolException malformed(int offset, String detail) {
    return new ProtocolException(
        ErrorCode.MALFORMED_FRAME, type + " body offset " + offset + ": " + detail);
  }

  /** Fails unless {@code n} more bytes are there. */
  public void require(long n) {
    if (n > remaining()) {
      throw malformed(offset(), "truncated: need " + n + " bytes, " + remaining() + " remain");
    }
  }

  /**
   * Fails unless {@code count} items of {@code bytesEach} bytes (plus {@code trailer} bytes after
   * them) fit in what remains. Called before allocating for the items.
   */
  public void requireItems(int at, long count, String items, int bytesEach, int trailer) {
    long need = count * bytesEach + trailer;
    if (need > remaining()) {
      throw malformed(
          at,
          "truncated: "
              + count
              + " "
              + items
              + " need "
              + need
              + " bytes, "
              + remaining()
              + " remain");
    }
  }

  /** Fails if a value read at {@code at} is over {@code max}. */
  public void checkLimit(int at, String what, long value, long max) {
    if (value > max) {
      throw malformed(at, what + " " + value + " exceeds the limit of " + max);
    }
  }

  /** Fails unless the body has been read to its end. */
  public void requireEnd() {
    if (remaining() != 0) {
      throw malformed(offset(), remaining() + " unexpected bytes after the end of the body");
    }
  }

  public int u8() {
    require(1);
    return buf.readUnsignedByte();
  }

  public int u16() {
    require(2);
    return buf.readUnsignedShort();
  }

  public long u32() {
    require(4);
    return buf.readUnsignedInt();
  }

  public int i32() {
    require(4);
    return buf.readInt();
  }

  public long i64() {
    require(8);
    return buf.readLong();
  }

  /** Reads {@code n} raw bytes; {@code n} must have been checked against its limit. */
  public byte[] bytes(int n) {
    require(n);
    byte[] out = new byte[n];
    buf.readBytes(out);
    return out;
  }

  /** A u8 length, then that many bytes of strict UTF-8. */
  public String shortString(String what) {
    int at = offset();
    return utf8(at, u8(), what);
  }

  /** A u16 length (at most {@code max}), then that many bytes of strict UTF-8. */
  public String string(String what, int max) {
    int at = offset();
    int n = u16();
    checkLimit(at, what + " length", n, max);
    return utf8(at, n, what);
  }

  /** A u16 length (at most {@code max}), then that many raw bytes. */
  public byte[] blob(String what, int max) {
    int at = offset();
    int n = u16();
    checkLimit(at, what + " length", n, max);
    return bytes(n);
  }

  /**
   * {@code n} bytes of strict UTF-8 (no overlong forms, surrogates, or sequences cut short); an
   * error names the length field at {@code at}.
   */
  private String utf8(int at, int n, String what) {
    require(n);
    try {
      CharBuffer chars =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(buf.nioBuffer(buf.readerIndex(), n));
      buf.skipBytes(n);
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw malformed(at, "malformed UTF-8 in " + what);
    }
  }

  /**
   * Decodes the rest of the body with a content codec of the encoding module ({@code
   * MessageCodec::decode}, ...), which must use every byte. A {@link CodecException} becomes a
   * {@link ProtocolException} with {@code code}, the request's correlation id and the 1-based
   * position of the bad field in the encoding; bytes after the value are {@link
   * ErrorCode#MALFORMED_FRAME}.
   */
  public <T> T rest(
      Function<ByteBuffer, T> decoder, ErrorCode code, String what, long correlationId) {
    T value = part(decoder, code, what, correlationId);
    requireEnd();
    return value;
  }

  /**
   * As {@link #rest}, for a value that need not end the frame: reads it from the remaining bytes
   * and moves past what it used. The decoder is given one NIO view of the body for every part of
   * the frame, positioned at the part: it must not keep that buffer (a slice of it is fine).
   */
  public <T> T part(
      Function<ByteBuffer, T> decoder, ErrorCode code, String what, long correlationId) {
    int start = buf.readerIndex();
    if (view == null) {
      view = buf.nioBuffer(base, end - base);
      viewBase = view.position();
    }
    // Limit first: the position may lie beyond the limit the previous part left.
    ByteBuffer nio = view.limit(viewBase + end - base).position(viewBase + start - base);
    int nioStart = nio.position();
    T value;
    try {
      value = decoder.apply(nio);
    } catch (CodecException e) {
      throw new ProtocolException(
          code, "bad " + what + ": " + e.getMessage(), correlationId, e.offset() + 1L);
    }
    buf.readerIndex(start + nio.position() - nioStart);
    return value;
  }
}
