package io.bdrp.encoding.codec;

import static io.bdrp.encoding.codec.GoldenVectors.ALL_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EDGE_VALUES;
import static io.bdrp.encoding.codec.GoldenVectors.EDGE_VALUES_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EMPTY_MESSAGE;
import static io.bdrp.encoding.codec.GoldenVectors.EMPTY_MESSAGE_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EVERY_OPERATOR;
import static io.bdrp.encoding.codec.GoldenVectors.EVERY_OPERATOR_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EVERY_TYPE;
import static io.bdrp.encoding.codec.GoldenVectors.EVERY_TYPE_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.NONE_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.SEVERAL_CONJUNCTIONS;
import static io.bdrp.encoding.codec.GoldenVectors.SEVERAL_CONJUNCTIONS_HEX;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The codecs produce and accept exactly the hand-derived byte vectors of {@link GoldenVectors}. */
class GoldenVectorTest {

  private static void assertMessageVector(Message m, String hex) {
    byte[] expected = Hex.bytes(hex);
    assertEquals(Hex.hex(expected), Hex.hex(MessageCodec.toBytes(m)), "encoding of " + m);
    assertEquals(expected.length, MessageCodec.encodedLength(m));
    assertEquals(m, MessageCodec.fromBytes(expected));
  }

  private static void assertPredicateVector(Predicate p, String hex) {
    byte[] expected = Hex.bytes(hex);
    assertEquals(Hex.hex(expected), Hex.hex(PredicateCodec.toBytes(p)), "encoding of " + p);
    assertEquals(expected.length, PredicateCodec.encodedLength(p));
    assertEquals(p, PredicateCodec.fromBytes(expected));
  }

  @Test
  void emptyMessageIsSixZeroBytes() {
    assertMessageVector(EMPTY_MESSAGE, EMPTY_MESSAGE_HEX);
    assertEquals(6, Hex.bytes(EMPTY_MESSAGE_HEX).length);
  }

  @Test
  void everyTypeTagNegativeIntegerDoubleUnicodeNameAndBody() {
    assertMessageVector(EVERY_TYPE, EVERY_TYPE_HEX);
  }

