package io.bdrp.encoding.codec;

import static io.bdrp.encoding.codec.GoldenVectors.EVERY_OPERATOR_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.NONE_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.SEVERAL_CONJUNCTIONS_HEX;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Malformed predicate encodings are rejected with a {@link CodecException} that names the offset of
 * the bad field. Offsets refer to {@link GoldenVectors#EVERY_OPERATOR_HEX}: conjunction count 0,
 * constraint count 2, then "a" = 1 at 3 (op 3, name length 4, name 5, tag 6, value 7), "b" at 15
 * (string bytes at 21), "c" > 2.5 at 22 (tag 25, value 26), "d" >= -1 at 34 (tag 37, value 38),
 * ..., exists "j" at 88, "k" = true at 91 (tag 94, value 95); 96 bytes in all.
 */
class PredicateCodecMalformedTest {

  static void assertRejected(ByteBuffer in, int offset, String detail) {
    int position = in.position();
    CodecException e = assertThrows(CodecException.class, () -> PredicateCodec.decode(in));
    assertEquals("offset " + offset + ": " + detail, e.getMessage());
    assertEquals(offset, e.offset());
    assertEquals(position, in.position(), "position must not move on error");
  }

  @Test
  void everyTruncationIsACodecException() {
    for (String hex : List.of(NONE_HEX, EVERY_OPERATOR_HEX, SEVERAL_CONJUNCTIONS_HEX)) {
      int length = Hex.bytes(hex).length;
      for (int n = 0; n < length; n++) {
        ByteBuffer in = Hex.prefix(hex, n);
        CodecException e = assertThrows(CodecException.class, () -> PredicateCodec.decode(in));
        assertEquals(0, in.position());
        assertTrue(e.offset() <= n, e::getMessage);
      }
    }
  }

  @Test
  void truncationNamesTheFieldThatIsCutShort() {
    assertRejected(Hex.prefix(NONE_HEX, 1), 0, "truncated: need 2 bytes, 1 remain");
    assertRejected(
        Hex.prefix(EVERY_OPERATOR_HEX, 10),
        2,
        "truncated: 11 constraints need at least 33 bytes, 7 remain");
    // Cut inside the integer of "d" (value at 38..45).
    assertRejected(Hex.prefix(EVERY_OPERATOR_HEX, 40), 38, "truncated: need 8 bytes, 2 remain");
  }

  @Test
  void countsOverTheLimits() {
    assertRejected(
        Hex.patched(NONE_HEX, 0, "0401"), 0, "conjunction count 1025 exceeds the limit of 1024");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 2, "41"), 2, "constraint count 65 exceeds the limit of 64");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 2, "ff"),
        2,
        "constraint count 255 exceeds the limit of 64");
  }

  @Test
  void countsBeyondTheRemainingBytes() {
    assertRejected(
        Hex.patched(NONE_HEX, 0, "0400"),
        0,
        "truncated: 1024 conjunctions need at least 1024 bytes, 0 remain");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 2, "40"),
        2,
        "truncated: 64 constraints need at least 192 bytes, 93 remain");
  }

  @Test
  void anEmptyConjunctionIsTrue() {
    // The first conjunction patched to hold no constraints is true, which absorbs the rest: the
    // predicate ends after its count (the caller's frame decides what trailing bytes mean).
    ByteBuffer in = Hex.patched(EVERY_OPERATOR_HEX, 2, "00");
    assertEquals(io.bdrp.encoding.Predicate.ALL, PredicateCodec.decode(in));
    assertEquals(3, in.position());
  }

  @ParameterizedTest
  @CsvSource({"00, 0", "0b, 11", "80, 128", "ff, 255"})
  void unknownOperatorCodes(String code, int value) {
    assertRejected(Hex.patched(EVERY_OPERATOR_HEX, 3, code), 3, "unknown operator code " + value);
  }

  @ParameterizedTest
  @CsvSource({
    "3, 07, 6, operator prefix does not apply to integer operands", // a prefix 1
    "22, 09, 25, operator contains does not apply to double operands", // c contains 2.5
    "34, 08, 37, operator suffix does not apply to integer operands", // d suffix -1
    "91, 03, 94, operator < does not apply to boolean operands", // k < true
    "91, 06, 94, operator >= does not apply to boolean operands", // k >= true
  })
  void operatorNotApplicableToTheOperandType(int opAt, String op, int at, String detail) {
    assertRejected(Hex.patched(EVERY_OPERATOR_HEX, opAt, op), at, detail);
  }

  @Test
  void unknownTypeTag() {
    assertRejected(Hex.patched(EVERY_OPERATOR_HEX, 6, "09"), 6, "unknown type tag 9");
    assertRejected(Hex.patched(EVERY_OPERATOR_HEX, 6, "00"), 6, "unknown type tag 0");
  }

  @Test
  void badValues() {
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 26, "7ff8000000000000"), 26, "double is not finite: NaN");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 26, "fff0000000000000"),
        26,
        "double is not finite: -Infinity");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 95, "02"), 95, "boolean byte is 2, must be 0 or 1");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 21, "c0"), 21, "malformed UTF-8 in string value");
  }

  @Test
  void badNames() {
    assertRejected(Hex.patched(EVERY_OPERATOR_HEX, 4, "00"), 4, "attribute name length is 0");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 5, "80"), 5, "malformed UTF-8 in attribute name");
    assertRejected(
        Hex.patched(EVERY_OPERATOR_HEX, 90, "ff"), 90, "malformed UTF-8 in attribute name");
  }
}
