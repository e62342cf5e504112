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
 * buffer at most one frame of the maximum size; with an {@link InboundBudget}, the partial frames
 * of all the connections that share it hold at most its limit together.
 *
 * <p>One instance per channel; runs on the channel's event loop.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  private int maxFrameBytes;
  private final InboundBudget budget; // or null
  private final InboundBudget.Hold hold; // of the budget, for the partial frame held now; or null
  private boolean failed;
  private InPlace inPlace; // or null

  /**
   * Handles a whole frame where it lies, in the decoder's input, instead of its being passed on as
   * a slice of its own (an object per frame): for the forwarding path's frames, read and copied out
   * before the call returns.
   */
  public interface InPlace {
    /**
     * Takes the frame of {@code length} bytes at {@code start} of {@code in} (valid only during the
     * call, its reader index already past the frame), or returns false to have it passed on as
     * ever. Frames before it have been handled; frames after it are handled after this returns.
     */
    boolean take(ChannelHandlerContext ctx, ByteBuf in, int start, int length);
  }

  /** Sets what takes frames in place (null: none). Call on the channel's loop. */
  public void inPlace(InPlace inPlace) {
    this.inPlace = inPlace;
  }

  /** A decoder with the default maximum frame size, {@link Frames#DEFAULT_MAX_FRAME_BYTES}. */
  public FrameDecoder() {
    this(Frames.DEFAULT_MAX_FRAME_BYTES);
  }

  /**
   * @param maxFrameBytes largest value accepted in the length field (version, type and body bytes);
   *     at least 2
   */
  public FrameDecoder(int maxFrameBytes) {
    this(maxFrameBytes, null);
  }

  /**
   * @param maxFrameBytes largest value accepted in the length field (version, type and body bytes);
   *     at least 2
   * @param budget where a partial frame reserves its length until it is complete, shared with the
   *     other connections of the port; or null for none
   */
  public FrameDecoder(int maxFrameBytes, InboundBudget budget) {
    checkMax(maxFrameBytes);
    this.maxFrameBytes = maxFrameBytes;
    this.budget = budget;
    this.hold = budget == null ? null : budget.newHold();
  }

  private static void checkMax(int maxFrameBytes) {
    if (maxFrameBytes < 2) {
      throw new IllegalArgumentException("maxFrameBytes " + maxFrameBytes + " is less than 2");
    }
  }

  /** The largest value accepted in the length field. */
  public int maxFrameBytes() {
    return maxFrameBytes;
  }

  /**
   * Changes the largest frame accepted from the next frame on: a session accepts small frames until
   * its HELLO is accepted, then frames up to its configured maximum. Call on the channel's loop.
   */
  public void maxFrameBytes(int maxFrameBytes) {
    checkMax(maxFrameBytes);
    this.maxFrameBytes = maxFrameBytes;
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
      if (hold != null) {
        if (!hold.hold(total)) {
          failed = true;
          in.skipBytes(in.readableBytes());
          throw new ProtocolException(
              ErrorCode.OVERLOADED,
              "inbound memory budget of "
                  + budget.limitBytes()
                  + " bytes is spent by partial frames; cannot hold a frame of "
                  + total
                  + " bytes",
              true);
        }
      }
      return;
    }
    releaseReservation();
    // ByteToMessageDecoder passes each frame on before it asks for the next, so the frames before
    // this one are handled already when it is taken in place.
    in.readerIndex(start + total);
    if (inPlace != null && inPlace.take(ctx, in, start, total)) {
      return;
    }
    out.add(in.retainedSlice(start, total));
  }

  private void releaseReservation() {
    if (hold != null) {
      hold.release();
    }
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    releaseReservation();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseReservation();
    super.channelInactive(ctx);
  }
}
