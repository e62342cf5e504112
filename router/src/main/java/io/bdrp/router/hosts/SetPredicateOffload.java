package io.bdrp.router.hosts;

import io.bdrp.router.RouterCore;
import io.bdrp.router.config.HostLimits;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sits before a bdrp client session's frame decoder and hands its SET_PREDICATE frames to the
 * control thread, where {@link PredicateChanges} prepares them; their result comes back to the loop
 * ({@link #apply}) in the order they were sent, and is answered with OK or the ERROR. Frames before
 * the HELLO go on to the session handler, which refuses them.
 *
 * <p>One per session; on the router's event loop, but for {@link #prepare}.
 */
final class SetPredicateOffload extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(SetPredicateOffload.class);

  private final PredicateChanges changes;
  private final RouterCore core;
  private final Supplier<? extends AttachedHost> session;

  SetPredicateOffload(PredicateChanges changes, Supplier<? extends AttachedHost> session) {
    this.changes = changes;
    this.core = changes.core;
    this.session = session;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    AttachedHost host = session.get();
    if (host == null
        || !(msg instanceof ByteBuf f)
        || f.readableBytes() < Frames.PREFIX_BYTES + 8
        || f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET)
            != FrameType.SET_PREDICATE.number()) {
      ctx.fireChannelRead(msg);
      return;
    }
    long cid = f.getLong(f.readerIndex() + Frames.PREFIX_BYTES);
    int bytes = f.readableBytes();
    try {
      changes.checkRate(host, cid);
      changes.checkBusy(bytes, cid);
    } catch (ProtocolException e) {
      f.release();
      ctx.fireExceptionCaught(e);
      return;
    }
    changes.preparing++;
    changes.preparingBytes += bytes;
    try {
      core.control()
          .execute(
              () -> {
                PredicateChanges.Prepared p = prepare(host, f, cid);
                try {
                  ctx.executor()
                      .execute(
                          () -> {
                            changes.preparing--;
                            changes.preparingBytes -= bytes;
                            if (ctx.channel().isActive() && session.get() == host) {
                              apply(ctx, host, p, cid);
                            }
                          });
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                  // The router has stopped: no one is left to answer.
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      changes.preparing--;
      changes.preparingBytes -= bytes;
      f.release(); // the router is closing
    }
  }

  /**
   * On the control thread: decodes a SET_PREDICATE frame (released here), bounds its predicate by
   * the host's permission and {@link HostLimits#maxFiltersPerHost()}, encodes it and works it into
   * the router's aggregate ({@link PredicateChanges#prepare}). Touches nothing of the loop's: the
   * host's permissions are immutable, the encoder, the aggregate and the users' filters are this
   * thread's.
   */
  private PredicateChanges.Prepared prepare(AttachedHost host, ByteBuf frame, long correlationId) {
    try {
      ClientFrame f = ClientFrameCodec.decode(frame, core.config().limits().maxFrameBytes());
      if (!(f instanceof ClientFrame.SetPredicate sp)) {
        throw new ProtocolException(ErrorCode.INTERNAL, "not a SET_PREDICATE");
      }
      return changes.prepare(host, sp.predicate(), correlationId);
    } catch (ProtocolException e) {
      return new PredicateChanges.Prepared(null, null, null, e);
    } catch (RuntimeException e) {
      log.warn("router {}: decoding a SET_PREDICATE failed", core.config().router(), e);
      return new PredicateChanges.Prepared(
          null, null, null, new ProtocolException(ErrorCode.INTERNAL, "internal error"));
    } finally {
      frame.release();
    }
  }

  /**
   * On the loop: sets a prepared predicate: the host is matched with it at once, and the router
   * advertises the aggregate made with it. Answers OK or the ERROR.
   */
  private void apply(
      ChannelHandlerContext ctx, AttachedHost host, PredicateChanges.Prepared p, long cid) {
    if (p.error() != null) {
      ctx.fireExceptionCaught(p.error());
      return;
    }
    changes.set(host, p);
    // From the channel, not this handler's context: the encoder sits after the handler.
    ctx.channel().writeAndFlush(new ClientFrame.Ok(cid));
  }
}
