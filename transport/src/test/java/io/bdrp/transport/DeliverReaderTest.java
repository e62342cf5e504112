package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.Message;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DELIVER frames read where they lie in the frame decoder's input reach the session in order with
 * the frames decoded as ever, and one that does not decode fails as {@link ClientFrameCodec#decode}
 * fails it; a frame measured once is written as {@link ClientFrameCodec#encode} writes it.
 */
class DeliverReaderTest {
  private static final Message PLAIN = Message.builder().put("bucket", 3L).build();
  private static final Message MIXED =
      Message.builder()
          .put("prix€", "naïve")
          .put("x😀", true)
          .put("ключ", 7L)
          .body(new byte[] {9, 8, 7})
          .build();

  /** What reached the session: messages and frames, in order. */
  private final List<Object> seen = new ArrayList<>();

  private final EmbeddedChannel ch = new EmbeddedChannel();

  @AfterEach
  void tearDown() {
    ch.finishAndReleaseAll();
  }

  private void pipeline() {
    FrameDecoder frames = new FrameDecoder(Frames.DEFAULT_MAX_FRAME_BYTES);
    frames.inPlace(new DeliverReader(seen::add));
    ch.pipeline()
        .addLast(frames)
        .addLast(new ClientFrameDecoder())
        .addLast(
            new SimpleChannelInboundHandler<ClientFrame>() {
              @Override
              protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
                seen.add(f);
              }
            });
  }

  private static byte[] frame(ClientFrame f) {
    ByteBuf b = ClientFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, f);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** The frames in one buffer, as one read brings them. */
  private static ByteBuf read(byte[]... frames) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] f : frames) {
      out.writeBytes(f);
    }
    return Unpooled.wrappedBuffer(out.toByteArray());
  }

  @Test
  void deliveriesAndOtherFramesReachTheSessionInTheOrderTheyCame() {
    pipeline();
    ch.writeInbound(
        read(
            frame(new ClientFrame.Deliver(PLAIN)),
            frame(new ClientFrame.Ping(7)),
            frame(new ClientFrame.Deliver(MIXED)),
            frame(new ClientFrame.Ok(5)),
            frame(new ClientFrame.Deliver(PLAIN))));
    assertEquals(
        List.of(PLAIN, new ClientFrame.Ping(7), MIXED, new ClientFrame.Ok(5), PLAIN), seen);
  }

  @Test
  void aDeliverSplitAcrossReadsIsReadWhenWhole() {
    pipeline();
    byte[] f = frame(new ClientFrame.Deliver(MIXED));
    ch.writeInbound(Unpooled.wrappedBuffer(f, 0, 9));
    assertEquals(List.of(), seen);
    ch.writeInbound(Unpooled.wrappedBuffer(f, 9, f.length - 9));
    assertEquals(List.of(MIXED), seen);
  }

  /** Asserts that the pipeline fails {@code bad} as the frame codec does, and reads no further. */
  private void assertFailsAsTheCodecDoes(byte[] bad) {
    ByteBuf alone = read(bad);
    ProtocolException expected =
        assertThrows(ProtocolException.class, () -> ClientFrameCodec.decode(alone));
    alone.release();
    pipeline();
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                ch.writeInbound(
                    read(
                        frame(new ClientFrame.Deliver(PLAIN)),
                        bad,
                        frame(new ClientFrame.Deliver(PLAIN)),
                        frame(new ClientFrame.Ping(1)))));
    assertEquals(expected.getMessage(), e.getMessage());
    assertEquals(expected.code(), e.code());
    assertEquals(expected.position(), e.position());
    assertEquals(List.of(PLAIN), seen, "nothing after the bad frame");
    ch.writeInbound(read(frame(new ClientFrame.Deliver(PLAIN))));
    assertEquals(List.of(PLAIN), seen, "nor in a later read");
    assertNull(ch.readInbound());
  }

  @Test
  void aMessageThatDoesNotDecodeFailsAsTheCodecFailsIt() {
    byte[] bad = frame(new ClientFrame.Deliver(MIXED));
    bad[Frames.PREFIX_BYTES + 2] = 9; // the first attribute's type tag
    assertFailsAsTheCodecDoes(bad);
  }

  @Test
  void bytesAfterTheMessageFailAsTheCodecFailsThem() {
    byte[] f = frame(new ClientFrame.Deliver(PLAIN));
    byte[] bad = java.util.Arrays.copyOf(f, f.length + 2);
    int length = bad.length - Frames.LENGTH_BYTES;
    bad[3] = (byte) length;
    assertFailsAsTheCodecDoes(bad);
  }

  @Test
  void aFrameMeasuredOnceIsWrittenAsEver() {
    for (ClientFrame f :
        List.of(
            new ClientFrame.Send(4, MIXED),
            new ClientFrame.Deliver(MIXED),
            new ClientFrame.SendReliable(4, 11, 12, MIXED),
            new ClientFrame.Trace(4, 100, MIXED),
            new ClientFrame.Ping(3))) {
      int n = ClientFrameCodec.encodedLength(f);
      ByteBuf out = Unpooled.buffer(8);
      out.writeByte(0x55);
      ClientFrameCodec.encodeMeasured(f, out, n);
      assertEquals(1 + n, out.writerIndex());
      assertArrayEquals(frame(f), ByteBufUtil.getBytes(out, 1, n), f.toString());
      assertEquals(f, ClientFrameCodec.decode(out.skipBytes(1)));
      out.release();
    }
  }

  @Test
  void aWrongLengthFailsAndLeavesTheWriterIndex() {
    ClientFrame f = new ClientFrame.Send(4, MIXED);
    int n = ClientFrameCodec.encodedLength(f);
    for (int wrong : new int[] {n - 1, n + 1}) {
      ByteBuf out = Unpooled.buffer(2 * n);
      out.writeByte(0x55);
      assertThrows(
          IllegalArgumentException.class, () -> ClientFrameCodec.encodeMeasured(f, out, wrong));
      assertEquals(1, out.writerIndex());
      out.release();
    }
    ClientFrame ping = new ClientFrame.Ping(3);
    ByteBuf out = Unpooled.buffer(64);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ClientFrameCodec.encodeMeasured(ping, out, 15));
    assertEquals("PING frame of 15 bytes takes 14 bytes", e.getMessage());
    assertEquals(0, out.writerIndex());
    out.release();
  }
}
