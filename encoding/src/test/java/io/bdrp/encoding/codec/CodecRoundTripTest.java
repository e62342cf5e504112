package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.Value;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** decode(encode(x)) equals x, and encodedLength is exactly what encode writes. */
class CodecRoundTripTest {

  /**
   * A buffer with room for {@code length} bytes between some random padding, positioned after the
   * leading padding; heap or direct, with a random byte order (which the codecs must ignore).
   */
  private static ByteBuffer paddedBuffer(Random rnd, int length, int lead) {
    int total = lead + length + rnd.nextInt(8);
    ByteBuffer b =
        rnd.nextBoolean() ? ByteBuffer.allocate(total) : ByteBuffer.allocateDirect(total);
    b.order(rnd.nextBoolean() ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
    b.position(lead);
    return b;
  }

  private static void assertMessageRoundTrip(Message m, Random rnd) {
    int length = MessageCodec.encodedLength(m);
    int lead = rnd.nextInt(8);
    ByteBuffer buf = paddedBuffer(rnd, length, lead);
    MessageCodec.encode(m, buf);
    assertEquals(lead + length, buf.position(), "bytes written must equal encodedLength");
    buf.flip().position(lead);
    assertEquals(m, MessageCodec.decode(buf));
    assertEquals(lead + length, buf.position(), "decode must consume exactly the encoding");
  }

  private static void assertPredicateRoundTrip(Predicate p, Random rnd) {
    int length = PredicateCodec.encodedLength(p);
    int lead = rnd.nextInt(8);
    ByteBuffer buf = paddedBuffer(rnd, length, lead);
    PredicateCodec.encode(p, buf);
    assertEquals(lead + length, buf.position(), "bytes written must equal encodedLength");
    buf.flip().position(lead);
    assertEquals(p, PredicateCodec.decode(buf));
    assertEquals(lead + length, buf.position(), "decode must consume exactly the encoding");
  }

  @Property(tries = 3000)
  void messagesRoundTrip(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    assertMessageRoundTrip(r.message(12), r.random());
  }

  @Property(tries = 3000)
  void predicatesRoundTrip(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    assertPredicateRoundTrip(r.predicate(6, 6), r.random());
  }

  @Property(tries = 500)
  void bufferOneByteShortIsAnOverflowAndExactSizeIsEnough(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Message m = r.message();
    int length = MessageCodec.encodedLength(m);
    ByteBuffer shortBy1 = ByteBuffer.allocate(length - 1);
    assertThrows(BufferOverflowException.class, () -> MessageCodec.encode(m, shortBy1));
    assertEquals(0, shortBy1.position());
    ByteBuffer exact = ByteBuffer.allocate(length);
    MessageCodec.encode(m, exact);
    assertEquals(length, exact.position());

    Predicate p = r.predicate();
    int plength = PredicateCodec.encodedLength(p);
    ByteBuffer pshort = ByteBuffer.allocate(plength - 1);
    assertThrows(BufferOverflowException.class, () -> PredicateCodec.encode(p, pshort));
    assertEquals(0, pshort.position());
  }

  @Test
  void messageAtEveryLimitRoundTrips() {
    Message.Builder b = Message.builder();
    // 255 bytes of UTF-8 in a name (85 three-byte euro signs) and 65535 in a string.
    String longestName = "\u20ac".repeat(85);
    String longestString = "\uD83D\uDE00".repeat(16383) + "abc";
    assertEquals(Limits.MAX_STRING_BYTES, longestString.getBytes(StandardCharsets.UTF_8).length);
    b.put(longestName, longestString);
    for (int i = 1; i < Limits.MAX_ATTRIBUTES; i++) {
      b.put(String.format("a%04d", i), (long) -i);
    }
    byte[] body = new byte[Limits.MAX_BODY_BYTES];
    new Random(7).nextBytes(body);
    Message m = b.body(body).build();
    assertEquals(Limits.MAX_ATTRIBUTES, m.size());
    byte[] bytes = MessageCodec.toBytes(m);
    // count + long attribute + 1023 integers + body length + body
    assertEquals(
        2
            + (1 + 1 + 255 + 2 + 65535)
            + (Limits.MAX_ATTRIBUTES - 1) * (1 + 1 + 5 + 8)
            + 4
            + Limits.MAX_BODY_BYTES,
        bytes.length);
    Message back = MessageCodec.fromBytes(bytes);
    assertEquals(m, back);
    assertArrayEquals(body, back.body());
  }

  @Test
  void predicateAtEveryLimitRoundTrips() {
    List<List<Constraint>> disjunction = new ArrayList<>();
    // 1023 one-constraint conjunctions x = i, none absorbing another ...
    for (int i = 0; i < Limits.MAX_CONJUNCTIONS - 1; i++) {
      disjunction.add(List.of(Constraint.of("x", Op.EQ, Value.of(i))));
    }
    // ... and one of 64 constraints on distinct names.
    List<Constraint> widest = new ArrayList<>();
    for (int i = 0; i < Limits.MAX_CONSTRAINTS; i++) {
      widest.add(Constraint.of(String.format("n%02d", i), Op.GE, Value.of(i)));
    }
    disjunction.add(widest);
    Predicate p = Predicate.of(disjunction);
    assertEquals(Limits.MAX_CONJUNCTIONS, p.size());
    byte[] bytes = PredicateCodec.toBytes(p);
    assertEquals(
        2
            + (Limits.MAX_CONJUNCTIONS - 1) * (1 + 1 + 1 + 1 + 1 + 8)
            + 1
            + Limits.MAX_CONSTRAINTS * (1 + 1 + 3 + 1 + 8),
        bytes.length);
    assertEquals(p, PredicateCodec.fromBytes(bytes));
  }
}
