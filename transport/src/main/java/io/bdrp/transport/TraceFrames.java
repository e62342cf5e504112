package io.bdrp.transport;

import io.netty.buffer.ByteBuf;

/**
 * The two router-link frames of message tracing (see {@code docs/trace.md}), big-endian, offsets
 * from the start of the frame (its length field):
 *
 * <pre>
 * TRACE_DATA (0x2C): a trace copy of a message; the layout of DATA ({@link DataHeader}), the
 * message id being the trace id given by the ingress, and flags bit 1 (0x02) "hosts named"
 *   0   length u32                     4   version u8 = 1, type u8 = 0x2C
 *   6   hop limit u8, flags u8          8   source (ingress) router u16
 *   10  trace id u64                    18  n = D length in words u16 (0 for a broadcast)
 *   20  D: n words u64                  20+8n  message: MessageCodec form, to the end
 *
 * TRACE_REPORT (0x2D): what router "router" of the body did with a trace copy; routed hop by hop
 * towards the ingress "source" along the unicast routes, as a reliable acknowledgement is
 *   0   length u32                     4   version u8 = 1, type u8 = 0x2D
 *   6   source (ingress) router u16     8   trace id u64
 *   16  report body ({@link TraceReport}), to the end
 * </pre>
 *
 * <p>Both travel on the TCP session of a router link, whatever transport the link's DATA uses: the
 * kernel fast path never sees them, so a trace copy always comes up to the router's JVM, which
 * reports what the fast path would have done with the real message.
 */
public final class TraceFrames {
  /** Offset of the report body in a TRACE_REPORT frame. */
  public static final int REPORT_BODY_OFFSET = 16;

  /** Offset of the source router in a TRACE_REPORT frame. */
  public static final int REPORT_SOURCE_OFFSET = 6;

  private TraceFrames() {}

  /** Bytes of the TRACE_REPORT frame of {@code report}. */
  public static int reportLength(TraceReport report) {
    return REPORT_BODY_OFFSET + report.encodedLength();
  }

  /** Writes a TRACE_REPORT frame for ingress {@code source} and trace {@code traceId}. */
  public static void writeReport(ByteBuf out, int source, long traceId, TraceReport report) {
    Frames.writePrefix(
        out,
        FrameType.TRACE_REPORT,
        REPORT_BODY_OFFSET - Frames.PREFIX_BYTES + report.encodedLength());
    out.writeShort(Frames.checkU16("source", source));
    out.writeLong(traceId);
    report.encode(out);
  }

  /** The ingress router a TRACE_REPORT frame goes to (the frame's prefix checked by the caller). */
  public static int reportSource(ByteBuf frame) {
    if (frame.readableBytes() < REPORT_BODY_OFFSET) {
      throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "TRACE_REPORT truncated");
    }
    return frame.getUnsignedShort(frame.readerIndex() + REPORT_SOURCE_OFFSET);
  }

  /** A TRACE_REPORT read: its ingress, trace id and report. */
  public record Report(int source, long traceId, TraceReport report) {}

  /**
   * Reads the TRACE_REPORT frame that fills {@code frame} (left as it was).
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} if it does not decode
   */
  public static Report readReport(ByteBuf frame) {
    ByteBuf body = frame.duplicate();
    int type = Frames.openFrame(body, Integer.MAX_VALUE);
    if (type != FrameType.TRACE_REPORT.number()) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME, "frame type " + type + " is not TRACE_REPORT");
    }
    FrameReader r = new FrameReader(body, FrameType.TRACE_REPORT);
    int source = r.u16();
    long traceId = r.i64();
    TraceReport report;
    try {
      report = TraceReport.decode(r);
    } catch (IllegalArgumentException e) {
      throw r.malformed(r.offset(), e.getMessage());
    }
    r.requireEnd();
    return new Report(source, traceId, report);
  }
}
