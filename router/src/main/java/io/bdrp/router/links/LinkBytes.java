package io.bdrp.router.links;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

/**
 * Counts the bytes of a router session where they cross the socket (the first handler of the
 * pipeline, below TLS): each read and each write adds its size to the link's {@link Link#bytesIn}
 * or {@link Link#bytesOut}, one add per read and per written batch, whatever it carries (control
 * frames, DATA batches, reliable frames). Bytes before the hello names the link (the hello itself)
 * are not counted.
 *
 * <p>Owned by the session's event loop, the router's.
 */
final class LinkBytes extends ChannelDuplexHandler {
  /** The link the session belongs to, set by {@link Link#attach} once the hellos are exchanged. */
  Link link;

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Link l = link;
    if (l != null) {
      l.bytesIn += size(msg);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    Link l = link;
    if (l != null) {
      long n = size(msg);
      l.bytesOut += n;
      l.sessionBytesOut += n;
    }
    ctx.write(msg, promise);
  }

  private static long size(Object msg) {
    if (msg instanceof ByteBuf b) {
      return b.readableBytes();
    }
    if (msg instanceof ByteBufHolder h) {
      return h.content().readableBytes();
    }
    return 0;
  }
}
