package io.bdrp.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.util.List;

/**
 * Turns whole frames from {@link FrameDecoder} into {@link ClientFrame} records, and releases each
 * frame buffer. Faults are {@link ProtocolException}s for {@link ProtocolErrorHandler}: one with a
 * code that does not close the session (a bad predicate or message in an otherwise well-formed
 * frame) leaves the decoder ready for the next frame.
 *
 * <p>Stateless apart from its limit; may be shared between channels.
 */
@io.netty.channel.ChannelHandler.Sharable
public final class ClientFrameDecoder extends MessageToMessageDecoder<ByteBuf> {
  private final int maxFrameBytes;

  /** A decoder with the default maximum frame size. */
  public ClientFrameDecoder() {
    this(Frames.DEFAULT_MAX_FRAME_BYTES);
  }

  /** A decoder that accepts length fields up to {@code maxFrameBytes}. */
  public ClientFrameDecoder(int maxFrameBytes) {
    super(ByteBuf.class);
    this.maxFrameBytes = maxFrameBytes;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
    out.add(ClientFrameCodec.decode(frame, maxFrameBytes));
  }
}
