package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;

/**
 * Constants and helpers of the frame layer shared by every codec. A frame is:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                       length (u32)                            |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  | version (u8)  |   type (u8)   |  body: length - 2 bytes ...   |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * {@code length} counts the version, type and body bytes (not itself), big-endian. Stateless.
 */
public final class Frames {
  /** The protocol version this code speaks: the version byte of every frame. */
  public static final int VERSION = 1;

  /**
   * The highest client-session version this code speaks, offered as HELLO's {@code maxVersion} and
   * answered in HELLO_OK's {@code version} (the lower of the two sides'): version 1 has the frames
   * HELLO to UNREACHED, version 2 adds CONFIRM_RANGE. The frame layout is the same in both, so
   * their frames carry the version byte {@link #VERSION}.
   */
  public static final int SESSION_VERSION = 2;

  /** Bytes of the length field. */
  public static final int LENGTH_BYTES = 4;

  /** Bytes before the body: length, version, type. */
  public static final int PREFIX_BYTES = 6;

  /** Offset of the version byte from the start of the frame. */
  public static final int VERSION_OFFSET = 4;

  /** Offset of the type byte from the start of the frame. */
  public static final int TYPE_OFFSET = 5;

  /** Default largest value of the length field: 1 MiB. */
  public static final int DEFAULT_MAX_FRAME_BYTES = 1 << 20;

  /** Longest client name, server name: u8 length field. */
  public static final int MAX_NAME_BYTES = 255;

  /** Longest authentication token, in bytes (u16 length field). */
  public static final int MAX_TOKEN_BYTES = 1024;

  /** Longest ERROR message text, in UTF-8 bytes (u16 length field); longer text is cut. */
  public static final int MAX_ERROR_TEXT_BYTES = 1024;

  private Frames() {}

  /**
   * Writes the prefix of a frame of this type with a placeholder length and returns the frame's
   * start index, to be passed to {@link #endFrame}.
   */
  public static int beginFrame(ByteBuf out, FrameType type) {
    int start = out.writerIndex();
    out.writeInt(0);
    out.writeByte(VERSION);
    out.writeByte(type.number());
    return start;
  }

  /**
   * Writes the prefix of a frame of this type whose body of {@code bodyBytes} follows (in this
   * buffer or, for a large body, in one written after it).
   */
  public static void writePrefix(ByteBuf out, FrameType type, int bodyBytes) {
    out.writeInt(bodyBytes + PREFIX_BYTES - LENGTH_BYTES);
    out.writeByte(VERSION);
    out.writeByte(type.number());
  }

  /** Patches the length field of the frame that starts at {@code start}. */
  public static void endFrame(ByteBuf out, int start) {
    out.setInt(start, out.writerIndex() - start - LENGTH_BYTES);
  }

  /** UTF-8 length in bytes of {@code s}. */
  public static int utf8Length(String s) {
    return ByteBufUtil.utf8Bytes(s);
  }

  /** Writes a u8 length and the UTF-8 bytes of {@code s}; the caller checked the length. */
  public static void writeShortString(ByteBuf out, String s) {
    int n = ByteBufUtil.utf8Bytes(s);
    out.writeByte(n);
    ByteBufUtil.reserveAndWriteUtf8(out, s, n);
  }

  /** Writes a u16 length and the UTF-8 bytes of {@code s}; the caller checked the length. */
  public static void writeString(ByteBuf out, String s) {
    int n = ByteBufUtil.utf8Bytes(s);
    out.writeShort(n);
    ByteBufUtil.reserveAndWriteUtf8(out, s, n);
  }

  /** Fails unless {@code s} fits in {@code max} bytes of UTF-8. */
  public static String checkString(String what, String s, int max) {
    if (s == null) {
      throw new NullPointerException(what);
    }
    int n = ByteBufUtil.utf8Bytes(s);
    if (n > max) {
      throw new IllegalArgumentException(what + " is " + n + " bytes of UTF-8, more than " + max);
    }
    return s;
  }

