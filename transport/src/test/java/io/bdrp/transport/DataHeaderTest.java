package io.bdrp.transport;

import static io.bdrp.transport.Wire.buf;
import static io.bdrp.transport.Wire.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The DATA header: golden bytes read and written, copies for next hops, refused headers. */
class DataHeaderTest {
  static final Message EMPTY = Message.builder().build();

  /** Routers 1, 2 and 127; hop limit 16; source 3. */
  static final String UNICAST =
      "00000026 01 26 | 10 | 00 | 0003 | 1122334455667788 | 0002 | 0000000000000006 8000000000000000"
          + " | 0000 00000000";

  static final String UNICAST_HEX = Wire.hex(Wire.buf(UNICAST));

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
    assertEquals(6, h.destinationWord(0));
    assertEquals(1L << 63, h.destinationWord(1));
    assertThrows(IndexOutOfBoundsException.class, () -> h.destinationWord(2));
    assertEquals(36, h.messageOffset());
    assertEquals(6, h.messageLength());
    assertEquals(EMPTY, Wire.dataMessage(h, u));
    assertEquals(UNICAST_HEX, Wire.hex(u), "reading changes nothing");
    u.release();

    ByteBuf b = buf(BROADCAST);
    h.wrap(b);
    assertTrue(h.isBroadcast());
    assertEquals(0, h.destinationWords());
    assertEquals(5, h.sourceRouter());
    assertThrows(IndexOutOfBoundsException.class, () -> h.destinationWord(0));
    b.release();
  }

  @Test
  void aCopyForANextHopIsAFreshHeaderBeforeTheSameMessageBytes() {
    // As a router forwards: read the frame, write each copy's header (hop limit one less, the
    // copy's part of D) into the link's output, then the message bytes; the frame is not touched.
    Message m = Message.builder().put("price", 10L).body(new byte[] {1, 2, 3}).build();
    long[] d = new long[3];
    d[0] = 0b1110; // routers 1, 2, 3
    d[2] = 1; // router 128
    ByteBuf frame = DataHeader.encode(UnpooledByteBufAllocator.DEFAULT, 9, false, 7, 42, d, m);
    String before = Wire.hex(frame);
    DataHeader h = new DataHeader().wrap(frame);
    long[][] parts = {{0b1010, 0, 0}, {0, 0, 1}};
    ByteBuf out = Unpooled.buffer();
    for (long[] part : parts) {
      int n = DataHeader.usedWords(part);
      DataHeader.writeHeader(
          out,
          h.hopLimit() - 1,
          h.isBroadcast(),
          h.sourceRouter(),
          h.messageId(),
          part,
          n,
          h.messageLength());
      out.writeBytes(Wire.messageBytes(h, frame));
    }
    assertEquals(before, Wire.hex(frame), "the received frame is not rewritten");
    // The batch holds two whole frames, each read back by the flyweight.
    int[] words = {1, 3};
    for (int i = 0; i < parts.length; i++) {
      int length = out.getInt(out.readerIndex()) + Frames.LENGTH_BYTES;
      ByteBuf copy = out.readSlice(length);
      DataHeader c = new DataHeader().wrap(copy);
      assertEquals(8, c.hopLimit());
      assertEquals(7, c.sourceRouter());
      assertEquals(42, c.messageId());
      assertArrayEquals(Arrays.copyOf(parts[i], words[i]), Wire.destinations(c));
      assertEquals(m, Wire.dataMessage(c, copy));
      assertEquals(Wire.messageBytes(h, frame), Wire.messageBytes(c, copy));
    }
    assertEquals(0, out.readableBytes());
    out.release();
    frame.release();
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
  void wrapDoesNotCheckTheMessage() {
    byte[] frame = bytes(UNICAST);
    byte[] bad = Arrays.copyOf(frame, frame.length);
    bad[bad.length - 1] = 9; // body length 9 > the 0 bytes that follow
    ByteBuf in = Unpooled.wrappedBuffer(bad);
    DataHeader h = new DataHeader().wrap(in); // the header is fine: transit routers forward it
    assertEquals(6, h.messageLength());
    assertNull(Wire.dataMessage(h, in), "only a decode for delivery finds it");
    in.release();
  }
}