  @Test
  void edgeValuesEmptyStringMinLongNegativeZeroAndSupplementaryCharacters() {
    assertMessageVector(EDGE_VALUES, EDGE_VALUES_HEX);
    // -0.0 stays a double with its sign, distinct from the integer 0.
    Value z = MessageCodec.fromBytes(Hex.bytes(EDGE_VALUES_HEX)).get("z");
    assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(z.asDouble()));
  }

  @Test
  void noneIsZeroConjunctions() {
    assertPredicateVector(Predicate.NONE, NONE_HEX);
  }

  @Test
  void allIsOneConjunctionOfNoConstraints() {
    assertPredicateVector(Predicate.ALL, ALL_HEX);
  }

  @Test
  void everyOperatorIncludingExists() {
    assertPredicateVector(EVERY_OPERATOR, EVERY_OPERATOR_HEX);
  }

  @Test
  void severalConjunctionsInCanonicalOrder() {
    assertPredicateVector(SEVERAL_CONJUNCTIONS, SEVERAL_CONJUNCTIONS_HEX);
  }

  @Test
  void encodingIsBigEndianWhateverTheBufferOrder() {
    ByteBuffer out = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    MessageCodec.encode(EVERY_TYPE, out);
    out.flip();
    byte[] written = new byte[out.remaining()];
    out.duplicate().get(written);
    assertEquals(Hex.hex(Hex.bytes(EVERY_TYPE_HEX)), Hex.hex(written));
    assertEquals(ByteOrder.LITTLE_ENDIAN, out.order());
    assertEquals(EVERY_TYPE, MessageCodec.decode(out));
  }

  @Test
  void encodeWritesAtThePositionAndAdvancesIt() {
    byte[] backing = new byte[3 + 46 + 2];
    ByteBuffer out = ByteBuffer.wrap(backing);
    out.position(3);
    MessageCodec.encode(EVERY_TYPE, out);
    assertEquals(3 + 46, out.position());
    assertEquals("000000" + Hex.hex(Hex.bytes(EVERY_TYPE_HEX)) + "0000", Hex.hex(backing));
  }

  @Test
  void directBuffersWorkLikeHeapBuffers() {
    ByteBuffer out = ByteBuffer.allocateDirect(46);
    MessageCodec.encode(EVERY_TYPE, out);
    assertEquals(46, out.position());
    out.flip();
    byte[] written = new byte[46];
    out.duplicate().get(written);
    assertEquals(Hex.hex(Hex.bytes(EVERY_TYPE_HEX)), Hex.hex(written));
    assertEquals(EVERY_TYPE, MessageCodec.decode(out));
    assertEquals(46, out.position());
  }

  @Test
  void decodeReadsOneValueAndLeavesTheRest() {
    // Garbage before the position and after the message must be left alone.
    ByteBuffer in = Hex.buffer("ffff" + EVERY_TYPE_HEX + NONE_HEX + "ee");
    in.position(2);
    assertEquals(EVERY_TYPE, MessageCodec.decode(in));
    assertEquals(2 + 46, in.position());
    assertEquals(Predicate.NONE, PredicateCodec.decode(in));
    assertEquals(2 + 46 + 2, in.position());
    assertEquals(1, in.remaining());
  }

  @Test
  void tooSmallBufferThrowsOverflowAndWritesNothing() {
    ByteBuffer out = ByteBuffer.allocate(45);
    assertThrows(BufferOverflowException.class, () -> MessageCodec.encode(EVERY_TYPE, out));
    assertEquals(0, out.position());
    assertEquals(Hex.hex(new byte[45]), Hex.hex(out.array()));

    ByteBuffer small = ByteBuffer.allocate(95);
    assertThrows(BufferOverflowException.class, () -> PredicateCodec.encode(EVERY_OPERATOR, small));
    assertEquals(0, small.position());
    assertEquals(Hex.hex(new byte[95]), Hex.hex(small.array()));
  }

  @Test
  void attributesInAnyOrderDecodeToTheSameMessage() {
    // "s" = "hi" before "b" = true: accepted, and re-encoded in name order.
    String reversed = "0002 | 01 01 73 0002 6869 | 04 01 62 01 | 00000000";
    Message m = MessageCodec.fromBytes(Hex.bytes(reversed));
    assertEquals(Message.builder().put("b", true).put("s", "hi").build(), m);
    assertEquals(
        "0002" + "04016201" + "010173" + "00026869" + "00000000", Hex.hex(MessageCodec.toBytes(m)));
  }

  @Test
  void decodedPredicatesAreCanonical() {
    // x != false (should be x = true), y = 3.0 (should be the integer 3), the same conjunction
    // twice, and x = true || x = true && y = 3 (absorbed): decodes to x = true.
    String raw =
        "0003"
            + "02 | 02 01 78 04 00 | 01 01 79 03 4008000000000000"
            + "01 | 01 01 78 04 01"
            + "01 | 02 01 78 04 00";
    Predicate p = PredicateCodec.fromBytes(Hex.bytes(raw));
    assertEquals(Predicate.ofConstraints(Constraint.of("x", Op.EQ, Value.TRUE)), p);
    assertEquals("0001" + "01" + "010178" + "0401", Hex.hex(PredicateCodec.toBytes(p)));
  }

  @Test
  void contradictoryConjunctionsDecodeToNone() {
    // x = 1 && x = 2 can never hold.
    String raw = "0001 | 02 | 01 01 78 02 0000000000000001 | 01 01 78 02 0000000000000002";
    assertEquals(Predicate.NONE, PredicateCodec.fromBytes(Hex.bytes(raw)));
  }

  @Test
  void fromBytesRejectsTrailingBytes() {
    CodecException e =
        assertThrows(
            CodecException.class,
            () -> MessageCodec.fromBytes(Hex.bytes(EMPTY_MESSAGE_HEX + "00")));
    assertEquals(6, e.offset());
    assertEquals("offset 6: unexpected bytes after the end of the message: 1", e.getMessage());
    CodecException p =
        assertThrows(
            CodecException.class, () -> PredicateCodec.fromBytes(Hex.bytes(NONE_HEX + "0000")));
    assertEquals(2, p.offset());
  }
}
