package io.bdrp.encoding.codec;

import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Binary encoding of a {@link Message}: its typed attributes and its body. Big-endian, whatever the
 * byte order set on the buffer. The full description, with examples, is in {@code
 * docs/wire-encoding.md}.
 *
 * <pre>
 *  +------------------+
 *  | attrCount   u16  |  0 .. Limits.MAX_ATTRIBUTES (1024)
 *  +------------------+
 *  attrCount times, in the message's name order:
 *  +---------+---------+--------------------+------------------------+
 *  | tag  u8 | nLen u8 | name: nLen bytes   | value, laid out by tag |
 *  +---------+---------+--------------------+------------------------+
 *     tag = ValueType.wireTag; nLen 1 .. 255; name is UTF-8
 *
 *  value:
 *    1 STRING   +----------+---------------------+
 *               | sLen u16 | sLen bytes of UTF-8 |
 *               +----------+---------------------+
 *    2 INTEGER  +-------------------------------+
 *               | i64, two's complement         |
 *               +-------------------------------+
 *    3 DOUBLE   +-------------------------------+
 *               | f64, IEEE-754 bits, finite    |
 *               +-------------------------------+
 *    4 BOOLEAN  +-------+
 *               | u8    |  0 = false, 1 = true
 *               +-------+
 *
 *  +------------------+---------------------+
 *  | bodyLength  u32  | body: bodyLength B  |  0 .. Limits.MAX_BODY_BYTES (1 MiB)
 *  +------------------+---------------------+
 * </pre>
 *
 * <p>The smallest encoding (no attributes, empty body) is six zero bytes. The encoder writes
 * attributes in the message's name order ({@link String#compareTo}), so equal messages have equal
 * encodings; the decoder accepts them in any order but rejects a repeated name.
 *
 * <p>Decoding validates every field before it uses it: counts and lengths are checked against
 * {@link Limits} and against the bytes that remain before anything is allocated for them, type tags
 * must be known, names non-empty, UTF-8 strict (no overlong forms, lone continuation bytes or
 * encoded surrogates), doubles finite, booleans 0 or 1. Any fault is a {@link CodecException}
 * naming the offset of the bad field; no read goes past the buffer's limit.
 *
 * <p>Stateless and thread-safe: each call works on the buffer it is given, which the caller owns
 * for the duration of the call.
 */
public final class MessageCodec {
  /** Smallest attribute: tag, name length, a one-byte name, a boolean. */
  private static final int MIN_ATTRIBUTE_BYTES = 4;

  private static final int BODY_LENGTH_BYTES = 4;

  private MessageCodec() {}

  /** Exact number of bytes that {@link #encode} writes for {@code m}. */
  public static int encodedLength(Message m) {
    // At most 1024 * (2 + 256 + 65537) + 4 + 2^20 bytes: no overflow.
    int n = 2;
    for (int i = 0; i < m.size(); i++) {
      n += 1 + WireWriter.nameLength(m.name(i)) + WireWriter.valueLength(m.value(i));
    }
    return n + BODY_LENGTH_BYTES + m.bodyLength();
  }

  /**
   * Writes {@code m} at the position of {@code out} and advances the position by {@link
   * #encodedLength(Message)} bytes.
   *
   * @throws BufferOverflowException if fewer than {@code encodedLength(m)} bytes remain; nothing is
   *     written then and the position is unchanged
   */
  public static void encode(Message m, ByteBuffer out) {
    encode(m, out, encodedLength(m));
  }

  /**
   * As {@link #encode(Message, ByteBuffer)} for a caller that has measured {@code m} already:
   * {@code length} is {@link #encodedLength(Message) encodedLength(m)}, so that a frame codec that
   * sized its buffer by it does not measure every name and string again.
   *
   * @throws BufferOverflowException if fewer than {@code length} bytes remain; nothing is written
   *     then and the position is unchanged
   * @throws IllegalArgumentException if {@code m} did not take {@code length} bytes (the position
   *     is then unchanged, the bytes after it undefined)
   */
  public static void encode(Message m, ByteBuffer out, int length) {
    if (out.remaining() < length) {
      throw new BufferOverflowException();
    }
    int start = out.position();
    // A big-endian buffer (every buffer but one set otherwise) is written as it is, without a view.
    ByteBuffer o =
        out.order() == ByteOrder.BIG_ENDIAN ? out : out.duplicate().order(ByteOrder.BIG_ENDIAN);
    try {
      o.putShort((short) m.size());
      for (int i = 0; i < m.size(); i++) {
        Value v = m.value(i);
        o.put(v.type().wireTag());
        WireWriter.putName(o, m.name(i));
        WireWriter.putValue(o, v);
      }
      o.putInt(m.bodyLength());
      if (o.remaining() < m.bodyLength()) {
        throw new BufferOverflowException(); // never copied past the limit by hand
      }
      if (o.hasArray()) {
        m.copyBody(o.array(), o.arrayOffset() + o.position());
        o.position(o.position() + m.bodyLength());
      } else {
        m.copyBody(o);
      }
    } catch (BufferOverflowException e) {
      out.position(start);
      throw new IllegalArgumentException(
          "message of " + length + " bytes takes more than that: " + encodedLength(m), e);
    }
    int end = o.position();
    if (end - start != length) {
      out.position(start);
      throw new IllegalArgumentException(
          "message of " + length + " bytes takes " + (end - start) + " bytes");
    }
    out.position(end);
  }

