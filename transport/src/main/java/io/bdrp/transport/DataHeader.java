package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The DATA frame's header: a read-only flyweight over a received frame ({@link #wrap}), and the
 * writer of the header of each copy a router sends ({@link #writeHeader}). Neither decodes the
 * message. Offsets are from the start of the frame (its length field), big-endian:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                   length (u32) = 16 + 8*n + m                 |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  version = 1  |  type = 0x26  |   hop limit   |     flags     |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      source router (u16)      |                               |  8
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
 *  |                      message id (u64)                         |
 *  +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                               |   n = D length in words (u16) |  16
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |         D word 0 (u64): routers 0..63, bit j = router j       |  20
 *  +                                                               +
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   ... D word i: routers 64i..64i+63, bit j = router 64i+j ... |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   message: m bytes in MessageCodec form, to the end ...       |  20 + 8n
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *  flags: bit 0 (0x01) broadcast; bits 1..7 reserved, must be 0
 *         (a TRACE_DATA frame, type 0x2C, has this layout too, and bit 1 (0x02) "hosts named")
 *  n:     0 when broadcast (no D: every router gets it), else 1..1024
 *  bit j of a word is (word &gt;&gt;&gt; j) &amp; 1, j = 0 the least significant bit
 * </pre>
 *
 * <p>Fields are not aligned (the words start at offset 20); readers use unaligned loads.
 *
 * <p><b>Reading.</b> A router checks each DATA frame from a neighbour with {@link #wrap} and hands
 * the flyweight to the data plane as its {@link io.bdrp.routing.DataPlane.Packet}: the fields are
 * read where they lie, and nothing in the frame is ever changed. The flyweight never retains or
 * releases the frame it wraps: the caller owns the frame.
 *
 * <p><b>Writing.</b> The router never forwards a received frame as it is, not even to one next hop:
 * the data plane splits D by next hop, and for each copy the router writes a fresh header (the hop
 * limit one less, the copy's part of D in {@link #usedWords} words, or no D for a broadcast) with
 * {@link #writeHeader} straight into the link's output (a TCP session's output batch, a UDP
 * datagram, a shared-memory ring's frame), then the message bytes: copied, or, on TCP when they are
 * large, a retained slice of the frame they arrived in (a neighbour's DATA, or a host's SEND at the
 * ingress router). (The kernel fast path, which rewrites UDP datagrams in place, does not use this
 * class.) {@link #encode} builds a whole frame around a {@link Message}, for tests and tools.
 *
 * <p>Not thread-safe: one flyweight per thread (event loop), re-pointed with {@link #wrap}.
 */
public final class DataHeader implements io.bdrp.routing.DataPlane.Packet {
  /** Offset of the hop limit byte. */
  public static final int HOP_LIMIT_OFFSET = 6;

  /** Offset of the flags byte. */
  public static final int FLAGS_OFFSET = 7;

  /** Offset of the source router number. */
  public static final int SOURCE_OFFSET = 8;

  /** Offset of the message id. */
  public static final int MESSAGE_ID_OFFSET = 10;

  /** Offset of the D length, in 64-bit words. */
  public static final int D_LENGTH_OFFSET = 18;

  /** Offset of the first word of D; also the size of the fixed part of the header. */
  public static final int D_OFFSET = 20;

  /** Flag bit: the frame is a broadcast along the reverse shortest-path tree of the source. */
  public static final int FLAG_BROADCAST = 0x01;

  /**
   * Flag bit of a TRACE_DATA frame only: the tracing user may see the names of the hosts a trace
   * reaches (see {@link TraceFrames}).
   */
  public static final int FLAG_NAMED = 0x02;

  /** Most words of D: enough for router numbers 0..65535. */
  public static final int MAX_D_WORDS = 1024;

  /** Fewest message bytes: an empty message is six bytes. */
  private static final int MIN_MESSAGE_BYTES = 6;

  private ByteBuf buf;
  private int base;

  /** A flyweight wrapping nothing; call {@link #wrap} before use. */
  public DataHeader() {}

  /**
   * Points the flyweight at the DATA frame that fills {@code frame} from its reader index to its
   * writer index, after checking the frame: complete, version 1, type DATA, no reserved flag bit, D
   * length 0 exactly when broadcast and at most {@link #MAX_D_WORDS}, and room for D and a message
   * of at least six bytes. The message itself is not checked: a router decodes it only where it
   * delivers it (this router in D, or a broadcast). Allocates nothing but the exception of a
   * refused frame: the flyweight keeps no copy of the header, whatever D's word count says.
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} (or the framing codes of {@link
   *     Frames#openFrame}) if it is not a valid DATA frame
   */
  public DataHeader wrap(ByteBuf frame) {
    return wrap(frame, FrameType.DATA, FLAG_BROADCAST);
  }

  /**
   * As {@link #wrap}, for a TRACE_DATA frame: the same layout under its own type, whose flags may
   * also carry {@link #FLAG_NAMED} ({@link #named}).
   */
  public DataHeader wrapTrace(ByteBuf frame) {
    return wrap(frame, FrameType.TRACE_DATA, FLAG_BROADCAST | FLAG_NAMED);
  }

  private DataHeader wrap(ByteBuf frame, FrameType expected, int allowedFlags) {
    int start = frame.readerIndex();
    int type = Frames.openFrame(frame, Integer.MAX_VALUE);
    frame.readerIndex(start);
    if (type != expected.number()) {
      throw new ProtocolException(
          ErrorCode.MALFORMED_FRAME, "frame type " + type + " is not " + expected);
    }
    int length = frame.readableBytes();
    if (length < D_OFFSET) {
      throw malformed("header truncated: " + length + " bytes, need " + D_OFFSET);
    }
    int flags = frame.getUnsignedByte(start + FLAGS_OFFSET);
    if ((flags & ~allowedFlags) != 0) {
      throw malformed("reserved flag bits set: 0x" + Integer.toHexString(flags));
    }
    int words = frame.getUnsignedShort(start + D_LENGTH_OFFSET);
    boolean broadcast = (flags & FLAG_BROADCAST) != 0;
    if (broadcast != (words == 0)) {
      throw malformed(
          broadcast ? "broadcast with " + words + " D words" : "no D words and no broadcast flag");
    }
    if (words > MAX_D_WORDS) {
      throw malformed("D length " + words + " exceeds the limit of " + MAX_D_WORDS + " words");
    }
    if (length < D_OFFSET + words * Long.BYTES + MIN_MESSAGE_BYTES) {
      throw malformed(
          "truncated: "
              + words
              + " D words and a message need at least "
              + (D_OFFSET + words * Long.BYTES + MIN_MESSAGE_BYTES)
              + " bytes, the frame has "
              + length);
    }
    this.buf = frame;
    this.base = start;
    return this;
  }

  private static ProtocolException malformed(String detail) {
    return new ProtocolException(ErrorCode.MALFORMED_FRAME, "DATA " + detail);
  }

  /** Further hops the frame may take (0..255). */
  @Override
  public int hopLimit() {
    return buf.getUnsignedByte(base + HOP_LIMIT_OFFSET);
  }

  /** Whether the frame is a broadcast (no D; every router gets it once). */
  @Override
  public boolean isBroadcast() {
    return (buf.getUnsignedByte(base + FLAGS_OFFSET) & FLAG_BROADCAST) != 0;
  }

  /** The router at which the message entered the network. */
  @Override
  public int sourceRouter() {
    return buf.getUnsignedShort(base + SOURCE_OFFSET);
  }

  /** The message id, unique per source router. */
  @Override
  public long messageId() {
    return buf.getLong(base + MESSAGE_ID_OFFSET);
  }

  /** Whether a TRACE_DATA frame's flags carry {@link #FLAG_NAMED}. */
  public boolean named() {
    return (buf.getUnsignedByte(base + FLAGS_OFFSET) & FLAG_NAMED) != 0;
  }

  /** Number of 64-bit words of D (0 for a broadcast). */
  @Override
  public int destinationWords() {
    return buf.getUnsignedShort(base + D_LENGTH_OFFSET);
  }

  /** Word {@code i} of D: routers 64i..64i+63. */
  @Override
  public long destinationWord(int i) {
    if (i < 0 || i >= destinationWords()) {
      throw new IndexOutOfBoundsException("D word " + i + " of " + destinationWords());
    }
    return buf.getLong(base + D_OFFSET + i * Long.BYTES);
  }

  /** Offset of the message from the start of the frame. */
  public int messageOffset() {
    return D_OFFSET + destinationWords() * Long.BYTES;
  }

  /** Number of message bytes. */
  public int messageLength() {
    return buf.getInt(base) + Frames.LENGTH_BYTES - messageOffset();
  }

  /**
   * A DATA frame in one new buffer, with {@code message} encoded into it by {@link MessageCodec}.
   *
   * @param destinations D (1..{@link #MAX_D_WORDS} words), or null when {@code broadcast}
   */
  public static ByteBuf encode(
      ByteBufAllocator alloc,
      int hopLimit,
      boolean broadcast,
      int sourceRouter,
      long messageId,
      long[] destinations,
      Message message) {
    int words = checkFields(hopLimit, broadcast, sourceRouter, destinations);
    int m = MessageCodec.encodedLength(message);
    ByteBuf out = alloc.buffer(D_OFFSET + words * Long.BYTES + m);
    try {
      putHeader(
          out,
          FrameType.DATA,
          broadcast ? FLAG_BROADCAST : 0,
          hopLimit,
          sourceRouter,
          messageId,
          destinations,
          words,
          m);
      Frames.writeVia(out, message, m, MessageCodec::encode);
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  private static int checkFields(
      int hopLimit, boolean broadcast, int sourceRouter, long[] destinations) {
    return checkFields(
        hopLimit,
        broadcast,
        sourceRouter,
        destinations,
        destinations == null ? 0 : destinations.length);
  }

  /** Checks the fields of a header with the first {@code words} words of D; returns its words. */
  private static int checkFields(
      int hopLimit, boolean broadcast, int sourceRouter, long[] destinations, int words) {
    Frames.checkU8("hopLimit", hopLimit);
    Frames.checkU16("sourceRouter", sourceRouter);
    if (broadcast) {
      return 0;
    }
    if (destinations == null || words < 1) {
      throw new IllegalArgumentException("a frame that is not a broadcast needs D");
    }
    if (words > MAX_D_WORDS || words > destinations.length) {
      throw new IllegalArgumentException(
          "D of "
              + words
              + " words: more than "
              + (words > MAX_D_WORDS ? MAX_D_WORDS : destinations.length));
    }
    return words;
  }

  /**
   * Words of {@code d} that a DATA frame carries: up to its last non-zero word, at least one. A
   * receiver reads missing words as zero, so a network numbered below 64 sends one word whatever
   * its {@code maxRouters}.
   */
  public static int usedWords(long[] d) {
    int n = d.length;
    while (n > 1 && d[n - 1] == 0) {
      n--;
    }
    return n;
  }

  /**
   * Bytes of a DATA frame with {@code words} words of D and {@code messageLength} message bytes.
   */
  public static int frameLength(int words, int messageLength) {
    return D_OFFSET + words * Long.BYTES + messageLength;
  }

  /**
   * Writes the header of a DATA frame (everything before the message) at the writer index of {@code
   * out}, whose message of {@code messageLength} bytes the caller writes next: a link writes each
   * copy's header straight into its output batch.
   *
   * @param destinations D, of which the first {@code words} words are written (1..{@link
   *     #MAX_D_WORDS}), or null when {@code broadcast}
   */
  public static void writeHeader(
      ByteBuf out,
      int hopLimit,
      boolean broadcast,
      int sourceRouter,
      long messageId,
      long[] destinations,
      int words,
      int messageLength) {
    int n = checkFields(hopLimit, broadcast, sourceRouter, destinations, words);
    putHeader(
        out,
        FrameType.DATA,
        broadcast ? FLAG_BROADCAST : 0,
        hopLimit,
        sourceRouter,
        messageId,
        destinations,
        n,
        messageLength);
  }

  /**
   * As {@link #writeHeader}, for a TRACE_DATA frame (a trace copy of a message, see {@link
   * TraceFrames}), with {@link #FLAG_NAMED} when {@code named}.
   */
  public static void writeTraceHeader(
      ByteBuf out,
      int hopLimit,
      boolean broadcast,
      boolean named,
      int sourceRouter,
      long traceId,
      long[] destinations,
      int words,
      int messageLength) {
    int n = checkFields(hopLimit, broadcast, sourceRouter, destinations, words);
    putHeader(
        out,
        FrameType.TRACE_DATA,
        (broadcast ? FLAG_BROADCAST : 0) | (named ? FLAG_NAMED : 0),
        hopLimit,
        sourceRouter,
        traceId,
        destinations,
        n,
        messageLength);
  }

  private static void putHeader(
      ByteBuf out,
      FrameType type,
      int flags,
      int hopLimit,
      int sourceRouter,
      long messageId,
      long[] destinations,
      int words,
      int messageLength) {
    Frames.writePrefix(
        out, type, D_OFFSET - Frames.PREFIX_BYTES + words * Long.BYTES + messageLength);
    out.writeByte(hopLimit);
    out.writeByte(flags);
    out.writeShort(sourceRouter);
    out.writeLong(messageId);
    out.writeShort(words);
    for (int i = 0; i < words; i++) {
      out.writeLong(destinations[i]);
    }
  }
}
