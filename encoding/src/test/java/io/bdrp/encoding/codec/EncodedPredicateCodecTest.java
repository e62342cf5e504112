package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.bloom.BloomParameters;
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

  // M = 64 (00 40), k = 1 (01), two filters (00 02): 0x...01 then 0x...02, each one u64.
  private static final String TWO_FILTERS =
      "0040" + "01" + "0002" + "0000000000000001" + "0000000000000002";

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
        "0064" + "02" + "0000",
        Hex.hex(EncodedPredicateCodec.toBytes(EncodedPredicate.empty(p100))));
    // M = 100 takes two words; word 0 first.
    String hex = "0064" + "02" + "0001" + "0000000000000005" + "0000000000000001";
    EncodedPredicate p = EncodedPredicateCodec.decode(Hex.buffer(hex));
    assertEquals(p100, p.parameters());
    assertEquals(5L, p.filter(0)[0]);
    assertEquals(1L, p.filter(0)[1]);
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
    assertError("0020" + "01" + "0000", 0, "bloom bits (M) must be between 64 and 8192, got 32");
    assertError("0040" + "00" + "0000", 2, "bloom hashes (k) must be between 1 and 32, got 0");
    assertError(
        "0040" + "01" + "0003" + "0000000000000001",
        3,
        "truncated: 3 filters need at least 24 bytes, 8 remain");
    assertError(
        "0040" + "01" + "0002" + "0000000000000002" + "0000000000000001",
        13,
        "filter 1 is not greater than the one before it (order or repeat)");
    assertError(
        "0040" + "01" + "0002" + "0000000000000002" + "0000000000000002",
        13,
        "filter 1 is not greater than the one before it (order or repeat)");
    assertError(
        "0064" + "02" + "0001" + "0000000000000000" + "0000001000000000",
        5,
        "filter 0 has bits set at or beyond M = 100");
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
    assertEquals("offset 0: filters use M=64 k=1, this network uses M=2048 k=2", e.getMessage());
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
