package io.bdrp.router.hosts;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A host session's output above its high water mark, for every front end: while it is, the
 * session's input is not read (a client that sends requests and never reads the replies cannot make
 * them pile up); if it stays so for {@code slowConsumerMs}, the front end's {@code cut} runs (it
 * says why in its own protocol and closes the session).
 *
 * <p>One per session; owned by the session's event loop.
 */
public final class SlowConsumerCheck {
  private final long slowConsumerMs;
  private final Consumer<ChannelHandlerContext> cut;
  private ScheduledFuture<?> pending;

  /**
   * @param cut runs on the loop when the session is still active and above its high water mark
   *     {@code slowConsumerMs} after it went above it
   */
  public SlowConsumerCheck(long slowConsumerMs, Consumer<ChannelHandlerContext> cut) {
    this.slowConsumerMs = slowConsumerMs;
    this.cut = cut;
  }

  /** From the session's {@code channelWritabilityChanged}. */
  public void writabilityChanged(ChannelHandlerContext ctx) {
    Channel c = ctx.channel();
    if (c.isWritable()) {
      c.config().setAutoRead(true);
      cancel();
    } else {
      c.config().setAutoRead(false); // its requests wait while its replies cannot leave
      if (pending == null) {
        pending =
            ctx.executor()
                .schedule(
                    () -> {
                      pending = null;
                      if (c.isActive() && !c.isWritable()) {
                        cut.accept(ctx);
                      }
                    },
                    slowConsumerMs,
                    TimeUnit.MILLISECONDS);
      }
    }
  }

  /** The session has ended: no check is pending any more. */
  public void cancel() {
    if (pending != null) {
      pending.cancel(false);
      pending = null;
    }
  }
}
