package io.bdrp.transport;

import static io.bdrp.transport.Wire.buf;
import static io.bdrp.transport.Wire.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The DATA header flyweight: golden bytes, in-place rewrites, per-hop copies and ownership. */
class DataHeaderTest {
  static final Message EMPTY = Message.builder().build();

  /** Routers 1, 2 and 127; hop limit 16; source 3. */
  static final String UNICAST =
      "00000026 01 26 | 10 | 00 | 0003 | 1122334455667788 | 0002 | 0000000000000006 8000000000000000"
          + " | 0000 00000000";

  static final String BROADCAST =
      "00000016 01 26 | 08 | 01 | 0005 | 0000000000000001 | 0000 | 0000 00000000";

  @Test
  void encodesTheGoldenVectors() {
    ByteBuf u =
        DataHeader.encode(
            UnpooledByteBufAllocator.DEFAULT,
            16,
            false,
            3,
            0x1122334455667788L,
            new long[] {6, 1L << 63},
            EMPTY);
    ByteBuf b = DataHeader.encode(UnpooledByteBufAllocator.DEFAULT, 8, true, 5, 1, null, EMPTY);
    try {
      assertArrayEquals(bytes(UNICAST), ByteBufUtil.getBytes(u));
      assertArrayEquals(bytes(BROADCAST), ByteBufUtil.getBytes(b));
    } finally {
      u.release();
      b.release();
    }
  }

  @Test
  void writesTheGoldenHeadersIntoABatchBeforeTheMessage() {
    byte[] m = ByteBufUtil.getBytes(Unpooled.wrappedBuffer(bytes("0000 00000000")));
    ByteBuf batch = Unpooled.buffer();
    try {
      // The first two of three words of D: a link writes its network's words, not the array's.
      DataHeader.writeHeader(
          batch, 16, false, 3, 0x1122334455667788L, new long[] {6, 1L << 63, 99}, 2, m.length);
      batch.writeBytes(m);
      DataHeader.writeHeader(batch, 8, true, 5, 1, null, 0, m.length);
      batch.writeBytes(m);
      byte[] both = new byte[bytes(UNICAST).length + bytes(BROADCAST).length];
      System.arraycopy(bytes(UNICAST), 0, both, 0, bytes(UNICAST).length);
      System.arraycopy(bytes(BROADCAST), 0, both, bytes(UNICAST).length, bytes(BROADCAST).length);
      assertArrayEquals(both, ByteBufUtil.getBytes(batch));
      assertThrows(
          IllegalArgumentException.class,
          () -> DataHeader.writeHeader(batch, 1, false, 3, 1, new long[] {1}, 2, 6));
      assertThrows(
          IllegalArgumentException.class,
          () -> DataHeader.writeHeader(batch, 1, false, 3, 1, null, 1, 6));
      assertEquals(both.length, batch.writerIndex(), "a refused header writes nothing");
    } finally {
      batch.release();
    }
  }

  @Test
  void aCopyCarriesDUpToItsLastRouter() {
    assertEquals(1, DataHeader.usedWords(new long[] {6, 0, 0, 0}));
    assertEquals(2, DataHeader.usedWords(new long[] {0, 1L << 63, 0}));
    assertEquals(3, DataHeader.usedWords(new long[] {0, 0, 1}));
    assertEquals(1, DataHeader.usedWords(new long[] {0, 0}), "an empty D still has its one word");
  }

  @Test
  void readsTheGoldenVectors() {
    ByteBuf u = buf(UNICAST);
    DataHeader h = new DataHeader().wrap(u);
    assertEquals(16, h.hopLimit());
    assertFalse(h.isBroadcast());
    assertEquals(3, h.sourceRouter());
    assertEquals(0x1122334455667788L, h.messageId());
    assertEquals(2, h.destinationWords());
    assertArrayEquals(new long[] {6, 1L << 63}, h.destinations());
    assertTrue(h.containsRouter(1) && h.containsRouter(2) && h.containsRouter(127));
    assertFalse(h.containsRouter(0) || h.containsRouter(3) || h.containsRouter(128));
    assertFalse(h.containsRouter(65535));
    assertEquals(36, h.messageOffset());
    assertEquals(6, h.messageLength());
    assertEquals(EMPTY, h.decodeMessage());
    u.release();

    ByteBuf b = buf(BROADCAST);
    h.wrap(b);
    assertTrue(h.isBroadcast());
    assertEquals(0, h.destinationWords());
    assertEquals(5, h.sourceRouter());
    assertFalse(h.containsRouter(0));
    b.release();
  }

  @Test
  void rewritesInPlace() {
    ByteBuf u = buf(UNICAST);
    DataHeader h = new DataHeader().wrap(u);
    h.clearRouter(2);
    h.clearRouter(127);
    h.clearRouter(9000); // beyond D: nothing
    assertTrue(h.decrementHopLimit());
    assertEquals(
        Wire.hex(
            buf(
                "00000026 01 26 0f 00 0003 1122334455667788 0002 0000000000000002"
                    + " 0000000000000000 000000000000")),
        Wire.hex(u));
    h.clearRouter(1);
    assertTrue(h.isDestinationEmpty());
    u.release();

    ByteBuf z = buf(BROADCAST.replace("| 08 |", "| 00 |"));
    h.wrap(z);
    assertFalse(h.decrementHopLimit());
    assertEquals(0, h.hopLimit());
    z.release();
  }

