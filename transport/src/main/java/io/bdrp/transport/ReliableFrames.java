package io.bdrp.transport;

import io.bdrp.routing.DataPlane;
import io.bdrp.routing.Reliable;
import io.netty.buffer.ByteBuf;

/**
 * The two router-link frames of the reliable service ({@link Reliable}), big-endian, offsets from
 * the start of the frame (its length field):
 *
 * <pre>
 * RELIABLE_DATA (0x2A): a copy of a reliable message
 *   0   length u32                     4   version u8 = 1, type u8 = 0x2A
 *   6   hop limit u8, flags u8          8   source router u16
 *   10  message id u64                  18  n = D's length u16
 *   20  D, b bytes: flags 0, a bitmap of n words u64 (bit j of word i = router 64i+j, n 1..1024,
 *       b = 8n); flags 0x04, a list of n router numbers u16, strictly increasing (n 1..4096,
 *       b = 2n); in the shorter, as DATA's D ({@link DataHeader#layoutOf})
 *   20+b        ingress epoch u64, publisher u64, publisher's number u64
 *   44+b        k u16: entries, one per router of this copy's D, ascending
 *   46+b        k entries: router u16, number u64, floor u64 (18 bytes each)
 *   46+b+18k    message: MessageCodec form, to the end (at least 6 bytes)
 *
 * RELIABLE_ACK (0x2B): router "router" has delivered every reliable message of ingress
 * "source" under "epoch" numbered for it up to "through"; routed towards the ingress
 *   0   length u32 = 22                4   version u8 = 1, type u8 = 0x2B
 *   6   source u16    8   epoch u64    16  router u16    18  through u64      (26 bytes)
 * </pre>
 *
 * <p>A copy's entries are those of the routers of its own part of D ({@link Reliable.Header}
 * carries every router of the message's D; the writer keeps those of the copy), so a copy's size
 * shrinks with its partition as D does. Both frames travel on the TCP session of a router link,
 * whatever transport the link's DATA uses.
 */
public final class ReliableFrames {
  /** Bytes of an acknowledgement frame. */
  public static final int ACK_BYTES = 26;

  /** Bytes of one entry (router, number, floor). */
  public static final int ENTRY_BYTES = 18;

  private static final int D_OFFSET = DataHeader.D_OFFSET;
  private static final int FIXED_AFTER_D = 26;
  private static final int MIN_MESSAGE_BYTES = 6;

  private ReliableFrames() {}

  /** Entries of {@code h} whose router is in {@code d}. */
  static int entries(Reliable.Header h, long[] d) {
    int k = 0;
    for (int r : h.routers()) {
      if (in(d, r)) {
        k++;
      }
    }
    return k;
  }

  private static boolean in(long[] d, int r) {
    return (r >>> 6) < d.length && (d[r >>> 6] & (1L << r)) != 0;
  }

  /**
   * Bytes of a RELIABLE_DATA frame for a copy with D written with {@code layout} ({@link
   * DataHeader#layoutOf}) and {@code entries}.
   */
  private static int frameLength(int layout, int entries, int messageLength) {
    return D_OFFSET
        + DataHeader.destinationBytes(layout)
        + FIXED_AFTER_D
        + entries * ENTRY_BYTES
        + messageLength;
  }

  /**
   * Bytes of the frame of a copy of a message of {@code messageLength} bytes whose part of D is
   * {@code d}, with header {@code h}.
   */
  public static int frameLength(long[] d, Reliable.Header h, int messageLength) {
    return frameLength(DataHeader.layoutOf(d), entries(h, d), messageLength);
  }

