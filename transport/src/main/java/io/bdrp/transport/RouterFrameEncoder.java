package io.bdrp.transport;

import io.bdrp.routing.ControlMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/**
 * Writes {@link RouterHello}, {@link ControlMessage} and {@link SessionFrame} records as whole
 * frames. DATA frames are already bytes ({@link io.bdrp.transport.DataHeader}) and pass through
 * untouched. Stateless; may be shared between channels.
 */
@ChannelHandler.Sharable
public final class RouterFrameEncoder extends MessageToByteEncoder<Object> {
  /** An encoder for the records of a router link. */
  public RouterFrameEncoder() {
    super(Object.class);
  }

  @Override
  public boolean acceptOutboundMessage(Object msg) {
    return msg instanceof RouterHello
        || msg instanceof ControlMessage
        || msg instanceof SessionFrame;
  }

  @Override
  protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, Object msg, boolean preferDirect) {
    int n = RouterFrameCodec.encodedLength(msg);
    return preferDirect ? ctx.alloc().ioBuffer(n) : ctx.alloc().heapBuffer(n);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, Object msg, ByteBuf out) {
    RouterFrameCodec.encode(msg, out);
  }
}
