package io.bdrp.router.hosts;

import io.bdrp.router.MessageBytes;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Sits before a client session's frame decoder and exposes a SEND frame's message bytes, as the
 * host wrote them, while the frame is decoded and published: the data plane forwards those bytes
 * rather than encoding the decoded message again. Outside a SEND, {@code bytes} points nowhere.
 *
 * <p>Before that, the session's frame cutter offers it each frame where it lies ({@link #take}): a
 * SEND that the session publishes from its bytes ({@link Publisher}) goes no further, and makes no
 * object on its way (the forwarding path's common case: a host that may publish anything).
 *
 * <p>One per session; owned by the router's event loop.
 */
final class SendBytes extends ChannelInboundHandlerAdapter {
  /** Where a SEND frame's message starts: after its prefix and correlation id. */
  private static final int MESSAGE_OFFSET = Frames.PREFIX_BYTES + 8;

  /**
   * Where a SEND_RELIABLE frame's message starts: after its prefix, correlation id, publisher and
   * publisher's number.
   */
  private static final int RELIABLE_MESSAGE_OFFSET = Frames.PREFIX_BYTES + 24;

  /** Publishes a SEND from its bytes, without its frame decoded; false: not done, decode it. */
  interface Publisher {
    boolean publish(ChannelHandlerContext ctx, long correlationId, MessageBytes message);
  }

  private final MessageBytes bytes;
  private final Publisher publisher;

  SendBytes(MessageBytes bytes, Publisher publisher) {
    this.bytes = bytes;
    this.publisher = publisher;
  }

  /** Where the message of frame {@code f} starts, if it is a SEND or SEND_RELIABLE; else -1. */
  private static int offset(ByteBuf f) {
    if (f.readableBytes() <= Frames.TYPE_OFFSET) {
      return -1;
    }
    int type = f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET);
    int offset =
        type == FrameType.SEND.number()
            ? MESSAGE_OFFSET
            : type == FrameType.SEND_RELIABLE.number() ? RELIABLE_MESSAGE_OFFSET : -1;
    return offset > 0 && f.readableBytes() > offset ? offset : -1;
  }

  /**
   * A frame in the frame decoder's input ({@link io.bdrp.transport.FrameDecoder.InPlace}): a SEND
   * is published from its bytes there where the session can, with neither a slice of its own nor
   * its frame decoded; anything else, or a SEND the session does not publish so, is passed on.
   */
  boolean take(ChannelHandlerContext ctx, ByteBuf in, int start, int length) {
    if (length <= MESSAGE_OFFSET
        || in.getUnsignedByte(start + Frames.TYPE_OFFSET) != FrameType.SEND.number()) {
      return false;
    }
    bytes.set(in, start + MESSAGE_OFFSET, length - MESSAGE_OFFSET);
    try {
      return publisher.publish(ctx, in.getLong(start + Frames.PREFIX_BYTES), bytes);
    } finally {
      bytes.set(null, 0, 0);
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    int offset = msg instanceof ByteBuf f ? offset(f) : -1;
    if (offset > 0 && msg instanceof ByteBuf f) {
      // Held: the decoder releases the frame before it passes the decoded SEND on.
      f.retain();
      bytes.set(f, f.readerIndex() + offset, f.readableBytes() - offset);
      try {
        ctx.fireChannelRead(msg); // decoded and published before this returns
      } finally {
        bytes.set(null, 0, 0);
        f.release();
      }
    } else {
      ctx.fireChannelRead(msg);
    }
  }
}