  /** {@code m} encoded into a new array of exactly {@link #encodedLength(Message)} bytes. */
  public static byte[] toBytes(Message m) {
    byte[] bytes = new byte[encodedLength(m)];
    encode(m, ByteBuffer.wrap(bytes));
    return bytes;
  }

  /**
   * Reads one message starting at the position of {@code in} and advances the position to the byte
   * after it; bytes after the message are left for the caller.
   *
   * @throws CodecException if the bytes are not a valid message; the position is then unchanged
   */
  public static Message decode(ByteBuffer in) {
    return decode(new WireReader(in), in);
  }

  /**
   * Decodes messages one after another with the same working state (the reader and its scratch
   * arrays), for a connection that decodes a message a frame: the state is made once, not once a
   * message. A big-endian input is read in place rather than through a view of its own. Not
   * thread-safe: one thread at a time.
   */
  public static final class Decoder {
    private final WireReader reader = new WireReader();

    /**
     * The last message decoded name by name, and the UTF-8 of its names: a message with the same
     * names in the same order (a stream's usual case) is read against them and shares them, with
     * neither a string nor a check of its own for each name.
     */
    private Message shape;

    private byte[][] shapeNames;

    /** As {@link MessageCodec#decode(ByteBuffer)}. */
    public Message decode(ByteBuffer in) {
      if (in.order() != ByteOrder.BIG_ENDIAN) {
        return MessageCodec.decode(in);
      }
      WireReader r = reader;
      int start = in.position();
      int end = in.limit();
      r.readInPlace(in);
      try {
        Message m = shape == null ? null : sameNames(r, in);
        if (m == null) {
          in.limit(end).position(start);
          r.readInPlace(in);
          m = MessageCodec.decode(r, in);
          remember(m);
        }
        return m;
      } catch (RuntimeException e) {
        in.limit(end).position(start);
        throw e;
      }
    }

    /**
     * The message, if its names are the shape's in the shape's order; else null, having read no
     * value that moved {@code in}. What fails here fails the same way read name by name.
     */
    private Message sameNames(WireReader r, ByteBuffer in) {
      byte[][] names = shapeNames;
      int countAt = r.offset();
      int count = r.u16();
      if (count != names.length) {
        return null;
      }
      r.requireItems(countAt, count, "attributes", MIN_ATTRIBUTE_BYTES, BODY_LENGTH_BYTES);
      Value[] values = new Value[count];
      for (int i = 0; i < count; i++) {
        ValueType type = r.typeTag();
        if (!r.nameIs(names[i])) {
          return null;
        }
        values[i] = r.value(type);
      }
      int bodyAt = r.offset();
      long bodyLength = r.u32();
      WireReader.checkLimit(bodyAt, "body length", bodyLength, Limits.MAX_BODY_BYTES);
      byte[] body = bodyLength == 0 ? NO_BODY : r.bytes((int) bodyLength);
      Message m = shape.withValues(values, body);
      in.position(r.position());
      return m;
    }

    private void remember(Message m) {
      byte[][] names = new byte[m.size()][];
      for (int i = 0; i < names.length; i++) {
        names[i] = m.name(i).getBytes(StandardCharsets.UTF_8);
      }
      shape = m;
      shapeNames = names;
    }
  }

  private static final byte[] NO_BODY = new byte[0];

  private static Message decode(WireReader r, ByteBuffer in) {
    int countAt = r.offset();
    int count = r.u16();
    WireReader.checkLimit(countAt, "attribute count", count, Limits.MAX_ATTRIBUTES);
    r.requireItems(countAt, count, "attributes", MIN_ATTRIBUTE_BYTES, BODY_LENGTH_BYTES);
    Message.Builder b = Message.builder(count); // the message takes the builder's arrays
    for (int i = 0; i < count; i++) {
      ValueType type = r.typeTag();
      int nameAt = r.offset();
      String name = r.name();
      Value value = r.value(type);
      try {
        b.put(name, value);
      } catch (IllegalArgumentException e) {
        // The name and value passed every check above, so only a repeated name gets here.
        throw new CodecException(nameAt, e.getMessage());
      }
    }
    int bodyAt = r.offset();
    long bodyLength = r.u32();
    WireReader.checkLimit(bodyAt, "body length", bodyLength, Limits.MAX_BODY_BYTES);
    if (bodyLength > 0) {
      int n = (int) bodyLength;
      b.body(r.window(n)); // copied from where it lies
      r.skipWindow(n);
    }
    Message m = b.build();
    in.position(r.position());
    return m;
  }

  /** Reads one message that must fill {@code bytes} exactly. */
  public static Message fromBytes(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    Message m = decode(in);
    if (in.hasRemaining()) {
      throw new CodecException(
          in.position(), "unexpected bytes after the end of the message: " + in.remaining());
    }
    return m;
  }
}
