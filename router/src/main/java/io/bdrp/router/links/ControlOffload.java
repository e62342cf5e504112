package io.bdrp.router.links;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.transport.FrameType;
import io.bdrp.transport.Frames;
import io.bdrp.transport.RouterFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Sits before a router link's frame decoder and decodes large advertisements (PREDICATE_AD,
 * PREDICATE_DELTA, PREDICATE_BATCH of at least {@value #OFFLOAD_BYTES} bytes) on the router's
 * links' control thread (not the one that builds the index of D, so that decodes never wait behind
 * a build), so that a neighbour's 65,535 filters are not built on the event loop that forwards. The
 * decoded message (or the decoder's refusal) comes back to the loop and goes on down the pipeline
 * as if decoded there. The link's frames keep their order: while one is away, every later frame of
 * the link but DATA waits here, and the link is not read while more than {@code maxWaitingBytes}
 * wait. DATA does not wait: its order with control frames carries no meaning.
 *
 * <p>One per channel; owned by the channel's event loop.
 */
final class ControlOffload extends ChannelInboundHandlerAdapter {
  /** Advertisements at least this large are decoded off the loop. */
  static final int OFFLOAD_BYTES = 16 * 1024;

  private final Executor control;
  private final int maxFrameBytes;
  private final BloomParameters bloom;
  private final long maxWaitingBytes;
  private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
  private long waitingBytes;
  private boolean away;
  private boolean paused;

  ControlOffload(Executor control, int maxFrameBytes, BloomParameters bloom, long maxWaitingBytes) {
    this.control = control;
    this.maxFrameBytes = maxFrameBytes;
    this.bloom = bloom;
    this.maxWaitingBytes = maxWaitingBytes;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf f)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (!away) {
      handle(ctx, f);
      return;
    }
    if (io.bdrp.transport.RouterFrameDecoder.passedOn(type(f))) {
      ctx.fireChannelRead(f);
      return;
    }
    waiting.add(f);
    waitingBytes += f.readableBytes();
    if (waitingBytes > maxWaitingBytes && !paused) {
      paused = true;
      ReadHolds.set(ctx.channel(), ReadHolds.DECODING, true);
    }
  }

  private static int type(ByteBuf f) {
    return f.readableBytes() > Frames.TYPE_OFFSET
        ? f.getUnsignedByte(f.readerIndex() + Frames.TYPE_OFFSET)
        : -1;
  }

  private static boolean advertisement(int type) {
    return type == FrameType.PREDICATE_AD.number()
        || type == FrameType.PREDICATE_DELTA.number()
        || type == FrameType.PREDICATE_BATCH.number();
  }

  /** Passes {@code f} on, or sends it to the control thread to be decoded. */
  private void handle(ChannelHandlerContext ctx, ByteBuf f) {
    if (f.readableBytes() < OFFLOAD_BYTES || !advertisement(type(f))) {
      ctx.fireChannelRead(f);
      return;
    }
    away = true;
    try {
      control.execute(
          () -> {
            Object decoded;
            try {
              decoded = RouterFrameCodec.decode(f, maxFrameBytes, bloom);
              // Measured here, once: each filter set remembers its wire length, which the loop
              // asks for whenever the advertisement is sent on.
              RouterFrameCodec.encodedLength(decoded);
            } catch (RuntimeException e) {
              decoded = e instanceof DecoderException ? e : new DecoderException(e);
            } finally {
              f.release();
            }
            Object result = decoded;
            try {
              ctx.executor().execute(() -> back(ctx, result));
            } catch (RejectedExecutionException stopped) {
              ReferenceCountUtil.release(result); // the router has stopped
            }
          });
    } catch (RejectedExecutionException stopping) {
      away = false;
      f.release(); // the router is stopping
    }
  }

  /** On the loop: the decoded frame goes on, then the frames that waited for it. */
  private void back(ChannelHandlerContext ctx, Object decoded) {
    away = false;
    if (!ctx.channel().isActive()) {
      ReferenceCountUtil.release(decoded);
      releaseWaiting();
      return;
    }
    if (decoded instanceof Throwable t) {
      ctx.fireExceptionCaught(t);
    } else {
      ctx.fireChannelRead(decoded);
    }
    ByteBuf f;
    while (!away && (f = waiting.poll()) != null) {
      waitingBytes -= f.readableBytes();
      handle(ctx, f);
    }
    if (paused && waitingBytes <= maxWaitingBytes / 2) {
      paused = false;
      ReadHolds.set(ctx.channel(), ReadHolds.DECODING, false);
    }
    // What the neighbour sent arrived now, as far as the handlers after this one can tell: a
    // link read slowly because its frames wait here is not a silent one.
    ctx.fireChannelReadComplete();
  }

  private void releaseWaiting() {
    ByteBuf f;
    while ((f = waiting.poll()) != null) {
      f.release();
    }
    waitingBytes = 0;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    releaseWaiting();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseWaiting();
  }
}