  /**
   * Writes the header of a RELIABLE_DATA frame (everything before the message, whose {@code
   * messageLength} bytes the caller writes next): the copy's part of D and the entries of {@code h}
   * for the routers in it.
   */
  public static void writeHeader(
      ByteBuf out,
      int hopLimit,
      int sourceRouter,
      long messageId,
      long[] d,
      Reliable.Header h,
      int messageLength) {
    int layout = DataHeader.layoutOf(d);
    int k = entries(h, d);
    Frames.writePrefix(
        out, FrameType.RELIABLE_DATA, frameLength(layout, k, messageLength) - Frames.PREFIX_BYTES);
    out.writeByte(Frames.checkU8("hop limit", hopLimit));
    out.writeByte(layout < 0 ? DataHeader.FLAG_D_LIST : 0);
    out.writeShort(Frames.checkU16("source router", sourceRouter));
    out.writeLong(messageId);
    out.writeShort(Math.abs(layout));
    if (layout > 0) {
      for (int i = 0; i < layout; i++) {
        out.writeLong(d[i]);
      }
    } else {
      for (int i = 0; i < d.length; i++) {
        for (long w = d[i]; w != 0; w &= w - 1) {
          out.writeShort((i << 6) + Long.numberOfTrailingZeros(w));
        }
      }
    }
    out.writeLong(h.epoch());
    out.writeLong(h.publisher());
    out.writeLong(h.publisherSeq());
    out.writeShort(k);
    for (int i = 0; i < h.routers().length; i++) {
      int r = h.routers()[i];
      if (in(d, r)) {
        out.writeShort(r);
        out.writeLong(h.seqs()[i]);
        out.writeLong(h.floors()[i]);
      }
    }
  }

  /**
   * A RELIABLE_DATA frame read: its DATA-like header, its reliable header, where its message lies.
   */
  public static final class Copy implements DataPlane.Packet {
    private final int hopLimit;
    private final int source;
    private final long messageId;
    private final long[] d;
    private final Reliable.Header header;
    private final int messageOffset;
    private final int messageLength;

    private Copy(
        int hopLimit,
        int source,
        long messageId,
        long[] d,
        Reliable.Header header,
        int messageOffset,
        int messageLength) {
      this.hopLimit = hopLimit;
      this.source = source;
      this.messageId = messageId;
      this.d = d;
      this.header = header;
      this.messageOffset = messageOffset;
      this.messageLength = messageLength;
    }

    @Override
    public int hopLimit() {
      return hopLimit;
    }

    @Override
    public boolean isBroadcast() {
      return false;
    }

    @Override
    public int sourceRouter() {
      return source;
    }

    @Override
    public long messageId() {
      return messageId;
    }

    @Override
    public int destinations(long[] into) {
      return DataPlane.Packet.copyBitmap(d, into);
    }

    /** The reliable header, with this copy's entries. */
    public Reliable.Header header() {
      return header;
    }

    /** Offset of the message from the frame's reader index. */
    public int messageOffset() {
      return messageOffset;
    }

    /** Length of the message in bytes. */
    public int messageLength() {
      return messageLength;
    }
  }

