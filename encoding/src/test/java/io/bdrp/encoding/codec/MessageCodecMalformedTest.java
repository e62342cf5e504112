package io.bdrp.encoding.codec;

import static io.bdrp.encoding.codec.GoldenVectors.EDGE_VALUES_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EMPTY_MESSAGE_HEX;
import static io.bdrp.encoding.codec.GoldenVectors.EVERY_TYPE_HEX;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Malformed message encodings are rejected with a {@link CodecException} that names the offset of
 * the bad field. Offsets refer to {@link GoldenVectors#EVERY_TYPE_HEX}: count 0, "b" 2..5, "d"
 * 6..16 (value at 9), "n" 17..27, "s" 28..34 (length at 31, bytes at 33), "é" 35..39, body length
 * 40, body 44..45.
 */
class MessageCodecMalformedTest {

  /** Asserts the decoder rejects {@code in} with exactly this message, leaving the position. */
  static void assertRejected(ByteBuffer in, int offset, String detail) {
    int position = in.position();
    CodecException e = assertThrows(CodecException.class, () -> MessageCodec.decode(in));
    assertEquals("offset " + offset + ": " + detail, e.getMessage());
    assertEquals(offset, e.offset());
    assertEquals(detail, e.detail());
    assertEquals(position, in.position(), "position must not move on error");
  }

  @Test
  void everyTruncationIsACodecException() {
    for (String hex : List.of(EMPTY_MESSAGE_HEX, EVERY_TYPE_HEX, EDGE_VALUES_HEX)) {
      int length = Hex.bytes(hex).length;
      for (int n = 0; n < length; n++) {
        ByteBuffer in = Hex.prefix(hex, n);
        CodecException e = assertThrows(CodecException.class, () -> MessageCodec.decode(in));
        assertEquals(0, in.position());
        // The fault is found inside the bytes given, or at their end.
        assertTrue(e.offset() <= n, e::getMessage);
      }
    }
  }

  @Test
  void truncationNamesTheFieldThatIsCutShort() {
    assertRejected(Hex.prefix(EVERY_TYPE_HEX, 0), 0, "truncated: need 2 bytes, 0 remain");
    assertRejected(Hex.prefix(EVERY_TYPE_HEX, 1), 0, "truncated: need 2 bytes, 1 remain");
    assertRejected(
        Hex.prefix(EVERY_TYPE_HEX, 25),
        0,
        "truncated: 5 attributes need at least 24 bytes, 23 remain");
    assertRejected(Hex.prefix(EVERY_TYPE_HEX, 30), 30, "truncated: need 1 byte, 0 remain");
    assertRejected(Hex.prefix(EVERY_TYPE_HEX, 42), 40, "truncated: need 4 bytes, 2 remain");
    assertRejected(Hex.prefix(EVERY_TYPE_HEX, 45), 44, "truncated: need 2 bytes, 1 remain");
  }

  @Test
  void countsAndLengthsOverTheLimits() {
    assertRejected(
        Hex.patched(EMPTY_MESSAGE_HEX, 0, "0401"),
        0,
        "attribute count 1025 exceeds the limit of 1024");
    assertRejected(
        Hex.patched(EMPTY_MESSAGE_HEX, 0, "ffff"),
        0,
        "attribute count 65535 exceeds the limit of 1024");
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, 40, "00100001"),
        40,
        "body length 1048577 exceeds the limit of 1048576");
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, 40, "ffffffff"),
        40,
        "body length 4294967295 exceeds the limit of 1048576");
  }

  @Test
  void countsAndLengthsBeyondTheRemainingBytes() {
    // Within the limits but more than the input holds: rejected before anything is allocated.
    assertRejected(
        Hex.patched(EMPTY_MESSAGE_HEX, 0, "0400"),
        0,
        "truncated: 1024 attributes need at least 4100 bytes, 4 remain");
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, 40, "00100000"), 44, "truncated: need 1048576 bytes, 2 remain");
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, 31, "ffff"), 33, "truncated: need 65535 bytes, 13 remain");
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, 29, "ff"), 30, "truncated: need 255 bytes, 16 remain");
  }

  @ParameterizedTest
  @CsvSource({"00, 0", "05, 5", "09, 9", "ff, 255"})
  void unknownTypeTags(String tag, int value) {
    assertRejected(Hex.patched(EVERY_TYPE_HEX, 2, tag), 2, "unknown type tag " + value);
    assertRejected(Hex.patched(EVERY_TYPE_HEX, 35, tag), 35, "unknown type tag " + value);
  }

  @Test
  void emptyName() {
    assertRejected(Hex.patched(EVERY_TYPE_HEX, 3, "00"), 3, "attribute name length is 0");
  }

  /** One BOOLEAN attribute whose name is the given bytes; the name starts at offset 4. */
  private static ByteBuffer withName(String nameHex) {
    int n = Hex.bytes(nameHex).length;
    return Hex.buffer("0001 04" + String.format("%02x", n) + nameHex + "00 00000000");
  }

  /** One STRING attribute "s" whose value is the given bytes; they start at offset 7. */
  private static ByteBuffer withString(String valueHex) {
    int n = Hex.bytes(valueHex).length;
    return Hex.buffer("0001 010173" + String.format("%04x", n) + valueHex + "00000000");
  }

  @ParameterizedTest
  @CsvSource({
    "c080, 4", // overlong NUL
    "e080af, 4", // overlong '/' in three bytes
    "f08282ac, 4", // overlong '€' in four bytes
    "80, 4", // lone continuation byte
    "6180, 5", // continuation byte after an ASCII letter
    "eda080, 4", // encoded high surrogate U+D800
    "edb080, 4", // encoded low surrogate U+DC00
    "eda0bdedb880, 4", // a surrogate pair encoded as two three-byte sequences (CESU-8)
    "f4908080, 4", // above U+10FFFF
    "ff, 4", // never valid in UTF-8
    "61e282, 5", // sequence cut short by the end of the name
  })
  void malformedUtf8InNames(String nameHex, int offset) {
    assertRejected(withName(nameHex), offset, "malformed UTF-8 in attribute name");
  }

  @ParameterizedTest
  @CsvSource({"61c080, 8", "f09f98, 7", "eda080, 7", "c3, 7", "6162bf, 9"})
  void malformedUtf8InStrings(String valueHex, int offset) {
    assertRejected(withString(valueHex), offset, "malformed UTF-8 in string value");
  }

  @Test
  void wellFormedUtf8IsAccepted() {
    // The same helpers with valid bytes, so the cases above fail for the reason they name.
    assertEquals("\u00e9", MessageCodec.decode(withName("c3a9")).name(0));
    assertEquals("\uD83D\uDE00", MessageCodec.decode(withString("f09f9880")).get("s").asString());
    assertEquals("\uFFFF", MessageCodec.decode(withString("efbfbf")).get("s").asString());
  }

  @ParameterizedTest
  @CsvSource({
    "7ff8000000000000, NaN",
    "7ff0000000000001, NaN",
    "fff8000000000000, NaN",
    "7ff0000000000000, Infinity",
    "fff0000000000000, -Infinity"
  })
  void nonFiniteDoubles(String bits, String shown) {
    assertRejected(Hex.patched(EVERY_TYPE_HEX, 9, bits), 9, "double is not finite: " + shown);
  }

  @ParameterizedTest
  @CsvSource({"5, 02", "5, ff", "39, 80"})
  void booleanByteOtherThanZeroOrOne(int offset, String value) {
    assertRejected(
        Hex.patched(EVERY_TYPE_HEX, offset, value),
        offset,
        "boolean byte is " + Integer.parseInt(value, 16) + ", must be 0 or 1");
  }

  @Test
  void duplicateNames() {
    // "d" renamed "b": the second "b" is the fault, at its name field (offset 7).
    assertRejected(Hex.patched(EVERY_TYPE_HEX, 8, "62"), 7, "duplicate attribute name \"b\"");
    // Same name, same type and value, in a message of its own.
    assertRejected(
        Hex.buffer("0002 | 04 01 61 01 | 04 01 61 01 | 00000000"),
        7,
        "duplicate attribute name \"a\"");
  }

  @Test
  void offsetsCountFromTheStartPosition() {
    // The encoding starts at index 5 of the buffer; the offset is still relative to its start.
    byte[] bad = Hex.bytes("0102030405" + EVERY_TYPE_HEX);
    bad[5 + 5] = 2; // boolean "b" = 2
    ByteBuffer in = ByteBuffer.wrap(bad);
    in.position(5);
    assertRejected(in, 5, "boolean byte is 2, must be 0 or 1");
  }
}
