package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.nio.ByteBuffer;

/**
 * Reads a client session's DELIVER frames where they lie in its {@link FrameDecoder}'s input
 * ({@link FrameDecoder.InPlace}), with one {@link MessageCodec.Decoder} kept for the connection:
 * each costs the message it delivers and nothing else, where {@link ClientFrameDecoder} makes a
 * slice, a {@link FrameReader}, a view and a {@link ClientFrame.Deliver} for it. Every other frame
 * goes on to the next handler as ever, and frames reach the session in the order they came.
 *
 * <p>A DELIVER that does not decode fails as {@link ClientFrameCodec#decode} fails it, with the
 * same {@link ProtocolException} ({@link ErrorCode#BAD_MESSAGE} and the position of the bad field,
 * or {@link ErrorCode#MALFORMED_FRAME} for bytes after the message), and the frame decoder discards
 * the rest of its input: the session ends there.
 *
 * <p>One per connection; runs on the connection's event loop.
 */
public final class DeliverReader implements FrameDecoder.InPlace {
  /** Takes each delivered message, in order; called on the connection's event loop. */
  public interface Sink {
    void delivered(Message m);
  }

  private final MessageCodec.Decoder decoder = new MessageCodec.Decoder();
  private final Sink sink;

  public DeliverReader(Sink sink) {
    this.sink = sink;
  }

  @Override
  public boolean take(ChannelHandlerContext ctx, ByteBuf in, int start, int length) {
    if (in.getUnsignedByte(start + Frames.TYPE_OFFSET) != FrameType.DELIVER.number()) {
      return false;
    }
    Message m;
    try {
      m = decode(in, start + Frames.PREFIX_BYTES, length - Frames.PREFIX_BYTES);
    } catch (ProtocolException e) {
      if (ctx.handler() instanceof FrameDecoder frames) {
        frames.discardInput(); // no frame after a bad one is read
      }
      throw e;
    }
    sink.delivered(m);
    return true;
  }

  /**
   * The message of the DELIVER body of {@code bodyBytes} at index {@code body} of {@code in}, read
   * through the buffer's own NIO view (made once per buffer, not once per frame).
   *
   * @throws ProtocolException if the body is not one message
   */
  public Message decode(ByteBuf in, int body, int bodyBytes) {
    ByteBuffer nio =
        in.nioBufferCount() == 1
            ? in.internalNioBuffer(body, bodyBytes)
            : in.nioBuffer(body, bodyBytes);
    int from = nio.position();
    Message m;
    try {
      m = decoder.decode(nio);
    } catch (CodecException e) {
      throw new ProtocolException(
          ErrorCode.BAD_MESSAGE, "bad message: " + e.getMessage(), 0, e.offset() + 1L);
    }
    if (nio.hasRemaining()) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME,
          FrameType.DELIVER
              + " body offset "
              + (nio.position() - from)
              + ": "
              + nio.remaining()
              + " unexpected bytes after the end of the body");
    }
    return m;
  }
}
