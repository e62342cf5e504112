package io.bdrp.router;

import io.bdrp.router.links.LinkOutput;
import io.netty.buffer.ByteBuf;

/**
 * Where the encoded bytes of the message being forwarded lie: a region of a buffer that the router
 * holds while it handles one SEND or DATA frame. The data plane carries it as an opaque handle to
 * {@link LinkOutput}, which copies the bytes into its output or, for a large message, takes a
 * retained slice. One instance per kind of input, re-pointed for each frame, so forwarding
 * allocates no view per message.
 *
 * <p>Owned by the router's event loop.
 */
public final class MessageBytes {
  public ByteBuf buf;
  public int offset;
  public int length;

  /** Messages up to this size are copied out through {@link #stage}. */
  static final int STAGED_BYTES = 16 * 1024;

  private static final byte[] NONE = new byte[0];

  /** This object's array for the bytes of a message, read at its first copy ({@link #writeTo}). */
  private byte[] stage = NONE;

  /** Where the bytes of the message lie from index 0, once read into an array; else null. */
  private byte[] copied;

  public MessageBytes set(ByteBuf buf, int offset, int length) {
    this.buf = buf;
    this.offset = offset;
    this.length = length;
    this.copied = null;
    return this;
  }

  /** Big-endian longs in a byte array, as {@link ByteBuf#getLong} reads them. */
  private static final java.lang.invoke.VarHandle LONGS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          long[].class, java.nio.ByteOrder.BIG_ENDIAN);

  /**
   * Copies the bytes into {@code to} from index 0, making no object, and remembers that they lie
   * there: later copies of this message ({@link #writeTo}) are made from {@code to}, which the
   * caller leaves unchanged until this object is {@linkplain #set set} to another message.
   *
   * <p>One bulk copy where the buffer shows its memory as one NIO buffer (Netty's own, kept per
   * buffer, {@link ByteBuf#internalNioBuffer}) or an array: {@code getBytes} into an array makes a
   * {@link java.nio.ByteBuffer} duplicate of Netty's direct buffers per call (without {@code
   * sun.misc.Unsafe}, as on JDK 24 and later), and reading a long at a time through the buffer
   * costs its bounds and liveness checks per read, a fifth of a selective run's router in a
   * profile. A long at a time is left for buffers of several components.
   */
  public void copyTo(byte[] to) {
    if (buf.hasArray()) {
      System.arraycopy(buf.array(), buf.arrayOffset() + offset, to, 0, length);
    } else if (buf.nioBufferCount() == 1) {
      java.nio.ByteBuffer nio = buf.internalNioBuffer(offset, length);
      nio.get(nio.position(), to, 0, length);
    } else {
      int i = 0;
      for (; i + Long.BYTES <= length; i += Long.BYTES) {
        LONGS.set(to, i, buf.getLong(offset + i));
      }
      for (; i < length; i++) {
        to[i] = buf.getByte(offset + i);
      }
    }
    copied = to;
  }

  /** A slice of the bytes that owns one reference to the buffer. */
  ByteBuf retainedSlice() {
    return buf.retainedSlice(offset, length);
  }

  /**
   * Copies the bytes to the writer index of {@code out} without a view object. Netty's copy from
   * one pooled direct buffer to another makes a {@link java.nio.ByteBuffer} view of the target (one
   * per output buffer, so one per DELIVER frame and DATA copy when each goes in a batch of its own)
   * and of the source; a copy from an array makes none. So a message up to {@value #STAGED_BYTES}
   * bytes is read once into an array ({@link #copyTo}: the array it was read into to be matched, or
   * else this object's own), and every copy is written from there.
   */
  public void writeTo(ByteBuf out) {
    if (length > STAGED_BYTES) {
      out.writeBytes(buf, offset, length);
      return;
    }
    if (copied == null) {
      if (stage.length < length) {
        stage = new byte[Math.max(length, Math.min(2 * stage.length, STAGED_BYTES))];
      }
      copyTo(stage);
    }
    out.writeBytes(copied, 0, length);
  }
}