  /** {@code s} cut to at most {@code max} bytes of UTF-8, on a code point boundary. */
  public static String truncateUtf8(String s, int max) {
    if (ByteBufUtil.utf8Bytes(s) <= max) {
      return s;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    int end = max;
    while (end > 0 && (b[end] & 0xC0) == 0x80) {
      end--; // b[end] is a continuation byte: the code point starts before the cut
    }
    return new String(b, 0, end, StandardCharsets.UTF_8);
  }

  /**
   * Writes {@code length} bytes through a {@link ByteBuffer} codec (the encoding module's {@code
   * MessageCodec.encode} and kin) at the writer index of {@code out}, so that the layouts are
   * written by one piece of code only. A buffer that is one contiguous region (every buffer Netty
   * allocates) is written in place through its internal NIO view, made once per buffer rather than
   * once per value; otherwise through a temporary array.
   */
  public static <T> void writeVia(
      ByteBuf out, T value, int length, BiConsumer<T, ByteBuffer> encoder) {
    out.ensureWritable(length);
    int at = out.writerIndex();
    if (out.nioBufferCount() == 1) {
      ByteBuffer nio = out.internalNioBuffer(at, length);
      encoder.accept(value, nio);
      if (nio.hasRemaining()) {
        throw new BufferOverflowException();
      }
      out.writerIndex(at + length);
    } else {
      ByteBuffer tmp = ByteBuffer.allocate(length);
      encoder.accept(value, tmp);
      out.writeBytes(tmp.flip());
    }
  }

  /** Fails unless {@code v} fits an unsigned 8-bit field. */
  public static int checkU8(String what, int v) {
    if (v < 0 || v > 0xFF) {
      throw new IllegalArgumentException(what + " " + v + " outside 0..255");
    }
    return v;
  }

  /** Fails unless {@code v} fits an unsigned 16-bit field (router numbers, metrics, ...). */
  public static int checkU16(String what, int v) {
    if (v < 0 || v > 0xFFFF) {
      throw new IllegalArgumentException(what + " " + v + " outside 0..65535");
    }
    return v;
  }

  /** A copy of an authentication token, which must be at most {@link #MAX_TOKEN_BYTES} long. */
  public static byte[] checkToken(byte[] token) {
    if (token.length > MAX_TOKEN_BYTES) {
      throw new IllegalArgumentException(
          "auth token is " + token.length + " bytes, more than " + MAX_TOKEN_BYTES);
    }
    return token.clone();
  }

  /**
   * Checks the prefix of one whole frame that fills {@code frame} from its reader index to its
   * writer index, and moves the reader index to the body. Returns the type byte, which the caller
   * maps to a frame type of its link kind.
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} if the length field is under 2 or
   *     disagrees with the bytes there, {@link ErrorCode#FRAME_TOO_LARGE} if it is over {@code
   *     maxFrameBytes}, {@link ErrorCode#UNSUPPORTED_VERSION} for any version but {@link #VERSION}
   */
  public static int openFrame(ByteBuf frame, int maxFrameBytes) {
    if (frame.readableBytes() < PREFIX_BYTES) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME,
          "frame of " + frame.readableBytes() + " bytes is shorter than its 6-byte prefix");
    }
    int start = frame.readerIndex();
    long length = frame.getUnsignedInt(start);
    checkLength(length, maxFrameBytes);
    if (length != frame.readableBytes() - LENGTH_BYTES) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME,
          "length field says "
              + length
              + " bytes, the frame has "
              + (frame.readableBytes() - LENGTH_BYTES));
    }
    checkVersion(frame.getUnsignedByte(start + VERSION_OFFSET));
    frame.readerIndex(start + PREFIX_BYTES);
    return frame.getUnsignedByte(start + TYPE_OFFSET);
  }

  /** Checks a length field: at least 2 (version and type), at most {@code maxFrameBytes}. */
  public static void checkLength(long length, int maxFrameBytes) {
    if (length > maxFrameBytes) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LARGE,
          "frame length " + length + " exceeds the limit of " + maxFrameBytes);
    }
    if (length < 2) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME, "frame length " + length + " is less than 2");
    }
  }

  /** Checks a version byte. */
  public static void checkVersion(int version) {
    if (version != VERSION) {
      throw new ProtocolException(
          ErrorCode.UNSUPPORTED_VERSION,
          "protocol version " + version + " is not supported; this peer speaks " + VERSION);
    }
  }
}
