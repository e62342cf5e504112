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
 * <p>One per session; owned by the router's event loop.
 */
final class SendBytes extends ChannelInboundHandlerAdapter {
  /** Where a SEND frame's message starts: after its prefix and correlation id. */
  private static final int MESSAGE_OFFSET = Frames.PREFIX_BYTES + 8;

  private final MessageBytes bytes;

  SendBytes(MessageBytes bytes) {
    this.bytes = bytes;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ByteBuf f
        && f.readableBytes() > MESSAGE_OFFSET
        && f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET) == FrameType.SEND.number()) {
      // Held: the decoder releases the frame before it passes the decoded SEND on.
      f.retain();
      bytes.set(f, f.readerIndex() + MESSAGE_OFFSET, f.readableBytes() - MESSAGE_OFFSET);
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
