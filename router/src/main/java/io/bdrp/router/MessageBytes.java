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

  public MessageBytes set(ByteBuf buf, int offset, int length) {
    this.buf = buf;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /** A slice of the bytes that owns one reference to the buffer. */
  ByteBuf retainedSlice() {
    return buf.retainedSlice(offset, length);
  }

  /**
   * Copies the bytes to the writer index of {@code out} without a view object. Netty's pooled
   * buffers copy from one to another address to address, but from a derived buffer (a slice: a
   * frame that a frame decoder cut out of a read) {@code writeBytes} makes a {@link
   * java.nio.ByteBuffer} view per call, one per DELIVER frame and DATA copy; the slice's {@code
   * getBytes} reaches its pooled buffer and copies from there.
   */
  public void writeTo(ByteBuf out) {
    if (buf.unwrap() == null) {
      out.writeBytes(buf, offset, length);
      return;
    }
    out.ensureWritable(length);
    int at = out.writerIndex();
    buf.getBytes(offset, out, at, length);
    out.writerIndex(at + length);
  }
}
