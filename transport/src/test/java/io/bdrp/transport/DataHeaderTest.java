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

  /** Routers 1 to 4 and 127, a bitmap (shorter than a list of five); hop limit 16; source 3. */
  static final String UNICAST =
      "00000026 01 26 | 10 | 00 | 0003 | 1122334455667788 | 0002 | 000000000000001E 8000000000000000"
          + " | 0000 00000000";

  /** Routers 1, 2 and 127: a list (6 bytes) rather than a bitmap of two words (16). */
  static final String LIST =
      "0000001C 01 26 | 10 | 04 | 0003 | 1122334455667788 | 0003 | 0001 0002 007F | 0000 00000000";

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
            new long[] {0x1E, 1L << 63},
            EMPTY);
    ByteBuf l =
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
      assertArrayEquals(bytes(LIST), ByteBufUtil.getBytes(l));
      assertArrayEquals(bytes(BROADCAST), ByteBufUtil.getBytes(b));
    } finally {
      u.release();
      l.release();
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
          batch, 16, false, 3, 0x1122334455667788L, new long[] {0x1E, 1L << 63, 99}, 2, m.length);
      batch.writeBytes(m);
      long[] d = {6, 1L << 63};
      DataHeader.writeHeader(
          batch, 16, false, 3, 0x1122334455667788L, d, DataHeader.layoutOf(d), m.length);
      batch.writeBytes(m);
      DataHeader.writeHeader(batch, 8, true, 5, 1, null, 0, m.length);
      batch.writeBytes(m);
      byte[] all = concat(bytes(UNICAST), bytes(LIST), bytes(BROADCAST));
      assertArrayEquals(all, ByteBufUtil.getBytes(batch));
      assertThrows(
          IllegalArgumentException.class,
          () -> DataHeader.writeHeader(batch, 1, false, 3, 1, new long[] {1}, 2, 6));
      assertThrows(
          IllegalArgumentException.class,
          () -> DataHeader.writeHeader(batch, 1, false, 3, 1, null, 1, 6));
      assertThrows(
          IllegalArgumentException.class,
          () -> DataHeader.writeHeader(batch, 1, false, 3, 1, new long[] {6, 1L << 63}, -2, 6),
          "a list layout that does not count D's routers");
      assertEquals(all.length, batch.writerIndex(), "a refused header writes nothing");
    } finally {
      batch.release();
    }
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  @Test
  void eachCopyTakesTheShorterEncodingOfItsD() {
    assertEquals(0, DataHeader.layoutOf(null), "a broadcast has no D");
    assertEquals(1, DataHeader.layoutOf(new long[] {1, 0}), "one word is always a bitmap");
    assertEquals(1, DataHeader.layoutOf(new long[] {-1L}));
    assertEquals(-3, DataHeader.layoutOf(new long[] {6, 1L << 63}), "3 routers: 6 bytes, not 16");
    assertEquals(2, DataHeader.layoutOf(new long[] {0x1E, 1L << 63}), "5 routers: 16 bytes");
    long[] wide = new long[157]; // 10,000 routers
    wide[3] = 1;
    wide[156] = 1L << 15;
    assertEquals(-2, DataHeader.layoutOf(wide));
    assertEquals(4, DataHeader.destinationBytes(-2));
    assertEquals(DataHeader.D_OFFSET + 4 + 30, DataHeader.frameLength(-2, 30));
    long[] dense = new long[157];
    Arrays.fill(dense, -1L);
    assertEquals(157, DataHeader.layoutOf(dense), "every router: the bitmap is shorter");
  }

  @Test
  void readsAListD() {
    ByteBuf l = buf(LIST);
    DataHeader h = new DataHeader().wrap(l);
    assertTrue(h.isList());
    assertEquals(3, h.destinationLength());
    long[] d = new long[2];
    assertEquals(0, h.destinations(d));
    assertArrayEquals(new long[] {6, 1L << 63}, d);
    long[] narrow = {-1L};
    assertEquals(1, h.destinations(narrow), "router 127 is past a one-word table");
    assertArrayEquals(new long[] {6}, narrow, "and the words it has are overwritten");
    assertEquals(26, h.messageOffset());
    assertEquals(EMPTY, Wire.dataMessage(h, l));
    l.release();
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
    assertFalse(h.isList());
    assertEquals(2, h.destinationLength());
    long[] d = new long[3];
    assertEquals(0, h.destinations(d));
    assertArrayEquals(new long[] {0x1E, 1L << 63, 0}, d);
    assertEquals(36, h.messageOffset());
    assertEquals(6, h.messageLength());
    assertEquals(EMPTY, Wire.dataMessage(h, u));
    assertEquals(UNICAST_HEX, Wire.hex(u), "reading changes nothing");
    u.release();

    ByteBuf b = buf(BROADCAST);
    h.wrap(b);
    assertTrue(h.isBroadcast());
    assertFalse(h.isLocalOnly());
    assertEquals(0, h.destinationLength());
    assertEquals(5, h.sourceRouter());
    b.release();

    // The copy of a broadcast the kernel fast path passes up for local delivery only.
    ByteBuf local = buf(BROADCAST.replace("| 01 | 0005", "| 09 | 0005"));
    h.wrap(local);
    assertTrue(h.isBroadcast());
    assertTrue(h.isLocalOnly());
    local.release();
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
      int n = DataHeader.layoutOf(part);
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
      // a list D on a broadcast
      LIST.replace("| 04 | 0003", "| 05 | 0003"),
      // the local-delivery flag without the broadcast flag
      UNICAST.replace("| 00 | 0003", "| 08 | 0003"),
      LIST.replace("| 04 | 0003", "| 0C | 0003"),
      // an empty list
      LIST.replace("| 0003 | 0001 0002 007F", "| 0000 | 0001 0002 007F"),
      // a list out of order, or naming a router twice
      LIST.replace("0001 0002 007F", "0002 0001 007F"),
      LIST.replace("0001 0002 007F", "0001 0001 007F"),
      // a list longer than the frame
      LIST.replace("| 0003 |", "| 0009 |"),
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
