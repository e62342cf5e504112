package io.bdrp.encoding.codec;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Binary encoding of a {@link Predicate}: a disjunction of conjunctions of constraints. Big-endian,
 * whatever the byte order set on the buffer. The full description, with examples, is in {@code
 * docs/wire-encoding.md}.
 *
 * <pre>
 *  +------------------+
 *  | conjCount   u16  |  0 .. Limits.MAX_CONJUNCTIONS (1024); 0 is Predicate.NONE
 *  +------------------+
 *  conjCount times:
 *  +-------------+
 *  | consCount u8|  0 .. Limits.MAX_CONSTRAINTS (64); 0 is true (Predicate.ALL: it absorbs the rest)
 *  +-------------+
 *    consCount times:
 *    +-------+---------+------------------+---------+------------------------+
 *    | op u8 | nLen u8 | name: nLen bytes | tag u8  | value, laid out by tag |
 *    +-------+---------+------------------+---------+------------------------+
 *      op = Op.wireCode                     \___ absent when op is EXISTS ___/
 *
 *  op:    1 =   2 !=   3 &lt;   4 &lt;=   5 &gt;   6 &gt;=   7 prefix   8 suffix   9 contains   10 exists
 *  tag and value: as in {@link MessageCodec} (1 STRING, 2 INTEGER, 3 DOUBLE, 4 BOOLEAN)
 * </pre>
 *
 * <p>The encoder writes the predicate's canonical form (conjunctions and constraints in canonical
 * order, numeric operands canonical), so equal predicates have equal encodings. The decoder accepts
 * any order and any form, checks every field, and builds the result with {@link Predicate#of},
 * which canonicalises it: a decoded predicate is always canonical, and may have fewer conjunctions
 * than were encoded (duplicates, absorbed or contradictory ones are dropped).
 *
 * <p>Decoding validates every field before it uses it: counts against {@link Limits} and against
 * the bytes that remain, operator codes and type tags must be known, the operator must apply to the
 * operand's type ({@code prefix} on an integer is an error at the type tag), and values follow the
 * same rules as in messages. Any fault is a {@link CodecException} naming the offset of the bad
 * field; no read goes past the buffer's limit.
 *
 * <p>Stateless and thread-safe: each call works on the buffer it is given, which the caller owns
 * for the duration of the call.
 */
public final class PredicateCodec {
  /** Smallest constraint: op, name length, a one-byte name (an {@code exists}). */
  private static final int MIN_CONSTRAINT_BYTES = 3;

  /** Smallest conjunction: its count alone (0: the conjunction of no constraints, true). */
  private static final int MIN_CONJUNCTION_BYTES = 1;

  private PredicateCodec() {}

  /**
   * Exact number of bytes that {@link #encode} writes for {@code p}.
   *
   * @throws ArithmeticException if the encoding would exceed {@link Integer#MAX_VALUE} bytes (only
   *     possible for a predicate near every limit at once: 1024 conjunctions of 64 constraints with
   *     64 KiB operands)
   */
  public static int encodedLength(Predicate p) {
    long n = 2;
    for (int i = 0; i < p.size(); i++) {
      Conjunction c = p.get(i);
      n += 1;
      for (int j = 0; j < c.size(); j++) {
        Constraint k = c.get(j);
        n += 1 + WireWriter.nameLength(k.name());
        if (k.op() != Op.EXISTS) {
          n += 1 + WireWriter.valueLength(k.value());
        }
      }
    }
    return Math.toIntExact(n);
  }

  /**
   * Writes the canonical form of {@code p} at the position of {@code out} and advances the position
   * by {@link #encodedLength(Predicate)} bytes.
   *
   * @throws BufferOverflowException if fewer than {@code encodedLength(p)} bytes remain; nothing is
   *     written then and the position is unchanged
   */
  public static void encode(Predicate p, ByteBuffer out) {
    int length = encodedLength(p);
    if (out.remaining() < length) {
      throw new BufferOverflowException();
    }
    ByteBuffer o = out.duplicate().order(ByteOrder.BIG_ENDIAN);
    o.putShort((short) p.size());
    for (int i = 0; i < p.size(); i++) {
      Conjunction c = p.get(i);
      o.put((byte) c.size());
      for (int j = 0; j < c.size(); j++) {
        Constraint k = c.get(j);
        o.put(k.op().wireCode());
        WireWriter.putName(o, k.name());
        if (k.op() != Op.EXISTS) {
          o.put(k.value().type().wireTag());
          WireWriter.putValue(o, k.value());
        }
      }
    }
    out.position(o.position());
  }

  /** {@code p} encoded into a new array of exactly {@link #encodedLength(Predicate)} bytes. */
  public static byte[] toBytes(Predicate p) {
    byte[] bytes = new byte[encodedLength(p)];
    encode(p, ByteBuffer.wrap(bytes));
    return bytes;
  }

  /**
   * Reads one predicate starting at the position of {@code in} and advances the position to the
   * byte after it; bytes after the predicate are left for the caller.
   *
   * @throws CodecException if the bytes are not a valid predicate; the position is then unchanged
   */
  public static Predicate decode(ByteBuffer in) {
    WireReader r = new WireReader(in);
    int countAt = r.offset();
    int count = r.u16();
    WireReader.checkLimit(countAt, "conjunction count", count, Limits.MAX_CONJUNCTIONS);
    r.requireItems(countAt, count, "conjunctions", MIN_CONJUNCTION_BYTES, 0);
    List<List<Constraint>> disjunction = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int sizeAt = r.offset();
      int size = r.u8();
      WireReader.checkLimit(sizeAt, "constraint count", size, Limits.MAX_CONSTRAINTS);
      r.requireItems(sizeAt, size, "constraints", MIN_CONSTRAINT_BYTES, 0);
      List<Constraint> conjunction = new ArrayList<>(size);
      for (int j = 0; j < size; j++) {
        conjunction.add(constraint(r));
      }
      disjunction.add(conjunction);
    }
    // Every constraint is valid and the counts are within the limits that Conjunction.of and
    // Predicate.of enforce, so canonicalisation cannot fail here.
    Predicate p = Predicate.of(disjunction);
    in.position(r.position());
    return p;
  }

  /** Reads one predicate that must fill {@code bytes} exactly. */
  public static Predicate fromBytes(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    Predicate p = decode(in);
    if (in.hasRemaining()) {
      throw new CodecException(
          in.position(), "unexpected bytes after the end of the predicate: " + in.remaining());
    }
    return p;
  }

  private static Constraint constraint(WireReader r) {
    int opAt = r.offset();
    int code = r.u8();
    Op op = Op.fromWireCode((byte) code);
    if (op == null) {
      throw WireReader.error(opAt, "unknown operator code " + code);
    }
    String name = r.name();
    if (op == Op.EXISTS) {
      return Constraint.exists(name);
    }
    int tagAt = r.offset();
    ValueType type = r.typeTag();
    if (!op.appliesTo(type)) {
      throw WireReader.error(
          tagAt,
          "operator "
              + op.symbol()
              + " does not apply to "
              + type.name().toLowerCase(Locale.ROOT)
              + " operands");
    }
    Value value = r.value(type);
    return Constraint.of(name, op, value);
  }
}