  @Test
  void splitsIntoPerHopCopiesThatShareTheMessage() {
    for (ByteBufAllocator alloc :
        new ByteBufAllocator[] {UnpooledByteBufAllocator.DEFAULT, PooledByteBufAllocator.DEFAULT}) {
      Message m = Message.builder().put("price", 10L).body(new byte[] {1, 2, 3}).build();
      long[] d = new long[3];
      d[0] = 0b1110; // routers 1, 2, 3
      d[2] = 1; // router 128
      ByteBuf frame = DataHeader.encode(alloc, 9, false, 7, 42, d, m);
      DataHeader h = new DataHeader().wrap(frame);
      // Self is router 2: take it out, then split the rest over two next hops.
      assertTrue(h.containsRouter(2));
      h.clearRouter(2);
      ByteBuf a = h.copyWith(alloc, h.hopLimit() - 1, new long[] {0b1010});
      ByteBuf b = h.copyWith(alloc, h.hopLimit() - 1, new long[] {0, 0, 1});
      frame.release(); // the forwarder is done with the original: the copies keep the body alive
      assertEquals(1, frame.refCnt() > 0 ? 1 : 0, "body shared by the copies");

      DataHeader ha = new DataHeader().wrap(a);
      assertEquals(8, ha.hopLimit());
      assertEquals(7, ha.sourceRouter());
      assertEquals(42, ha.messageId());
      assertArrayEquals(new long[] {0b1010}, ha.destinations());
      assertEquals(m, ha.decodeMessage());
      DataHeader hb = new DataHeader().wrap(b);
      assertArrayEquals(new long[] {0, 0, 1}, hb.destinations());
      assertTrue(hb.containsRouter(128));
      assertEquals(m, hb.decodeMessage());
      assertEquals(ha.messageBytes(), hb.messageBytes());

      a.release();
      assertTrue(frame.refCnt() > 0);
      b.release();
      assertEquals(0, frame.refCnt());
    }
  }

  @Test
  void ingressComposesFramesAroundOneEncodedMessage() {
    ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    Message m = Message.builder().put("sym", "IBM").build();
    ByteBuf body = alloc.buffer(MessageCodec.encodedLength(m));
    Frames.writeVia(body, m, MessageCodec.encodedLength(m), MessageCodec::encode);
    ByteBuf one =
        DataHeader.compose(alloc, 4, false, 1, 5, new long[] {2}, body.retainedDuplicate());
    ByteBuf all = DataHeader.compose(alloc, 4, true, 1, 5, null, body.retainedDuplicate());
    body.release();
    assertEquals(m, new DataHeader().wrap(one).decodeMessage());
    assertTrue(new DataHeader().wrap(all).isBroadcast());
    // A composed frame goes through the router-link pipeline like any other buffer.
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
    ch.writeInbound(one);
    ByteBuf received = ch.readInbound();
    assertEquals(m, new DataHeader().wrap(received).decodeMessage());
    received.release();
    all.release();
    assertEquals(0, body.refCnt());
    assertFalse(ch.finishAndReleaseAll());
  }

  @Test
  void composeReleasesTheMessageWhenItRefuses() {
    ByteBuf body = Unpooled.buffer(6).writeZero(6);
    assertThrows(
        IllegalArgumentException.class,
        () ->
            DataHeader.compose(
                UnpooledByteBufAllocator.DEFAULT, 1, false, 1, 1, new long[0], body));
    assertEquals(0, body.refCnt());
  }

  @Test
  void refusesMalformedHeaders() {
    String[] bad = {
      // reserved flag bit
      BROADCAST.replace("| 01 | 0005", "| 03 | 0005"),
      // broadcast flag with D words
      UNICAST.replace("| 00 | 0003", "| 01 | 0003"),
      // no D and no broadcast flag
      BROADCAST.replace("| 01 | 0005", "| 00 | 0005"),
      // D length beyond the frame
      UNICAST.replace("| 0002 |", "| 0003 |"),
      // D length over the limit
      UNICAST.replace("| 0002 |", "| 0401 |"),
      // not DATA
      UNICAST.replace("01 26", "01 25"),
      // header cut short
      "00000010 01 26 10 00 0003 1122334455667788 00",
    };
    for (String hex : bad) {
      ByteBuf in = buf(hex);
      ProtocolException e = assertThrows(ProtocolException.class, () -> new DataHeader().wrap(in));
      assertEquals(ErrorCode.MALFORMED_FRAME, e.code(), hex);
      in.release();
    }
  }

  @Test
  void badMessageIsFoundOnlyWhenDecoded() {
    byte[] frame = bytes(UNICAST);
    byte[] bad = Arrays.copyOf(frame, frame.length);
    bad[bad.length - 1] = 9; // body length 9 > the 0 bytes that follow
    ByteBuf in = Unpooled.wrappedBuffer(bad);
    DataHeader h = new DataHeader().wrap(in); // the header is fine: transit routers forward it
    ProtocolException e = assertThrows(ProtocolException.class, h::decodeMessage);
    assertEquals(ErrorCode.BAD_MESSAGE, e.code());
    assertEquals(7, e.position()); // the missing body bytes, after the 6 bytes of count and length
    in.release();
  }
}
