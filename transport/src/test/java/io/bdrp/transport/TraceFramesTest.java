package io.bdrp.transport;

import static io.bdrp.transport.Wire.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** TRACE_DATA and TRACE_REPORT: golden bytes, round trips, and refusals of bad input. */
class TraceFramesTest {
  private static final TraceReport REPORT =
      new TraceReport(
          4,
          2,
          31,
          TraceReport.LOCAL,
          List.of(
              new TraceReport.Copy(6, true, true, new int[] {6, 9}),
              new TraceReport.Copy(7, false, false, new int[] {7})),
          3,
          List.of(new TraceReport.Host(12, ""), new TraceReport.Host(13, "")),
          List.of(new TraceReport.Dropped("link", 1, new int[] {7})));

  @Test
  void aReportFrameHasItsGoldenBytesAndReadsBack() {
    ByteBuf b = Unpooled.buffer();
    TraceFrames.writeReport(b, 1, 0x0102030405060708L, REPORT);
    assertArrayEquals(
        bytes(
            "00000043 01 2d | 0001 | 0102030405060708 | 0004 0002 1f 04"
                + " | 0002 | 0006 00 01 0002 0006 0009 | 0007 01 00 0001 0007"
                + " | 00000003 | 02 0000000c 00 0000000d 00"
                + " | 01 04 6c696e6b 00000001 0001 0007"),
        ByteBufUtil.getBytes(b),
        ByteBufUtil.hexDump(b));
    assertEquals(TraceFrames.reportLength(REPORT), b.readableBytes());
    assertEquals(1, TraceFrames.reportSource(b));
    TraceFrames.Report r = TraceFrames.readReport(b);
    assertEquals(0, b.readerIndex(), "the frame is left as it was");
    assertEquals(new TraceFrames.Report(1, 0x0102030405060708L, REPORT), r);
    assertEquals(1, r.report().sent());
    assertTrue(r.report().local());
    assertFalse(r.report().ingress());
  }

  @Test
  void aReportThatListsMoreHostsThanMatchIsRefused() {
    ByteBuf b = Unpooled.buffer();
    TraceFrames.writeReport(b, 1, 5, REPORT);
    // matching (3) becomes 1, below the two hosts listed.
    int matchingAt = TraceFrames.REPORT_BODY_OFFSET + 6 + 2 + 10 + 8;
    assertEquals(3, b.getInt(matchingAt));
    b.setInt(matchingAt, 1);
    ProtocolException e = assertThrows(ProtocolException.class, () -> TraceFrames.readReport(b));
    assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
  }

  @Test
  void aReportWhoseCountsOutrunItsBytesIsRefused() {
    ByteBuf b = Unpooled.buffer();
    TraceFrames.writeReport(b, 1, 5, REPORT);
    b.setShort(TraceFrames.REPORT_BODY_OFFSET + 6, 0xFFFF); // 65,535 copies in a few bytes
    assertThrows(ProtocolException.class, () -> TraceFrames.readReport(b));
  }

  @Test
  void aTraceCopyHasTheLayoutOfDataUnderItsOwnType() {
    Message m = Message.builder().put("x", 1L).build();
    ByteBuffer body = ByteBuffer.allocate(MessageCodec.encodedLength(m));
    MessageCodec.encode(m, body);
    ByteBuf b = Unpooled.buffer();
    long[] d = {1L << 5};
    DataHeader.writeTraceHeader(b, 9, false, true, 3, 77L, d, 1, body.capacity());
    b.writeBytes(body.array());
    assertEquals(FrameType.TRACE_DATA.number(), b.getUnsignedByte(Frames.TYPE_OFFSET));
    DataHeader h = new DataHeader().wrapTrace(b);
    assertEquals(9, h.hopLimit());
    assertEquals(3, h.sourceRouter());
    assertEquals(77L, h.messageId());
    assertTrue(h.named());
    assertFalse(h.isBroadcast());
    long[] read = new long[1];
    assertEquals(0, h.destinations(read));
    assertEquals(1L << 5, read[0]);
    assertThrows(ProtocolException.class, () -> new DataHeader().wrap(b), "not taken as DATA");
    b.setByte(DataHeader.FLAGS_OFFSET, 0x08);
    assertThrows(ProtocolException.class, () -> new DataHeader().wrapTrace(b), "reserved flag bit");
  }
}