  /**
   * Reads the RELIABLE_DATA frame that fills {@code frame} (reader to writer index; left as it
   * was), after checking it: complete, version 1, no flag but the list's, D of 1..1024 words or a
   * list of 1..4096 routers in increasing order, at most one entry per router of D, in ascending
   * order, each with number at least 1 and floor between 1 and the number, and a message of at
   * least six bytes. Allocation is bounded by the frame.
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} (or the framing codes of {@link
   *     Frames#openFrame}) if it is not
   */
  public static Copy read(ByteBuf frame) {
    int start = frame.readerIndex();
    try {
      int type = Frames.openFrame(frame, Integer.MAX_VALUE);
      if (type != FrameType.RELIABLE_DATA.number()) {
        throw malformed("frame type " + type + " is not RELIABLE_DATA");
      }
      int length = frame.readableBytes() + Frames.PREFIX_BYTES;
      if (length < D_OFFSET) {
        throw malformed("header truncated: " + length + " bytes");
      }
      int hopLimit = frame.getUnsignedByte(start + DataHeader.HOP_LIMIT_OFFSET);
      int flags = frame.getUnsignedByte(start + DataHeader.FLAGS_OFFSET);
      if (flags != 0 && flags != DataHeader.FLAG_D_LIST) {
        throw malformed("flags 0x" + Integer.toHexString(flags) + " on a reliable copy");
      }
      boolean list = flags == DataHeader.FLAG_D_LIST;
      int source = frame.getUnsignedShort(start + DataHeader.SOURCE_OFFSET);
      long id = frame.getLong(start + DataHeader.MESSAGE_ID_OFFSET);
      int n = frame.getUnsignedShort(start + DataHeader.D_LENGTH_OFFSET);
      int max = list ? DataHeader.MAX_D_LIST : DataHeader.MAX_D_WORDS;
      if (n < 1 || n > max) {
        throw malformed("D length " + n + " outside 1.." + max);
      }
      int at = start + D_OFFSET;
      int dBytes = n * (list ? Short.BYTES : Long.BYTES);
      if (length < D_OFFSET + dBytes + FIXED_AFTER_D + MIN_MESSAGE_BYTES) {
        throw malformed("truncated: " + length + " bytes for " + dBytes + " bytes of D");
      }
      long[] d;
      int members;
      if (list) {
        int last = frame.getUnsignedShort(at + dBytes - Short.BYTES);
        d = new long[(last >>> 6) + 1];
        int previous = -1;
        for (int i = 0; i < n; i++, at += Short.BYTES) {
          int r = frame.getUnsignedShort(at);
          if (r <= previous) {
            throw malformed("D list not strictly increasing: router " + r + " after " + previous);
          }
          d[r >>> 6] |= 1L << r;
          previous = r;
        }
        members = n;
      } else {
        d = new long[n];
        members = 0;
        for (int i = 0; i < n; i++, at += Long.BYTES) {
          d[i] = frame.getLong(at);
          members += Long.bitCount(d[i]);
        }
      }
      long epoch = frame.getLong(at);
      long publisher = frame.getLong(at + 8);
      long publisherSeq = frame.getLong(at + 16);
      int k = frame.getUnsignedShort(at + 24);
      at += FIXED_AFTER_D;
      int end = start + length;
      if (k > members || at + (long) k * ENTRY_BYTES + MIN_MESSAGE_BYTES > end) {
        throw malformed(k + " entries for " + members + " routers of D, or past the frame's end");
      }
      int[] routers = new int[k];
      long[] seqs = new long[k];
      long[] floors = new long[k];
      for (int i = 0; i < k; i++) {
        routers[i] = frame.getUnsignedShort(at);
        seqs[i] = frame.getLong(at + 2);
        floors[i] = frame.getLong(at + 10);
        at += ENTRY_BYTES;
        if (i > 0 && routers[i] <= routers[i - 1]) {
          throw malformed("entries not in ascending router order");
        }
        if (!in(d, routers[i])) {
          throw malformed("entry for router " + routers[i] + ", which is not in D");
        }
        if (seqs[i] < 1 || floors[i] < 1 || floors[i] > seqs[i]) {
          throw malformed("entry for router " + routers[i] + ": number or floor out of range");
        }
      }
      Reliable.Header h =
          new Reliable.Header(epoch, publisher, publisherSeq, routers, seqs, floors);
      return new Copy(hopLimit, source, id, d, h, at - start, end - at);
    } finally {
      frame.readerIndex(start);
    }
  }

  /** Writes a RELIABLE_ACK frame. */
  public static void writeAck(ByteBuf out, Reliable.Ack a) {
    Frames.writePrefix(out, FrameType.RELIABLE_ACK, ACK_BYTES - Frames.PREFIX_BYTES);
    out.writeShort(Frames.checkU16("source router", a.source()));
    out.writeLong(a.epoch());
    out.writeShort(Frames.checkU16("router", a.router()));
    out.writeLong(a.through());
  }

  /**
   * Reads the RELIABLE_ACK frame that fills {@code frame} (left as it was).
   *
   * @throws ProtocolException if it is not one
   */
  public static Reliable.Ack readAck(ByteBuf frame) {
    int start = frame.readerIndex();
    try {
      int type = Frames.openFrame(frame, Integer.MAX_VALUE);
      if (type != FrameType.RELIABLE_ACK.number()) {
        throw malformed("frame type " + type + " is not RELIABLE_ACK");
      }
      if (frame.readableBytes() != ACK_BYTES - Frames.PREFIX_BYTES) {
        throw malformed("acknowledgement of " + (frame.readableBytes() + 6) + " bytes, not 26");
      }
      int at = start + Frames.PREFIX_BYTES;
      return new Reliable.Ack(
          frame.getUnsignedShort(at),
          frame.getLong(at + 2),
          frame.getUnsignedShort(at + 10),
          frame.getLong(at + 12));
    } finally {
      frame.readerIndex(start);
    }
  }

  private static ProtocolException malformed(String why) {
    return new ProtocolException(ErrorCode.MALFORMED_FRAME, why);
  }
}
