package io.bdrp.transport;

import io.bdrp.encoding.bloom.BloomParameters;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.util.List;

/**
 * Turns whole frames from {@link FrameDecoder} into what a router link handles: a {@link
 * RouterHello}, a {@code ControlMessage} or a {@code SessionFrame} record (the frame buffer is
 * released), or, for DATA, the frame buffer itself, passed on with one reference that the next
 * handler owns and must release; that handler checks its header with its own {@link DataHeader}
 * flyweight and counts a malformed one (the stream's framing is intact, so the session goes on).
 * Faults are {@code ProtocolException}s for {@code ProtocolErrorHandler}.
 *
 * <p>Stateless apart from its configuration; may be shared between channels.
 */
@ChannelHandler.Sharable
public final class RouterFrameDecoder extends MessageToMessageDecoder<ByteBuf> {
  private final int maxFrameBytes;
  private final BloomParameters expected;

  /**
   * @param maxFrameBytes largest accepted value of the length field
   * @param expected the network's Bloom parameters (advertisements with others are refused), or
   *     null to accept any
   */
  public RouterFrameDecoder(int maxFrameBytes, BloomParameters expected) {
    super(ByteBuf.class);
    this.maxFrameBytes = maxFrameBytes;
    this.expected = expected;
  }

  /**
   * Whether frames of this type go on as they are, read where they lie by the data plane: DATA, and
   * the reliable service's RELIABLE_DATA and RELIABLE_ACK ({@link ReliableFrames}), and tracing's
   * TRACE_DATA and TRACE_REPORT ({@link TraceFrames}).
   */
  public static boolean passedOn(int type) {
    return type == FrameType.DATA.number()
        || type == FrameType.RELIABLE_DATA.number()
        || type == FrameType.RELIABLE_ACK.number()
        || type == FrameType.TRACE_DATA.number()
        || type == FrameType.TRACE_REPORT.number();
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
    int start = frame.readerIndex();
    if (frame.readableBytes() > Frames.TYPE_OFFSET
        && passedOn(frame.getUnsignedByte(start + Frames.TYPE_OFFSET))) {
      out.add(frame.retain());
      return;
    }
    out.add(RouterFrameCodec.decode(frame, maxFrameBytes, expected));
  }
}
