package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Cuts the byte stream of a link into whole frames. Checks, in this order and as soon as the bytes
 * are there: the length field against 2 and the maximum frame size (so an oversize frame is refused
 * from its first four bytes, before any of its body arrives or is buffered), then the version byte;
 * only then does it wait for the rest of the frame. Each frame is passed on as a retained slice
 * that starts at the length field; the next handler owns it and releases it.
 *
 * <p>A fault is a {@link ProtocolException} (codes {@link ErrorCode#FRAME_TOO_LARGE}, {@link
 * ErrorCode#MALFORMED_FRAME}, {@link ErrorCode#UNSUPPORTED_VERSION}). The stream is never
 * resynchronised: after the first fault the decoder discards everything that follows, and {@link
 * ProtocolErrorHandler} answers with an ERROR frame and closes the channel. A peer can make it
 * buffer at most one frame of the maximum size.
 *
 * <p>One instance per channel; runs on the channel's event loop.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  private final int maxFrameBytes;
  private boolean failed;

  /** A decoder with the default maximum frame size, {@link Frames#DEFAULT_MAX_FRAME_BYTES}. */
  public FrameDecoder() {
    this(Frames.DEFAULT_MAX_FRAME_BYTES);
  }

  /**
   * @param maxFrameBytes largest value accepted in the length field (version, type and body bytes);
   *     at least 2
   */
  public FrameDecoder(int maxFrameBytes) {
    if (maxFrameBytes < 2) {
      throw new IllegalArgumentException("maxFrameBytes " + maxFrameBytes + " is less than 2");
    }
    this.maxFrameBytes = maxFrameBytes;
  }

  /** The largest value accepted in the length field. */
  public int maxFrameBytes() {
    return maxFrameBytes;
  }

  /**
   * Stops decoding: everything already received or still to come is discarded. Called by {@link
   * ProtocolErrorHandler} when a later stage finds a fault that ends the session, so that frames
   * behind the bad one, already in the buffer, are not passed on.
   */
  public void discardInput() {
    failed = true;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (in.readableBytes() < Frames.LENGTH_BYTES) {
      return;
    }
    int start = in.readerIndex();
    long length = in.getUnsignedInt(start);
    try {
      Frames.checkLength(length, maxFrameBytes);
      if (in.readableBytes() > Frames.VERSION_OFFSET) {
        Frames.checkVersion(in.getUnsignedByte(start + Frames.VERSION_OFFSET));
      }
    } catch (ProtocolException e) {
      failed = true;
      in.skipBytes(in.readableBytes());
      throw e;
    }
    int total = Frames.LENGTH_BYTES + (int) length;
    if (in.readableBytes() < total) {
      return;
    }
    out.add(in.retainedSlice(start, total));
    in.readerIndex(start + total);
  }
}
