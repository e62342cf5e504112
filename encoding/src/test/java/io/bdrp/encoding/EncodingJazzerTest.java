package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.codec.CodecException;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.codec.PredicateCodec;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Coverage-guided fuzz targets (Jazzer) for the decoders of the encoding module and the predicate
 * parser. Without {@code JAZZER_FUZZ} each target runs as a plain JUnit test over the committed
 * corpus in {@code src/test/resources/io/bdrp/encoding/EncodingJazzerTestInputs/<target>/}; {@code
 * scripts/fuzz} runs them in fuzzing mode (see {@code docs/fuzzing.md}).
 *
 * <p>Each target accepts only the failure its decoder documents ({@link CodecException} with an
 * offset inside the input, {@link PredicateSyntaxException} with a column inside the text); any
 * other exception is a finding. What decodes must survive a round trip: encoding it again and
 * decoding that gives an equal value, and the encoding of a decoded value is stable.
 */
class EncodingJazzerTest {
  /** Input for the codecs: the encoding itself. Input for the parser: UTF-8 predicate text. */
  @FuzzTest(maxDuration = "")
  void messageCodec(byte[] input) {
    ByteBuffer in = ByteBuffer.wrap(input);
    Message m;
    try {
      m = MessageCodec.decode(in);
    } catch (CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
      assertEquals(0, in.position(), "position moved by a failed decode");
      return;
    }
    int used = in.position();
    assertEquals(used, MessageCodec.encodedLength(m), "bytes read and encoded length differ");
    byte[] again = MessageCodec.toBytes(m);
    Message back = MessageCodec.fromBytes(again);
    assertEquals(m, back);
    assertArrayEquals(again, MessageCodec.toBytes(back));
    // The same bytes further into a buffer decode to the same message.
    assertEquals(m, MessageCodec.decode(shifted(input, used)));
  }

  @FuzzTest(maxDuration = "")
  void predicateCodec(byte[] input) {
    ByteBuffer in = ByteBuffer.wrap(input);
    Predicate p;
    try {
      p = PredicateCodec.decode(in);
    } catch (CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
      assertEquals(0, in.position(), "position moved by a failed decode");
      return;
    }
    byte[] again = PredicateCodec.toBytes(p);
    Predicate back = PredicateCodec.fromBytes(again);
    assertEquals(p, back);
    assertArrayEquals(again, PredicateCodec.toBytes(back));
    assertEquals(p, PredicateCodec.decode(shifted(input, in.position())));
    // A decoded predicate prints as text that parses back to it.
    assertEquals(p, PredicateParser.parse(p.toString()), p::toString);
  }

  @FuzzTest(maxDuration = "")
  void encodedPredicateCodec(byte[] input) {
    ByteBuffer in = ByteBuffer.wrap(input);
    EncodedPredicate p;
    try {
      p = EncodedPredicateCodec.decode(in);
    } catch (CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
      assertEquals(0, in.position(), "position moved by a failed decode");
      return;
    }
    int used = in.position();
    // The decoder accepts the canonical order only, so the encoding is the input, byte for byte.
    assertEquals(used, EncodedPredicateCodec.encodedLength(p));
    assertArrayEquals(Arrays.copyOf(input, used), EncodedPredicateCodec.toBytes(p));
    assertEquals(p, EncodedPredicateCodec.decode(shifted(input, used)));
    try {
      assertEquals(
          p, EncodedPredicateCodec.decode(ByteBuffer.wrap(input), BloomParameters.DEFAULT));
      assertEquals(BloomParameters.DEFAULT, p.parameters());
    } catch (CodecException e) {
      assertTrue(!p.parameters().equals(BloomParameters.DEFAULT), e::getMessage);
    }
  }

  /**
   * Input: an encoded predicate. Decoding it, accepted or not, allocates at most {@link
   * EncodedPredicateCodec#ALLOCATION_PER_BYTE} bytes per input byte plus {@link
   * EncodedPredicateCodec#ALLOCATION_FIXED}, whatever its count and filter heads claim (a decoder
   * that made every filter a dense M-bit bitmap after checking one byte a filter let a 65 KB frame
   * cost 64 MiB). Measured with the thread's allocated bytes on a second decode of the input, so
   * that the first one's class loading and linking are not counted; where the JVM cannot measure,
   * only the first decode runs.
   */
  @FuzzTest(maxDuration = "")
  void encodedPredicateAllocation(byte[] input) {
    decodeEncodedPredicate(input);
    if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
      return;
    }
    long before = THREADS.getCurrentThreadAllocatedBytes();
    decodeEncodedPredicate(input);
    long used = THREADS.getCurrentThreadAllocatedBytes() - before;
    long allowed =
        (long) EncodedPredicateCodec.ALLOCATION_PER_BYTE * input.length
            + EncodedPredicateCodec.ALLOCATION_FIXED;
    assertTrue(
        used <= allowed,
        () -> "decoding " + input.length + " bytes allocated " + used + ", allowed " + allowed);
  }

  private static void decodeEncodedPredicate(byte[] input) {
    try {
      EncodedPredicateCodec.decode(ByteBuffer.wrap(input));
    } catch (CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
    }
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  @FuzzTest(maxDuration = "")
  void predicateParser(byte[] input) {
    String text = new String(input, StandardCharsets.UTF_8);
    Predicate p;
    try {
      p = PredicateParser.parse(text);
    } catch (PredicateSyntaxException e) {
      int columns = text.codePointCount(0, text.length());
      assertTrue(e.column() >= 1 && e.column() <= columns + 1, e::getMessage);
      assertTrue(e.problem() != null && !e.problem().isEmpty());
      return;
    }
    assertEquals(p, PredicateParser.parse(p.toString()), p::toString);
    assertEquals(p, PredicateCodec.fromBytes(PredicateCodec.toBytes(p)));
  }

  /** {@code input[0..n)} at position 3 of a larger buffer that ends with a spare byte. */
  private static ByteBuffer shifted(byte[] input, int n) {
    byte[] b = new byte[n + 4];
    System.arraycopy(input, 0, b, 3, n);
    return ByteBuffer.wrap(b, 3, n);
  }
}
