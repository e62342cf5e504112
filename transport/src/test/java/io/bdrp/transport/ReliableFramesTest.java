package io.bdrp.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.routing.Reliable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ReliableFramesTest {
  private static final Message M = Message.builder().put("x", 7L).put("s", "reliable").build();

  private static byte[] message() {
    ByteBuffer b = ByteBuffer.allocate(MessageCodec.encodedLength(M));
    MessageCodec.encode(M, b);
    return b.array();
  }

  /**
   * D = {3, 70, 130}, written as a list (6 bytes against three words); the header also names router
   * 9, which this copy does not go to.
   */
  private static final long[] D = {1L << 3, 1L << 6, 1L << 2};

  /** D = {0..7, 70, 130}: ten routers, a bitmap of three words (24 bytes against a list's 20). */
  private static final long[] DENSE = {0xFF, 1L << 6, 1L << 2};

  private static final Reliable.Header H =
      new Reliable.Header(
          42L,
          0x1234_5678_9ABCL,
          17L,
          new int[] {3, 9, 70, 130},
          new long[] {5, 6, 7, 8},
          new long[] {5, 1, 2, 8});

  private static ByteBuf copy() {
    return copy(D);
  }

  private static ByteBuf copy(long[] d) {
    byte[] body = message();
    ByteBuf b = Unpooled.buffer();
    ReliableFrames.writeHeader(b, 9, 12, -77L, d, H, body.length);
    b.writeBytes(body);
    return b;
  }

  @Test
  void aCopyCarriesItsPartOfDAndOnlyTheEntriesOfThoseRouters() {
    ByteBuf b = copy();
    assertEquals(ReliableFrames.frameLength(D, H, message().length), b.readableBytes());
    assertEquals(DataHeader.FLAG_D_LIST, b.getByte(DataHeader.FLAGS_OFFSET));
    assertEquals(
        DataHeader.frameLength(-3, message().length) + H.encodedLength(D),
        b.readableBytes(),
        "the simulator's size of a copy is the frame's");
    ReliableFrames.Copy c = ReliableFrames.read(b);
    assertEquals(0, b.readerIndex(), "the frame is left as it was");
    assertEquals(9, c.hopLimit());
    assertEquals(12, c.sourceRouter());
    assertEquals(-77L, c.messageId());
    assertFalse(c.isBroadcast());
    long[] d = new long[3];
    assertEquals(0, c.destinations(d));
    assertArrayEquals(D, d);
    Reliable.Header h = c.header();
    assertEquals(42L, h.epoch());
    assertEquals(0x1234_5678_9ABCL, h.publisher());
    assertEquals(17L, h.publisherSeq());
    assertArrayEquals(new int[] {3, 70, 130}, h.routers(), "router 9 is not in this copy's D");
    assertArrayEquals(new long[] {5, 7, 8}, h.seqs());
    assertArrayEquals(new long[] {5, 2, 8}, h.floors());
    ByteBuffer m = b.nioBuffer(c.messageOffset(), c.messageLength());
    assertEquals(M, MessageCodec.decode(m));
    b.release();
  }

  @Test
  void aDenseDGoesAsABitmap() {
    ByteBuf b = copy(DENSE);
    assertEquals(0, b.getByte(DataHeader.FLAGS_OFFSET));
    assertEquals(
        DataHeader.frameLength(3, message().length) + H.encodedLength(DENSE), b.readableBytes());
    ReliableFrames.Copy c = ReliableFrames.read(b);
    long[] d = new long[3];
    assertEquals(0, c.destinations(d));
    assertArrayEquals(DENSE, d);
    assertArrayEquals(new int[] {3, 70, 130}, c.header().routers());
    b.release();
  }

  @Test
  void anAcknowledgementRoundTrips() {
    ByteBuf b = Unpooled.buffer();
    Reliable.Ack a = new Reliable.Ack(65_000, -5L, 7, 123_456_789L);
    ReliableFrames.writeAck(b, a);
    assertEquals(ReliableFrames.ACK_BYTES, b.readableBytes());
    assertEquals(a, ReliableFrames.readAck(b));
    b.release();
  }

  private static void assertMalformed(ByteBuf b, String why) {
    ProtocolException e = assertThrows(ProtocolException.class, () -> ReliableFrames.read(b));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code(), why);
    assertEquals(0, b.readerIndex(), why + ": the frame is left as it was");
    b.release();
  }

  /** Offset of the first entry of {@link #copy()} (a list of three routers). */
  private static final int ENTRIES = DataHeader.D_OFFSET + 3 * 2 + 26;

  @Test
  void malformedCopiesAreRefusedWithoutReadingPastTheFrame() {
    ByteBuf b = copy();
    b.setByte(DataHeader.FLAGS_OFFSET, 1);
    assertMalformed(b, "a broadcast flag");

    b = copy();
    b.setShort(ENTRIES - 2, 4);
    assertMalformed(b, "more entries than the frame holds");

    b = copy();
    b.setShort(ENTRIES + 18, 2); // second entry: router 2, below the first (3)
    assertMalformed(b, "entries out of order");

    b = copy();
    b.setShort(ENTRIES, 4); // router 4 is not in D
    assertMalformed(b, "an entry for a router outside D");

    b = copy();
    b.setLong(ENTRIES + 10, 6); // floor 6 above number 5
    assertMalformed(b, "a floor above its number");

    b = copy();
    b.setLong(ENTRIES + 2, 0);
    assertMalformed(b, "number 0");

    b = copy();
    b.setShort(DataHeader.D_LENGTH_OFFSET, 0);
    assertMalformed(b, "no D");

    b = copy();
    b.setShort(DataHeader.D_OFFSET + 2, 3); // list 3, 3, 130
    assertMalformed(b, "a router twice in the list");

    b = copy();
    b.setByte(DataHeader.FLAGS_OFFSET, DataHeader.FLAG_D_LIST | 1);
    assertMalformed(b, "a broadcast flag beside the list's");

    ByteBuf truncated = copy();
    ByteBuf cut = truncated.copy(0, ENTRIES + 10);
    truncated.release();
    cut.setInt(0, cut.readableBytes() - 4);
    assertTrue(cut.readableBytes() < ENTRIES + 18);
    assertMalformed(cut, "cut inside an entry");
  }

  @Test
  void anAcknowledgementOfTheWrongSizeIsRefused() {
    ByteBuf b = Unpooled.buffer();
    ReliableFrames.writeAck(b, new Reliable.Ack(1, 2, 3, 4));
    b.writeByte(0);
    b.setInt(0, b.readableBytes() - 4);
    ProtocolException e = assertThrows(ProtocolException.class, () -> ReliableFrames.readAck(b));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    b.release();
  }
}
