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
 * SEND or SEND_RELIABLE that the session publishes from its bytes ({@link Publisher}, {@link
 * ReliablePublisher}) goes no further, and makes no object on its way (the forwarding path's common
 * case: a host that may publish anything).
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

  /**
   * Publishes a SEND_RELIABLE from its bytes, without its frame decoded; false: not done, decode
   * it. Given only a publisher other than 0 and a publisher's number of at least 1, as the frame
   * decoder requires.
   */
  interface ReliablePublisher {
    boolean publish(
        ChannelHandlerContext ctx,
        long correlationId,
        long publisher,
        long publisherSeq,
        MessageBytes message);
  }

  private final MessageBytes bytes;
  private final Publisher publisher;
  private final ReliablePublisher reliablePublisher;

  SendBytes(MessageBytes bytes, Publisher publisher, ReliablePublisher reliablePublisher) {
    this.bytes = bytes;
    this.publisher = publisher;
    this.reliablePublisher = reliablePublisher;
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
   * or SEND_RELIABLE is published from its bytes there where the session can, with neither a slice
   * of its own nor its frame decoded; anything else, or one the session does not publish so, is
   * passed on (and a SEND_RELIABLE whose publisher or number the decoder refuses is left to it).
   */
  boolean take(ChannelHandlerContext ctx, ByteBuf in, int start, int length) {
    if (length <= MESSAGE_OFFSET) {
      return false;
    }
    int type = in.getUnsignedByte(start + Frames.TYPE_OFFSET);
    long correlationId = in.getLong(start + Frames.PREFIX_BYTES);
    if (type == FrameType.SEND.number()) {
      bytes.set(in, start + MESSAGE_OFFSET, length - MESSAGE_OFFSET);
      try {
        return publisher.publish(ctx, correlationId, bytes);
      } finally {
        bytes.set(null, 0, 0);
      }
    }
    if (type != FrameType.SEND_RELIABLE.number() || length <= RELIABLE_MESSAGE_OFFSET) {
      return false;
    }
    long publisherId = in.getLong(start + Frames.PREFIX_BYTES + 8);
    long publisherSeq = in.getLong(start + Frames.PREFIX_BYTES + 16);
    if (publisherId == 0 || publisherSeq < 1) {
      return false;
    }
    bytes.set(in, start + RELIABLE_MESSAGE_OFFSET, length - RELIABLE_MESSAGE_OFFSET);
    try {
      return reliablePublisher.publish(ctx, correlationId, publisherId, publisherSeq, bytes);
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
