package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.function.Function;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * Decoders fed garbage: random bytes and random corruptions of valid encodings. Each input either
 * decodes to a valid value (which then round-trips) or fails with a {@link CodecException} whose
 * offset lies within the input; nothing else is ever thrown. Each decode is also metered: it may
 * allocate a small multiple of its input size, never what a length field merely claims.
 */
class CodecFuzzTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Allowed allocation: this much per input byte, plus a fixed amount (exception, builders). */
  private static final long BYTES_PER_INPUT_BYTE = 64;

  private static final long FIXED_ALLOWANCE = 64 * 1024;

  /** Keeps the calibration allocation reachable so that it cannot be optimised away. */
  private static volatile byte[] sink;

  /** Decodes, returning the value or the CodecException; any other throwable propagates. */
  private static Object decodeOrError(Function<ByteBuffer, ?> decoder, byte[] input) {
    try {
      return decoder.apply(ByteBuffer.wrap(input));
    } catch (CodecException e) {
      return e;
    }
  }

  /**
   * Bytes allocated by this thread while decoding {@code input} a second time (the first run links
   * the code on this path, whose one-time cost is not the decoder's), or -1 when the JVM cannot
   * tell.
   */
  private static long allocatedByDecode(Function<ByteBuffer, ?> decoder, byte[] input) {
    if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
      return -1;
    }
    decodeOrError(decoder, input);
    long before = THREADS.getCurrentThreadAllocatedBytes();
    decodeOrError(decoder, input);
    return THREADS.getCurrentThreadAllocatedBytes() - before;
  }

  private static void assertBoundedAllocation(Function<ByteBuffer, ?> decoder, byte[] input) {
    long used = allocatedByDecode(decoder, input);
    long allowed = BYTES_PER_INPUT_BYTE * input.length + FIXED_ALLOWANCE;
    assertTrue(
        used <= allowed,
        () ->
            "decoding " + input.length + " bytes allocated " + used + " bytes: " + Hex.hex(input));
  }

  private static void checkMessage(byte[] input) {
    Object result = decodeOrError(MessageCodec::decode, input);
    if (result instanceof CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
    } else {
      Message m = (Message) result;
      assertEquals(m, MessageCodec.fromBytes(MessageCodec.toBytes(m)));
    }
    assertBoundedAllocation(MessageCodec::decode, input);
  }

  private static void checkPredicate(byte[] input) {
    Object result = decodeOrError(PredicateCodec::decode, input);
    if (result instanceof CodecException e) {
      assertTrue(e.offset() >= 0 && e.offset() <= input.length, e::getMessage);
    } else {
      Predicate p = (Predicate) result;
      assertEquals(p, PredicateCodec.fromBytes(PredicateCodec.toBytes(p)));
    }
    assertBoundedAllocation(PredicateCodec::decode, input);
  }

  /**
   * Random bytes, mostly small values so that counts, lengths, tags and operator codes are often
   * plausible and the decoder gets past the first fields.
   */
  private static byte[] plausibleGarbage(Random rnd) {
    byte[] b = new byte[rnd.nextInt(96)];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (rnd.nextInt(4) == 0 ? rnd.nextInt(256) : rnd.nextInt(12));
    }
    return b;
  }

  /** A copy of {@code valid} with a few bits flipped, a byte replaced, or cut or extended. */
  private static byte[] corrupt(byte[] valid, Random rnd) {
    byte[] b = valid.clone();
    switch (rnd.nextInt(4)) {
      case 0 -> {
        for (int i = 1 + rnd.nextInt(3); i > 0 && b.length > 0; i--) {
          b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        }
      }
      case 1 -> {
        if (b.length > 0) {
          b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
        }
      }
      case 2 -> b = Arrays.copyOf(b, rnd.nextInt(b.length + 1));
      default -> {
        b = Arrays.copyOf(b, b.length + 1 + rnd.nextInt(4));
        b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
      }
    }
    return b;
  }

  @Property(tries = 4000)
  void randomBytesAsMessages(@ForAll long seed) {
    Random rnd = new Random(seed);
    checkMessage(rnd.nextBoolean() ? plausibleGarbage(rnd) : randomBytes(rnd));
  }

  @Property(tries = 4000)
  void randomBytesAsPredicates(@ForAll long seed) {
    Random rnd = new Random(seed);
    checkPredicate(rnd.nextBoolean() ? plausibleGarbage(rnd) : randomBytes(rnd));
  }

  @Property(tries = 4000)
  void corruptedMessages(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    checkMessage(corrupt(MessageCodec.toBytes(r.message()), r.random()));
  }

  @Property(tries = 4000)
  void corruptedPredicates(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    checkPredicate(corrupt(PredicateCodec.toBytes(r.predicate()), r.random()));
  }

  private static byte[] randomBytes(Random rnd) {
    byte[] b = new byte[rnd.nextInt(64)];
    rnd.nextBytes(b);
    return b;
  }

  @Test
  void lengthsClaimingTheLimitsAllocateLittle() {
    // Each input is a few bytes that claim a large item; a decoder that allocated for the claim
    // before checking the remaining bytes would exceed the allowance (64 KiB + 64 per byte).
    byte[][] messages = {
      Hex.bytes("0000 00100000 cafe"), // body of 1 MiB
      Hex.bytes("0001 01 01 73 ffff 6162"), // string of 65535 bytes
      Hex.bytes("0001 04 ff 616263"), // name of 255 bytes
      Hex.bytes("0400 04016101"), // 1024 attributes
    };
    for (byte[] m : messages) {
      assertTrue(decodeOrError(MessageCodec::decode, m) instanceof CodecException);
      assertBoundedAllocation(MessageCodec::decode, m);
    }
    byte[][] predicates = {
      Hex.bytes("0400 01 0a 01 61"), // 1024 conjunctions
      Hex.bytes("0001 40 0a 01 61"), // 64 constraints
      Hex.bytes("0001 01 01 01 73 01 ffff 61"), // string operand of 65535 bytes
    };
    for (byte[] p : predicates) {
      assertTrue(decodeOrError(PredicateCodec::decode, p) instanceof CodecException);
      assertBoundedAllocation(PredicateCodec::decode, p);
    }
  }

  @Test
  void theAllowanceIsTightEnoughToCatchAnEagerAllocation() {
    // Calibrates the meter: a decoder that allocated a 1 MiB body up front would be caught.
    byte[] claim = Hex.bytes("0000 00100000 cafe");
    long allowed = BYTES_PER_INPUT_BYTE * claim.length + FIXED_ALLOWANCE;
    Function<ByteBuffer, Object> eager =
        in -> {
          sink = new byte[1 << 20];
          return MessageCodec.decode(in);
        };
    long used = allocatedByDecode(eager, claim);
    assertTrue(used < 0 || used > allowed, "an eager 1 MiB allocation went unnoticed: " + used);
  }
}
