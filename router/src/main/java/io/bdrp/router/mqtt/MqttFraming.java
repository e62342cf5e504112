package io.bdrp.router.mqtt;

import io.bdrp.transport.InboundBudget;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Cuts an MQTT connection's byte stream into whole control packets before Netty's {@code
 * MqttDecoder} reads them, and bounds each from its fixed header: the remaining length (a variable
 * byte integer of at most four bytes) is read as soon as its bytes are there, and a packet whose
 * whole size (fixed header included, as MQTT 5's Maximum Packet Size counts it) is above the bound
 * is refused before any of its body is buffered. Until the CONNECT is accepted the bound is {@link
 * io.bdrp.router.config.RouterLimits#HANDSHAKE_FRAME_BYTES}, then {@code limits.maxFrameBytes}.
 *
 * <pre>
 *  +---------------------+------------------------------------+------------------------+
 *  | type u4 | flags u4  | remaining length: 1 to 4 bytes,    | remaining length bytes |
 *  |                     | 7 bits each, low first, bit 7 more |                        |
 *  +---------------------+------------------------------------+------------------------+
 * </pre>
 *
 * <p>Each packet must decode from its own bytes: Netty's decoder, which waits for more bytes when a
 * field runs past what it has, would otherwise take the next packet's bytes into this one. So the
 * packets passed on are counted, and so are the messages the decoder makes ({@link #decodedCount},
 * right after the decoder); a packet that made no message by the time the next one is cut, or the
 * read ends, is malformed (its fields run past its remaining length).
 *
 * <p>The reserved bits of a SUBSCRIBE's subscription options, which the decoder drops, are checked
 * here (MQTT 5 bits 6-7, 3.1.1 bits 2-7, by the protocol level of the connection's CONNECT): set,
 * the packet is malformed.
 *
 * <p>A fault is a {@link MqttFault} ({@code 0x81} for a length field longer than four bytes or
 * longer than its value needs, {@code 0x95} for a packet too large); after it every byte that
 * follows is discarded, and the session ends. Each packet is passed on as a retained slice that the
 * decoder releases.
 *
 * <p>One per connection; on the router's event loop.
 */
final class MqttFraming extends ByteToMessageDecoder {
  private final InboundBudget budget; // or null
  private final InboundBudget.Hold hold; // of the budget, for the partial packet held now; or null
  private int maxPacketBytes;
  private boolean failed;
  private long passed; // packets passed on to the decoder
  private long decoded; // messages the decoder made
  private int level; // the protocol level of the connection's CONNECT, once passed on; or 0

  /** Counts the messages the decoder makes: the pipeline has it right after the decoder. */
  final ChannelInboundHandlerAdapter decodedCount =
      new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          decoded++;
          ctx.fireChannelRead(msg);
        }
      };

  /**
   * @param budget where a partial packet reserves its size until it is complete, shared with the
   *     port's other connections ({@code limits.inboundBufferBytes}); or null for none
   */
  MqttFraming(int maxPacketBytes, InboundBudget budget) {
    this.maxPacketBytes = maxPacketBytes;
    this.budget = budget;
    this.hold = budget == null ? null : budget.newHold();
  }

  /** The bound from the next packet on (the session's, once its CONNECT is accepted). */
  void maxPacketBytes(int bytes) {
    this.maxPacketBytes = bytes;
  }

  /** Stops passing packets on: the session is ending. */
  void discardInput() {
    failed = true;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (passed != decoded) {
      throw fail(in, overrun());
    }
    int start = in.readerIndex();
    int readable = in.readableBytes();
    int remaining = 0;
    int at = 1; // the length field starts after the type and flags byte
    while (true) {
      if (at >= readable) {
        return; // the rest of the fixed header has not arrived
      }
      int b = in.getUnsignedByte(start + at);
      remaining |= (b & 0x7F) << (7 * (at - 1));
      at++;
      if ((b & 0x80) == 0) {
        if (b == 0 && at > 2) { // MQTT 5 MQTT-1.5.5-1: the fewest bytes that hold the value
          throw fail(
              in, new MqttFault(MqttFault.MALFORMED, "remaining length not in fewest bytes"));
        }
        break;
      }
      if (at == 5) {
        throw fail(in, new MqttFault(MqttFault.MALFORMED, "remaining length over four bytes"));
      }
    }
    long total = (long) at + remaining;
    if (total > maxPacketBytes) {
      throw fail(
          in,
          new MqttFault(
              MqttFault.PACKET_TOO_LARGE,
              "a packet of " + total + " bytes, above the maximum of " + maxPacketBytes));
    }
    if (readable < total) {
      if (hold != null) {
        if (!hold.hold(total)) {
          throw fail(
              in,
              new MqttFault(
                  MqttFault.QUOTA_EXCEEDED,
                  "the port's partial packets hold limits.inboundBufferBytes ("
                      + budget.limitBytes()
                      + "); cannot hold one of "
                      + total
                      + " bytes"));
        }
      }
      return;
    }
    release();
    int type = in.getUnsignedByte(start) >> 4;
    if (type == 1 && level == 0) {
      level = level(in, start + at, start + (int) total);
    } else if (type == 8 && reservedOptionBits(in, start + at, start + (int) total, level == 5)) {
      // MQTT 5 MQTT-3.8.3-5, 3.1.1 MQTT-3.8.3-4; Netty's decoder drops these bits
      throw fail(in, new MqttFault(MqttFault.MALFORMED, "reserved subscription option bits set"));
    }
    passed++;
    out.add(in.retainedSlice(start, (int) total));
    in.readerIndex(start + (int) total);
  }

  /** The protocol level of the CONNECT whose body is {@code [from, to)} of {@code in}, or 0. */
  private static int level(ByteBuf in, int from, int to) {
    if (from + 2 > to) {
      return 0;
    }
    int at = from + 2 + in.getUnsignedShort(from); // after the protocol name
    return at < to ? in.getUnsignedByte(at) : 0;
  }

  /**
   * Whether a subscription option of the SUBSCRIBE whose body is {@code [from, to)} of {@code in}
   * has a reserved bit set: bits 6 and 7 in MQTT 5, bits 2 to 7 in 3.1.1. A body that does not
   * parse is left to the decoder.
   */
  private static boolean reservedOptionBits(ByteBuf in, int from, int to, boolean v5) {
    int at = from + 2; // the packet identifier
    if (v5) {
      int length = 0;
      for (int shift = 0; ; shift += 7) {
        if (at >= to || shift > 21) {
          return false;
        }
        int b = in.getUnsignedByte(at++);
        length |= (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          break;
        }
      }
      at += length;
    }
    int reserved = v5 ? 0xC0 : 0xFC;
    while (at + 2 <= to) {
      at += 2 + in.getUnsignedShort(at);
      if (at >= to) {
        return false;
      }
      if ((in.getUnsignedByte(at++) & reserved) != 0) {
        return true;
      }
    }
    return false;
  }

  private static MqttFault overrun() {
    return new MqttFault(
        MqttFault.MALFORMED, "a packet whose fields run past its remaining length");
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    if (!failed && passed != decoded) {
      failed = true;
      ctx.fireExceptionCaught(overrun());
    }
    super.channelReadComplete(ctx);
  }

  private MqttFault fail(ByteBuf in, MqttFault f) {
    failed = true;
    in.skipBytes(in.readableBytes());
    return f;
  }

  private void release() {
    if (hold != null) {
      hold.release();
    }
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    release();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    release();
    super.channelInactive(ctx);
  }
}
