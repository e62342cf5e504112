package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class EncodedPredicateCodecTest {
  private static final BloomParameters P64 = new BloomParameters(64, 1);

  // M = 64 (00 40), k = 1 (01), sharp categories (01), two filters (00 02): {bit 0} then {bit 1},
  // each a list of one position (head 02 = 2 x 1). One position below 64 has the Rice parameter
  // r = log2(64 / 1) = 6: the gap 0 is the bits 0 000000, the gap 1 the bits 0 000001, each padded
  // to a byte with a zero bit.
  private static final String TWO_FILTERS =
      "0040" + "01" + "01" + "0002" + "02" + "00" + "02" + "02";

  @Test
  void goldenVector() {
    EncodedPredicate p =
        EncodedPredicate.ofFilters(P64, List.of(new long[] {2}, new long[] {1}, new long[] {3}));
    // {3} covers {1}, so it is dropped; the rest are in ascending order.
    assertEquals(TWO_FILTERS, Hex.hex(EncodedPredicateCodec.toBytes(p)));
    assertEquals(p, EncodedPredicateCodec.decode(Hex.buffer(TWO_FILTERS)));
  }

  @Test
  void emptySetAndMultiWordFilters() {
    BloomParameters p100 = new BloomParameters(100, 2);
    assertEquals(
        "0064" + "02" + "01" + "0000",
        Hex.hex(EncodedPredicateCodec.toBytes(EncodedPredicate.empty(p100))));
    // M = 100: bits 0, 2 and 64 (word 0 = 5, word 1 = 1): gaps 0, 1 (2 - 0 - 1), 61 (64 - 2 - 1).
    // Three positions: r = log2(100 / 3 = 33) = 5. Gap 0: 0 00000; gap 1: 0 00001; gap 61 = 1 x 32
    // + 29: 1 0 11101. The 19 bits 000000 000001 1011101 and five zero bits: 00 1b a0.
    String hex = "0064" + "02" + "01" + "0001" + "06" + "001ba0";
    EncodedPredicate p = EncodedPredicateCodec.decode(Hex.buffer(hex));
    assertEquals(p100, p.parameters());
    assertEquals(5L, p.filter(0)[0]);
    assertEquals(1L, p.filter(0)[1]);
    assertEquals(hex, Hex.hex(EncodedPredicateCodec.toBytes(p)));
  }

  @Test
  void aFilterTakesTheShorterOfItsTwoForms() {
    // M = 64: a bitmap is 1 + 8 bytes. Bits 0..62 as a list: head 7e (2 x 63), r = log2(64 / 63)
    // = 0, so each zero gap is one 0 bit: 63 bits in 8 bytes, 9 with the head, as long as the
    // bitmap: the list. All 64 bits: a two-byte head (80 01) makes the list 10 bytes: the bitmap.
    EncodedPredicate most = EncodedPredicate.ofFilters(P64, List.of(new long[] {-1L >>> 1}));
    assertEquals(
        "0040" + "01" + "01" + "0001" + "7e" + "0000000000000000",
        Hex.hex(EncodedPredicateCodec.toBytes(most)));
    EncodedPredicate all = EncodedPredicate.ofFilters(P64, List.of(new long[] {-1L}));
    assertEquals(
        "0040" + "01" + "01" + "0001" + "01" + "ffffffffffffffff",
        Hex.hex(EncodedPredicateCodec.toBytes(all)));
    assertEquals(
        all, EncodedPredicateCodec.decode(Hex.buffer(Hex.hex(EncodedPredicateCodec.toBytes(all)))));
    // M = 2048: position 2047 alone is r = 11, the bits 0 11111111111, two bytes (7f f0); the
    // whole filter 3 bytes instead of the bitmap's 257.
    BloomParameters p2048 = new BloomParameters(2048, 2);
    long[] f = p2048.newFilter();
    f[31] = 1L << 63;
    EncodedPredicate high = EncodedPredicate.ofFilters(p2048, List.of(f));
    assertEquals(
        "0800" + "02" + "01" + "0001" + "02" + "7ff0",
        Hex.hex(EncodedPredicateCodec.toBytes(high)));
  }

  @Test
  void anAdvertisementIsSizedByTheBitsItSets() {
    // Twenty conjunctions of one to five constraints (k = 2): at most 10 bits in a filter.
    RandomModel r = new RandomModel(7);
    EncodedPredicate e = new Encoder(BloomParameters.DEFAULT).encode(r.predicate(20, 5));
    int bitmaps = 6 + e.size() * (1 + BloomParameters.DEFAULT.words() * Long.BYTES);
    int bytes = EncodedPredicateCodec.encodedLength(e);
    assertTrue(bytes * 8 <= bitmaps, bytes + " bytes against " + bitmaps + " as bitmaps");
  }

  @Property(tries = 500)
  void roundTrip(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Predicate pred = r.predicate(6, 4);
    for (BloomParameters bp : List.of(P64, BloomParameters.DEFAULT, new BloomParameters(130, 3))) {
      EncodedPredicate e = new Encoder(bp).encode(pred);
      ByteBuffer b = ByteBuffer.allocate(EncodedPredicateCodec.encodedLength(e) + 3);
      EncodedPredicateCodec.encode(e, b);
      assertEquals(EncodedPredicateCodec.encodedLength(e), b.position());
      b.flip();
      assertEquals(e, EncodedPredicateCodec.decode(b));
      assertEquals(EncodedPredicateCodec.encodedLength(e), b.position());
    }
  }

  @Test
  void malformedInputNamesTheOffset() {
    assertError(
        "0020" + "01" + "01" + "0000", 0, "bloom bits (M) must be between 64 and 8192, got 32");
    assertError(
        "0040" + "00" + "01" + "0000", 2, "bloom hashes (k) must be between 1 and 32, got 0");
    assertError("0040" + "01" + "07" + "0000", 3, "unknown category scheme 7");
    assertError(
        "0040" + "01" + "01" + "0003" + "0200",
        4,
        "truncated: 3 filters need at least 3 bytes, 2 remain");
    assertError(
        "0040" + "01" + "01" + "0002" + "0202" + "0200",
        8,
        "filter 1 is not greater than the one before it (order or repeat)");
    assertError(
        "0040" + "01" + "01" + "0002" + "0202" + "0202",
        8,
        "filter 1 is not greater than the one before it (order or repeat)");
    // Gap 64 (bits 1 0 000000) in a 64-bit filter.
    assertError(
        "0040" + "01" + "01" + "0001" + "02" + "80",
        7,
        "filter 0 has a position at or beyond M = 64");
    // The bits 0 000000 are position 0; the eighth, padding, bit is 1.
    assertError(
        "0040" + "01" + "01" + "0001" + "02" + "01",
        7,
        "filter 0 has non-zero padding bits (not canonical)");
    assertError(
        "0064" + "02" + "01" + "0001" + "01" + "0000000000000000" + "0000001000000000",
        6,
        "filter 0 has bits set at or beyond M = 100");
    assertError(
        "0040" + "01" + "01" + "0001" + "01" + "0000000000000001",
        6,
        "filter 0 is a bitmap, but its list of positions is no longer (not canonical)");
    // All 64 positions (head 80 01): 10 bytes, longer than the 9-byte bitmap.
    assertError(
        "0040" + "01" + "01" + "0001" + "8001" + "0000000000000000",
        6,
        "filter 0 is a list of positions longer than its bitmap (not canonical)");
    assertError("0040" + "01" + "01" + "0001" + "03", 6, "filter 0 has an unknown form (head 3)");
    assertError(
        "0040" + "01" + "01" + "0001" + "8200" + "00",
        6,
        "filter 0 head: varint with a redundant zero byte (not canonical)");
    assertError(
        "0040" + "01" + "01" + "0001" + "ffffff01", 6, "filter 0 head: varint longer than 3 bytes");
    assertError("0040" + "01" + "01" + "0001" + "8201", 6, "filter 0 head 130 exceeds 128");
  }

  @Test
  void everyTruncationFailsCleanly() {
    byte[] full = Hex.bytes(TWO_FILTERS);
    for (int n = 0; n < full.length; n++) {
      ByteBuffer b = ByteBuffer.wrap(full, 0, n);
      CodecException e = assertThrows(CodecException.class, () -> EncodedPredicateCodec.decode(b));
      assertTrue(e.offset() <= n, "offset " + e.offset() + " past " + n);
      assertEquals(0, b.position(), "position moved on failure");
    }
  }

  @Test
  void rejectsFiltersOfOtherParameters() {
    CodecException e =
        assertThrows(
            CodecException.class,
            () -> EncodedPredicateCodec.decode(Hex.buffer(TWO_FILTERS), BloomParameters.DEFAULT));
    assertEquals(
        "offset 0: filters use M=64 k=1 categories sharp, this network uses M=8192 k=1 categories"
            + " sharp",
        e.getMessage());
    CodecException paper =
        assertThrows(
            CodecException.class,
            () ->
                EncodedPredicateCodec.decode(
                    Hex.buffer(TWO_FILTERS), P64.withCategories(CategoryScheme.PAPER)));
    assertTrue(
        paper
            .getMessage()
            .contains("categories sharp, this network uses M=64 k=1 categories paper"));
  }

  @Property(tries = 2000)
  void randomBytesNeverThrowAnythingElse(@ForAll long seed) {
    Random r = new Random(seed);
    byte[] bytes = r.nextBoolean() ? new byte[r.nextInt(40)] : Hex.bytes(TWO_FILTERS);
    if (r.nextBoolean()) {
      r.nextBytes(bytes);
    } else if (bytes.length > 0) {
      bytes[r.nextInt(bytes.length)] ^= (byte) (1 << r.nextInt(8));
    }
    try {
      EncodedPredicate p = EncodedPredicateCodec.decode(ByteBuffer.wrap(bytes));
      assertEquals(
          p, EncodedPredicateCodec.decode(ByteBuffer.wrap(EncodedPredicateCodec.toBytes(p))));
    } catch (CodecException expected) {
      assertTrue(expected.offset() >= 0 && expected.offset() <= bytes.length);
    }
  }

  private static void assertError(String hex, int offset, String detail) {
    CodecException e =
        assertThrows(CodecException.class, () -> EncodedPredicateCodec.decode(Hex.buffer(hex)));
    assertEquals(offset, e.offset());
    assertEquals(detail, e.detail());
  }
}
