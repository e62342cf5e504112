package io.bdrp.router;

import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.FrameDecoder;
import io.bdrp.transport.InboundBudget;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one port allows connections that have not completed their HELLO: at most {@link
 * RouterLimits#maxHandshakes()} of them at once (more are refused with {@code OVERLOADED}), each
 * for at most {@link RouterLimits#helloTimeoutMs()} (then closed with {@code TIMEOUT}), sending
 * frames of at most {@link RouterLimits#HANDSHAKE_FRAME_BYTES}. Once the session accepts the HELLO
 * ({@link #done}), the connection may send frames up to {@code maxFrameBytes}. Also holds the
 * port's {@link InboundBudget} for partial frames. Refusals and timeouts are counted in {@code
 * bdrp_connections_closed_total{port,reason}}.
 *
 * <p>Owned by the router's event loop.
 */
public final class Handshakes {
  private static final Logger log = LoggerFactory.getLogger(Handshakes.class);

  private final String port;
  private final RouterLimits limits;
  private final Metrics.Counter refused;
  private final Metrics.Counter timedOut;
  private final InboundBudget budget;
  private int pending;

  public Handshakes(String port, RouterLimits limits, RouterMetrics metrics) {
    this.port = port;
    this.limits = limits;
    this.refused = metrics.connectionsClosed(port, "handshakes");
    this.timedOut = metrics.connectionsClosed(port, "hello_timeout");
    this.budget = new InboundBudget(limits.inboundBufferBytes());
    metrics.inboundBudget(port, budget);
  }

  /** The frame decoder of a new connection: small frames until its HELLO is accepted. */
  public FrameDecoder frameDecoder() {
    return new FrameDecoder(
        Math.min(RouterLimits.HANDSHAKE_FRAME_BYTES, limits.maxFrameBytes()), budget);
  }

  /**
   * The first handler of a connection's pipeline.
   *
   * @param accepted whether the connection was accepted on this port (counted against the cap) or
   *     dialled by this router (only timed)
   */
  public Guard guard(boolean accepted) {
    return new Guard(accepted);
  }

  /** The connection's HELLO was accepted: it is a session now. */
  public static void done(ChannelHandlerContext ctx) {
    Guard g = ctx.pipeline().get(Guard.class);
    if (g != null) {
      g.done(ctx);
    }
  }

  /** Connections of this port in their HELLO now. */
  public int pending() {
    return pending;
  }

  /** Times a connection's HELLO and counts it against the port's cap. */
  final class Guard extends ChannelInboundHandlerAdapter {
    private final boolean accepted;
    private boolean counted;
    private ScheduledFuture<?> timeout;

    private Guard(boolean accepted) {
      this.accepted = accepted;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (accepted && pending >= limits.maxHandshakes()) {
        refused.inc();
        log.debug(
            "{} port: refusing {}: {} connections are in their HELLO already",
            port,
            ctx.channel().remoteAddress(),
            pending);
        ctx.channel().config().setAutoRead(false);
        ctx.channel()
            .writeAndFlush(
                error(
                    ErrorCode.OVERLOADED,
                    "too many connections in their HELLO (" + pending + "); try again later"))
            .addListener(ChannelFutureListener.CLOSE);
        return; // the session never sees the connection
      }
      if (accepted) {
        pending++;
        counted = true;
      }
      timeout =
          ctx.executor()
              .schedule(() -> expire(ctx), limits.helloTimeoutMs(), TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    private void expire(ChannelHandlerContext ctx) {
      timeout = null;
      if (!ctx.channel().isActive()) {
        return;
      }
      timedOut.inc();
      log.debug(
          "{} port: closing {}: no HELLO within {} ms",
          port,
          ctx.channel().remoteAddress(),
          limits.helloTimeoutMs());
      release();
      ctx.channel().config().setAutoRead(false);
      ctx.channel()
          .writeAndFlush(
              error(ErrorCode.TIMEOUT, "no HELLO within " + limits.helloTimeoutMs() + " ms"))
          .addListener(ChannelFutureListener.CLOSE);
    }

    public void done(ChannelHandlerContext ctx) {
      release();
      FrameDecoder framing = ctx.pipeline().get(FrameDecoder.class);
      if (framing != null) {
        framing.maxFrameBytes(limits.maxFrameBytes());
      }
      ctx.pipeline().remove(this);
    }

    private void release() {
      if (timeout != null) {
        timeout.cancel(false);
        timeout = null;
      }
      if (counted) {
        counted = false;
        pending--;
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      release();
      ctx.fireChannelInactive();
    }
  }

  private static ClientFrame.Error error(ErrorCode code, String reason) {
    return new ClientFrame.Error(0, code.number(), reason, 0);
  }
}
