package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/**
 * Writes {@link ClientFrame} records as whole frames, into a buffer of exactly the frame's size.
 * Stateless; may be shared between channels.
 */
@ChannelHandler.Sharable
public final class ClientFrameEncoder extends MessageToByteEncoder<ClientFrame> {
  /** An encoder that writes to heap or direct buffers as the channel prefers. */
  public ClientFrameEncoder() {
    super(ClientFrame.class);
  }

  @Override
  protected ByteBuf allocateBuffer(
      ChannelHandlerContext ctx, ClientFrame msg, boolean preferDirect) {
    int n = ClientFrameCodec.encodedLength(msg);
    return preferDirect ? ctx.alloc().ioBuffer(n) : ctx.alloc().heapBuffer(n);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, ClientFrame msg, ByteBuf out) {
    ClientFrameCodec.encode(msg, out);
  }
}
