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

  /** The bytes of the message, once {@link #staged}: read at its first copy. */
  private byte[] stage = NONE;

  private boolean staged;

  public MessageBytes set(ByteBuf buf, int offset, int length) {
    this.buf = buf;
    this.offset = offset;
    this.length = length;
    this.staged = false;
    return this;
  }

  /** Big-endian longs in a byte array, as {@link ByteBuf#getLong} reads them. */
  private static final java.lang.invoke.VarHandle LONGS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          long[].class, java.nio.ByteOrder.BIG_ENDIAN);

  /**
   * Copies the bytes into {@code to} from index 0, making no object: {@code getBytes} into an array
   * makes a {@link java.nio.ByteBuffer} duplicate of Netty's direct buffers per call (without
   * {@code sun.misc.Unsafe}, as on JDK 24 and later), where reading them a long at a time does not.
   */
  public void copyTo(byte[] to) {
    // Eight bytes a read: a byte at a time cost a bounds and liveness check per byte.
    int i = 0;
    for (; i + Long.BYTES <= length; i += Long.BYTES) {
      LONGS.set(to, i, buf.getLong(offset + i));
    }
    for (; i < length; i++) {
      to[i] = buf.getByte(offset + i);
    }
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
   * bytes is read once into an array of this object's ({@link #copyTo}), and every copy is written
   * from there.
   */
  public void writeTo(ByteBuf out) {
    if (length > STAGED_BYTES) {
      out.writeBytes(buf, offset, length);
      return;
    }
    if (!staged) {
      if (stage.length < length) {
        stage = new byte[Math.max(length, Math.min(2 * stage.length, STAGED_BYTES))];
      }
      copyTo(stage);
      staged = true;
    }
    out.writeBytes(stage, 0, length);
  }
}
