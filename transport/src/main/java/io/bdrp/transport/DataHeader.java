package io.bdrp.transport;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.MessageCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.nio.ByteBuffer;

/**
 * Flyweight over one DATA frame in a {@link ByteBuf}: reads the fixed-layout header and rewrites it
 * in place, and makes per-next-hop copies that share the message bytes, without ever decoding the
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
 *  n:     0 when broadcast (no D: every router gets it), else 1..1024
 *  bit j of a word is (word &gt;&gt;&gt; j) &amp; 1, j = 0 the least significant bit
 * </pre>
 *
 * <p>Fields are not aligned (the words start at offset 20); readers use unaligned loads.
 *
 * <p><b>Ownership.</b> The flyweight never retains or releases the frame it wraps: the caller owns
 * the frame. {@link #copyWith} returns a new buffer that owns one reference to the message bytes of
 * the frame (a retained slice) and a small header of its own, so the caller may release the frame
 * as soon as it has made every copy; each copy is released by its last consumer (a channel write
 * releases what it writes). A frame forwarded unchanged to one next hop needs no copy: rewrite it
 * in place and pass the frame itself on.
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
   * of at least six bytes. The message itself is not checked ({@link #decodeMessage} does that, at
   * the egress router). Allocates nothing but the exception of a refused frame: the flyweight keeps
   * no copy of the header, whatever D's word count says.
   *
   * @throws ProtocolException {@link ErrorCode#MALFORMED_FRAME} (or the framing codes of {@link
   *     Frames#openFrame}) if it is not a valid DATA frame
   */
  public DataHeader wrap(ByteBuf frame) {
    int start = frame.readerIndex();
    int type = Frames.openFrame(frame, Integer.MAX_VALUE);
    frame.readerIndex(start);
    if (type != FrameType.DATA.number()) {
      throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "frame type " + type + " is not DATA");
    }
    int length = frame.readableBytes();
    if (length < D_OFFSET) {
      throw malformed("header truncated: " + length + " bytes, need " + D_OFFSET);
    }
    int flags = frame.getUnsignedByte(start + FLAGS_OFFSET);
    if ((flags & ~FLAG_BROADCAST) != 0) {
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

  /** The wrapped frame (not retained). */
  public ByteBuf frame() {
    return buf;
  }

  /** Further hops the frame may take (0..255). */
  @Override
  public int hopLimit() {
    return buf.getUnsignedByte(base + HOP_LIMIT_OFFSET);
  }

  /**
   * Takes one hop off the hop limit, in place. Returns false, and changes nothing, when the limit
   * is already exhausted (0): the frame must then be dropped and counted.
   */
  public boolean decrementHopLimit() {
    int h = hopLimit();
    if (h == 0) {
      return false;
    }
    buf.setByte(base + HOP_LIMIT_OFFSET, h - 1);
    return true;
  }

  /** The flags byte. */
  public int flags() {
    return buf.getUnsignedByte(base + FLAGS_OFFSET);
  }

  /** Whether the frame is a broadcast (no D; every router gets it once). */
  @Override
  public boolean isBroadcast() {
    return (flags() & FLAG_BROADCAST) != 0;
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

  /** D as an array of words (allocates; for tests and the control path). */
  public long[] destinations() {
    long[] d = new long[destinationWords()];
    for (int i = 0; i < d.length; i++) {
      d[i] = destinationWord(i);
    }
    return d;
  }

  /**
   * Copies D into {@code out} without allocating: its first words from D, the rest zero (words of D
   * beyond {@code out}'s length are left out). Returns {@code out}.
   */
  public long[] destinationsInto(long[] out) {
    int n = Math.min(out.length, destinationWords());
    for (int i = 0; i < n; i++) {
      out[i] = destinationWord(i);
    }
    java.util.Arrays.fill(out, n, out.length, 0L);
    return out;
  }

  /** Whether router {@code r} is in D (false for a broadcast, which has no D). */
  public boolean containsRouter(int r) {
    int w = r >>> 6;
    return r >= 0 && w < destinationWords() && (destinationWord(w) >>> (r & 63) & 1) != 0;
  }

  /**
   * Removes router {@code r} from D, in place (a router takes itself out before forwarding). Does
   * nothing if {@code r} is not in D.
   */
  public void clearRouter(int r) {
    int w = r >>> 6;
    if (r < 0 || w >= destinationWords()) {
      return;
    }
    int at = base + D_OFFSET + w * Long.BYTES;
    buf.setLong(at, buf.getLong(at) & ~(1L << (r & 63)));
  }

  /** Whether D has no router left. */
  public boolean isDestinationEmpty() {
    for (int i = 0; i < destinationWords(); i++) {
      if (destinationWord(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /** Offset of the message from the start of the frame. */
  public int messageOffset() {
    return D_OFFSET + destinationWords() * Long.BYTES;
  }

  /** Number of message bytes. */
  public int messageLength() {
    return buf.getInt(base) + Frames.LENGTH_BYTES - messageOffset();
  }

  /** The message bytes as a slice that shares the frame's memory and is not retained. */
  public ByteBuf messageBytes() {
    return buf.slice(base + messageOffset(), messageLength());
  }

  /**
   * Decodes the message, for exact local delivery. With {@link #wrap}, this stays within the bound
   * of the router-link decoders ({@link RouterFrameCodec#ALLOCATION_PER_BYTE} bytes per frame byte
   * plus {@link RouterFrameCodec#ALLOCATION_FIXED}): the attribute count is checked against its
   * limit and the bytes left before anything is allocated for it, and the body is copied once (a
   * byte a byte). The costliest message per byte is the most attributes (1,024) of the smallest
   * kind (a boolean of a two-character name, 5 bytes): about 23 bytes allocated a frame byte, 31
   * without compressed references ({@code RouterFrameAllocationTest}).
   *
   * @throws ProtocolException {@link ErrorCode#BAD_MESSAGE} if it does not decode or does not fill
   *     the rest of the frame
   */
  public Message decodeMessage() {
    ByteBuffer nio = buf.nioBuffer(base + messageOffset(), messageLength()).slice();
    Message m;
    try {
      m = MessageCodec.decode(nio);
    } catch (CodecException e) {
      throw new ProtocolException(
          ErrorCode.BAD_MESSAGE, "bad message in DATA: " + e.getMessage(), 0, e.offset() + 1L);
    }
    if (nio.hasRemaining()) {
      throw new ProtocolException(
          ErrorCode.BAD_MESSAGE,
          "bad message in DATA: " + nio.remaining() + " unexpected bytes after the message",
          0,
          nio.position() + 1L);
    }
    return m;
  }

  /**
   * A copy of the frame with another hop limit and D, for one next hop: a fresh header of {@code 20
   * + 8 * destinations.length} bytes followed by a retained slice of this frame's message bytes, as
   * one {@link CompositeByteBuf}. The caller owns the returned buffer and still owns the frame.
   *
   * @param destinations D for the next hop, 1..{@link #MAX_D_WORDS} words (word i = routers
   *     64i..64i+63); ignored (no D is written) when this frame is a broadcast
   */
  public ByteBuf copyWith(ByteBufAllocator alloc, int hopLimit, long[] destinations) {
    return compose(
        alloc,
        hopLimit,
        isBroadcast(),
        sourceRouter(),
        messageId(),
        isBroadcast() ? null : destinations,
        buf.retainedSlice(base + messageOffset(), messageLength()));
  }

  /**
   * A DATA frame from its fields and the message bytes already encoded, as a composite of a new
   * header and {@code message}, which it takes over: the returned buffer owns the reference of
   * {@code message} that the caller passed (also when this method throws, in which case it is
   * released). Used at the ingress router: encode the message once, then compose one frame per next
   * hop with {@code message.retainedDuplicate()}.
   *
   * @param destinations D (1..{@link #MAX_D_WORDS} words), or null when {@code broadcast}
   */
  public static ByteBuf compose(
      ByteBufAllocator alloc,
      int hopLimit,
      boolean broadcast,
      int sourceRouter,
      long messageId,
      long[] destinations,
      ByteBuf message) {
    ByteBuf header = null;
    try {
      int words = checkFields(hopLimit, broadcast, sourceRouter, destinations);
      header = alloc.buffer(D_OFFSET + words * Long.BYTES);
      putHeader(
          header,
          hopLimit,
          broadcast,
          sourceRouter,
          messageId,
          destinations,
          words,
          message.readableBytes());
      CompositeByteBuf frame = alloc.compositeBuffer(2);
      frame.addComponents(true, header, message);
      return frame;
    } catch (RuntimeException e) {
      message.release();
      if (header != null) {
        header.release();
      }
      throw e;
    }
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
      putHeader(out, hopLimit, broadcast, sourceRouter, messageId, destinations, words, m);
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
    putHeader(out, hopLimit, broadcast, sourceRouter, messageId, destinations, n, messageLength);
  }

  private static void putHeader(
      ByteBuf out,
      int hopLimit,
      boolean broadcast,
      int sourceRouter,
      long messageId,
      long[] destinations,
      int words,
      int messageLength) {
    Frames.writePrefix(
        out, FrameType.DATA, D_OFFSET - Frames.PREFIX_BYTES + words * Long.BYTES + messageLength);
    out.writeByte(hopLimit);
    out.writeByte(broadcast ? FLAG_BROADCAST : 0);
    out.writeShort(sourceRouter);
    out.writeLong(messageId);
    out.writeShort(words);
    for (int i = 0; i < words; i++) {
      out.writeLong(destinations[i]);
    }
  }
}
