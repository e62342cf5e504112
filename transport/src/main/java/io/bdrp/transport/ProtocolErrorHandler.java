package io.bdrp.transport;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;

/**
 * The last inbound handler of every session: turns an exception into an ERROR frame to the peer and
 * a count. A {@link ProtocolException} is reported with its own code, reason, correlation id and
 * position; anything else as {@link ErrorCode#INTERNAL}, without details. If the code {@link
 * ErrorCode#closesSession() closes the session}, the ERROR frame is flushed and the channel closed
 * once it is written, and later errors of the same channel are counted but not answered: the peer
 * gets exactly one ERROR frame, and the channel's {@link FrameDecoder} discards the rest of the
 * input, so no frame behind the bad one reaches the session. Otherwise the session goes on (the
 * error answered one request).
 *
 * <p>The ERROR frame is written as a {@link ClientFrame.Error} record, so an encoder for session
 * frames ({@link ClientFrameEncoder}, or the router-link encoder) must sit before this handler.
 *
 * <p>One instance per channel (it remembers that the channel is closing); runs on the channel's
 * event loop. The counters may be shared.
 *
 * <p>An {@link IOException} (the connection reset or broken under the session) is not a protocol
 * error: the channel is closed and the loss counted ({@link
 * ProtocolErrorCounters#connectionsLost()}).
 */
public final class ProtocolErrorHandler extends ChannelInboundHandlerAdapter {
  private final ProtocolErrorCounters counters;
  private boolean closing;

  /**
   * @param counters where errors are counted; may be shared between channels
   */
  public ProtocolErrorHandler(ProtocolErrorCounters counters) {
    this.counters = counters;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof IOException) {
      // The connection failed under the session (reset by the peer, broken pipe): nothing the
      // peer sent was wrong, and there is no one left to answer.
      counters.connectionLost();
      ctx.close();
      return;
    }
    ProtocolException e = protocolException(cause);
    counters.increment(e.code());
    if (closing) {
      return;
    }
    if (e.closesSession()) {
      closing = true;
      FrameDecoder framing = ctx.pipeline().get(FrameDecoder.class);
      if (framing != null) {
        framing.discardInput(); // frames behind the bad one are not passed on
      }
      ctx.channel().config().setAutoRead(false);
      ctx.writeAndFlush(e.toFrame()).addListener(ChannelFutureListener.CLOSE);
    } else {
      ctx.writeAndFlush(e.toFrame());
    }
  }

  /** The protocol exception in {@code cause}'s chain, or an INTERNAL one. */
  static ProtocolException protocolException(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof ProtocolException p) {
        return p;
      }
    }
    return new ProtocolException(ErrorCode.INTERNAL, "internal error");
  }
}
