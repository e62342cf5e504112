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
 *  |             length (u32) = 16 + D's bytes + m                 |  0
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  version = 1  |  type = 0x26  |   hop limit   |     flags     |  4
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      source router (u16)      |                               |  8
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
 *  |                      message id (u64)                         |
 *  +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                               |     n = D's length (u16)      |  16
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  D: a bitmap of n words, or a list of n router numbers ...    |  20
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   message: m bytes in MessageCodec form, to the end ...       |  20 + D's bytes
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *  flags: bit 0 (0x01) broadcast; bit 2 (0x04) D is a list; bit 3 (0x08) local delivery only,
 *         with bit 0, set by this router's kernel fast path alone; the others reserved, must be 0
 *         (a TRACE_DATA frame, type 0x2C, has this layout too, and bit 1 (0x02) "hosts named")
 *  bitmap (bit 2 clear): n words u64, 8n bytes; bit j of word i = router 64i + j, that is
 *          (word &gt;&gt;&gt; j) &amp; 1 with j = 0 the least significant bit; n = 0 exactly when
 *          broadcast (no D: every router gets it), else 1..1024
 *  list (bit 2 set):     n router numbers u16, strictly increasing, 2n bytes; n = 1..4096;
 *          never with the broadcast bit
 * </pre>
 *
 * <p><b>Which encoding.</b> D is written per copy, and each copy carries only its own part of D
 * (the routers its next hop leads to), in the shorter of the two encodings: the bitmap up to its
 * last non-zero word ({@link #usedWords}), or the list when that saves more than one word (2n + 8
 * &lt; 8 &times; words). A D of one word is therefore always a bitmap: in a network numbered below
 * 64 every copy has the layout the kernel fast path reads in place, which takes bitmaps only. In a
 * large network a copy's part of D names a few routers spread over thousands of numbers, and the
 * list is a few bytes where the bitmap would be a kilobyte. {@link #layoutOf} makes the choice;
 * {@link #frameLength} and {@link #writeHeader} take it.
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

  /** Flag bit: D is a list of router numbers rather than a bitmap. */
  public static final int FLAG_D_LIST = 0x04;

  /**
   * Flag bit of a DATA broadcast only, set by the kernel fast path on the one copy it passes up
   * after sending the tree children theirs: deliver locally, forward nothing ({@link
   * #isLocalOnly}). The router takes it only from its own kernel (see {@code DataReceiver}).
   */
  public static final int FLAG_LOCAL = 0x08;

  /** Most words of D: enough for router numbers 0..65535. */
  public static final int MAX_D_WORDS = 1024;

  /**
   * Most routers in a list D: a list is written only when it is shorter than the bitmap, which is
   * at most {@link #MAX_D_WORDS} words, so it names fewer than this.
   */
  public static final int MAX_D_LIST = MAX_D_WORDS * Long.BYTES / Short.BYTES;

  /** Fewest message bytes: an empty message is six bytes. */
  private static final int MIN_MESSAGE_BYTES = 6;

  private ByteBuf buf;
  private int base;
  private boolean list;

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
    return wrap(frame, FrameType.DATA, FLAG_BROADCAST | FLAG_D_LIST | FLAG_LOCAL);
  }

  /**
   * As {@link #wrap}, for a TRACE_DATA frame: the same layout under its own type, whose flags may
   * also carry {@link #FLAG_NAMED} ({@link #named}).
   */
  public DataHeader wrapTrace(ByteBuf frame) {
    return wrap(frame, FrameType.TRACE_DATA, FLAG_BROADCAST | FLAG_NAMED | FLAG_D_LIST);
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
    int n = frame.getUnsignedShort(start + D_LENGTH_OFFSET);
    boolean broadcast = (flags & FLAG_BROADCAST) != 0;
    boolean isList = (flags & FLAG_D_LIST) != 0;
    if ((flags & FLAG_LOCAL) != 0 && !broadcast) {
      throw malformed("local-delivery flag without the broadcast flag");
    }
    int dBytes;
    if (isList) {
      if (broadcast) {
        throw malformed("broadcast with a list D");
      }
      if (n < 1 || n > MAX_D_LIST) {
        throw malformed("D list of " + n + " routers: must be 1.." + MAX_D_LIST);
      }
      dBytes = n * Short.BYTES;
    } else {
      if (broadcast != (n == 0)) {
        throw malformed(
            broadcast ? "broadcast with " + n + " D words" : "no D words and no broadcast flag");
      }
      if (n > MAX_D_WORDS) {
        throw malformed("D length " + n + " exceeds the limit of " + MAX_D_WORDS + " words");
      }
      dBytes = n * Long.BYTES;
    }
    if (length < D_OFFSET + dBytes + MIN_MESSAGE_BYTES) {
      throw malformed(
          "truncated: D of "
              + dBytes
              + " bytes and a message need at least "
              + (D_OFFSET + dBytes + MIN_MESSAGE_BYTES)
              + " bytes, the frame has "
              + length);
    }
    if (isList) {
      int previous = -1;
      for (int i = 0, at = start + D_OFFSET; i < n; i++, at += Short.BYTES) {
        int r = frame.getUnsignedShort(at);
        if (r <= previous) {
          throw malformed("D list not strictly increasing: router " + r + " after " + previous);
        }
        previous = r;
      }
    }
    this.buf = frame;
    this.base = start;
    this.list = isList;
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

  /** Whether a broadcast carries {@link #FLAG_LOCAL}: its copies were sent by the kernel. */
  @Override
  public boolean isLocalOnly() {
    return (buf.getUnsignedByte(base + FLAGS_OFFSET) & FLAG_LOCAL) != 0;
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

  /** Whether D is a list of router numbers ({@link #FLAG_D_LIST}) rather than a bitmap. */
  public boolean isList() {
    return list;
  }

  /** D's length field: words of the bitmap, or routers of the list (0 for a broadcast). */
  public int destinationLength() {
    return buf.getUnsignedShort(base + D_LENGTH_OFFSET);
  }

  @Override
  public int destinations(long[] into) {
    int n = destinationLength();
    int at = base + D_OFFSET;
    java.util.Arrays.fill(into, 0L);
    int beyond = 0;
    if (list) {
      for (int i = 0; i < n; i++, at += Short.BYTES) {
        int r = buf.getUnsignedShort(at);
        if ((r >>> 6) < into.length) {
          into[r >>> 6] |= 1L << r;
        } else {
          beyond++;
        }
      }
    } else {
      for (int i = 0; i < n; i++, at += Long.BYTES) {
        long w = buf.getLong(at);
        if (i < into.length) {
          into[i] = w;
        } else {
          beyond += Long.bitCount(w);
        }
      }
    }
    return beyond;
  }

  /** Offset of the message from the start of the frame. */
  public int messageOffset() {
    return D_OFFSET + destinationLength() * (list ? Short.BYTES : Long.BYTES);
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
    checkFields(hopLimit, broadcast, sourceRouter, destinations);
    int layout = broadcast ? 0 : layoutOf(destinations);
    int m = MessageCodec.encodedLength(message);
    ByteBuf out = alloc.buffer(frameLength(layout, m));
    try {
      putHeader(
          out,
          FrameType.DATA,
          broadcast ? FLAG_BROADCAST : 0,
          hopLimit,
          sourceRouter,
          messageId,
          destinations,
          layout,
          m);
      Frames.writeVia(out, message, m, MessageCodec::encode);
      return out;
    } catch (RuntimeException e) {
      out.release();
      throw e;
    }
  }

  private static void checkFields(
      int hopLimit, boolean broadcast, int sourceRouter, long[] destinations) {
    Frames.checkU8("hopLimit", hopLimit);
    Frames.checkU16("sourceRouter", sourceRouter);
    if (!broadcast && destinations == null) {
      throw new IllegalArgumentException("a frame that is not a broadcast needs D");
    }
  }

  /**
   * Words of {@code d} that a bitmap D carries: up to its last non-zero word, at least one. A
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
   * How a copy whose D is {@code d} (null: a broadcast) is written, for {@link #frameLength} and
   * {@link #writeHeader}: {@code w > 0}, a bitmap of {@code w} words; {@code -n < 0}, a list of
   * {@code n} routers; 0, no D (a broadcast). The list when it saves more than one word.
   */
  public static int layoutOf(long[] d) {
    if (d == null) {
      return 0;
    }
    int words = usedWords(d);
    if (words == 1) {
      return 1;
    }
    if (words > MAX_D_WORDS) {
      throw new IllegalArgumentException("D of " + words + " words: more than " + MAX_D_WORDS);
    }
    int n = 0;
    for (int i = 0; i < words; i++) {
      n += Long.bitCount(d[i]);
    }
    return n > 0 && n * Short.BYTES + Long.BYTES < words * Long.BYTES ? -n : words;
  }

  /** Bytes of D in a header written with {@code layout} ({@link #layoutOf}). */
  public static int destinationBytes(int layout) {
    return layout >= 0 ? layout * Long.BYTES : -layout * Short.BYTES;
  }

  /**
   * Bytes of a DATA frame with D written with {@code layout} ({@link #layoutOf}) and {@code
   * messageLength} message bytes.
   */
  public static int frameLength(int layout, int messageLength) {
    return D_OFFSET + destinationBytes(layout) + messageLength;
  }

  /**
   * Writes the header of a DATA frame (everything before the message) at the writer index of {@code
   * out}, whose message of {@code messageLength} bytes the caller writes next: a link writes each
   * copy's header straight into its output batch.
   *
   * @param destinations D, or null when {@code broadcast}
   * @param layout how D is written: {@link #layoutOf}{@code (destinations)}, which the caller has
   *     already asked to size the frame
   */
  public static void writeHeader(
      ByteBuf out,
      int hopLimit,
      boolean broadcast,
      int sourceRouter,
      long messageId,
      long[] destinations,
      int layout,
      int messageLength) {
    checkLayout(hopLimit, broadcast, sourceRouter, destinations, layout);
    putHeader(
        out,
        FrameType.DATA,
        broadcast ? FLAG_BROADCAST : 0,
        hopLimit,
        sourceRouter,
        messageId,
        destinations,
        layout,
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
      int layout,
      int messageLength) {
    checkLayout(hopLimit, broadcast, sourceRouter, destinations, layout);
    putHeader(
        out,
        FrameType.TRACE_DATA,
        (broadcast ? FLAG_BROADCAST : 0) | (named ? FLAG_NAMED : 0),
        hopLimit,
        sourceRouter,
        traceId,
        destinations,
        layout,
        messageLength);
  }

  private static void checkLayout(
      int hopLimit, boolean broadcast, int sourceRouter, long[] destinations, int layout) {
    checkFields(hopLimit, broadcast, sourceRouter, destinations);
    if (broadcast != (layout == 0) || (layout > 0 && layout > destinations.length)) {
      throw new IllegalArgumentException(
          "layout "
              + layout
              + (broadcast ? " for a broadcast" : " for a D of " + destinations.length + " words"));
    }
  }

  /** Writes a header of {@code type}; {@link #FLAG_D_LIST} is added to {@code flags} for a list. */
  private static void putHeader(
      ByteBuf out,
      FrameType type,
      int flags,
      int hopLimit,
      int sourceRouter,
      long messageId,
      long[] destinations,
      int layout,
      int messageLength) {
    int start = out.writerIndex();
    Frames.writePrefix(
        out, type, D_OFFSET - Frames.PREFIX_BYTES + destinationBytes(layout) + messageLength);
    out.writeByte(hopLimit);
    out.writeByte(layout < 0 ? flags | FLAG_D_LIST : flags);
    out.writeShort(sourceRouter);
    out.writeLong(messageId);
    if (layout >= 0) {
      out.writeShort(layout);
      for (int i = 0; i < layout; i++) {
        out.writeLong(destinations[i]);
      }
    } else {
      out.writeShort(-layout);
      int written = 0;
      for (int i = 0; i < destinations.length; i++) {
        long w = destinations[i];
        while (w != 0) {
          out.writeShort((i << 6) + Long.numberOfTrailingZeros(w));
          w &= w - 1;
          written++;
        }
      }
      if (written != -layout) {
        out.writerIndex(start);
        throw new IllegalArgumentException(
            "layout " + layout + " for a D of " + written + " routers");
      }
    }
  }
}
