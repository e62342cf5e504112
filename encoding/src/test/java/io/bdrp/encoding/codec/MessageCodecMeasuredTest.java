package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A message is measured once ({@link MessageCodec#encodedLength}) and then written without being
 * measured again, its names' and strings' lengths taken from the bytes they took; decoding reuses
 * one {@link MessageCodec.Decoder}. Names and strings that are not ASCII have their UTF-8 lengths.
 */
class MessageCodecMeasuredTest {
  /** ASCII, two-, three- and four-byte UTF-8, and an ASCII prefix before each. */
  private static final Message MIXED =
      Message.builder()
          .put("price", 12L)
          .put("prix€", "naïve café")
          .put("ключ", true)
          .put("x😀", 2.5)
          .put("s", "ascii then 😀 then €")
          .body(new byte[] {1, 2, 3})
          .build();

  private static int utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  @Test
  void utf8LengthCountsEveryCharacterAfterAnAsciiPrefix() {
    for (String s : List.of("", "abc", "é", "abcé", "ab€", "a😀b", "ключ", "naïve café")) {
      assertEquals(utf8(s), Strings.utf8Length(s), s);
    }
  }

  @Test
  void nonAsciiNamesAndStringsTakeTheirUtf8Lengths() {
    int expected = 2 + 4 + 3; // count, body length, body
    for (int i = 0; i < MIXED.size(); i++) {
      expected += 1 + 1 + utf8(MIXED.name(i));
      expected +=
          switch (MIXED.value(i).type()) {
            case STRING -> 2 + utf8(MIXED.value(i).asString());
            case INTEGER, DOUBLE -> 8;
            case BOOLEAN -> 1;
          };
    }
    assertEquals(expected, MessageCodec.encodedLength(MIXED));
    byte[] bytes = MessageCodec.toBytes(MIXED);
    assertEquals(expected, bytes.length);
    // The name "prix€" (second in name order after "price") is 7 bytes long on the wire.
    int at = 2 + 1 + 1 + 5 + 8;
    assertEquals(utf8("prix€"), bytes[at + 1]);
    assertEquals(MIXED, MessageCodec.fromBytes(bytes));
  }

  @Test
  void everyKindOfBufferGetsTheSameBytes() {
    byte[] expected = MessageCodec.toBytes(MIXED);
    int n = expected.length;
    byte[] backing = new byte[n + 10];
    List<ByteBuffer> buffers =
        List.of(
            ByteBuffer.allocate(n),
            ByteBuffer.allocateDirect(n),
            ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN),
            ByteBuffer.wrap(backing, 3, n).slice()); // an array offset of 3
    for (ByteBuffer out : buffers) {
      MessageCodec.encode(MIXED, out, n);
      assertEquals(n, out.position());
      byte[] got = new byte[n];
      out.get(0, got);
      assertArrayEquals(expected, got, out.toString());
    }
    assertEquals(0, backing[2]);
    assertEquals(0, backing[3 + n], "nothing written past the view");
  }

  @Test
  void aWrongLengthFailsAndLeavesThePosition() {
    int n = MessageCodec.encodedLength(MIXED);
    ByteBuffer roomy = ByteBuffer.allocate(n + 8);
    roomy.position(4);
    IllegalArgumentException longer =
        assertThrows(
            IllegalArgumentException.class, () -> MessageCodec.encode(MIXED, roomy, n + 1));
    assertEquals("message of " + (n + 1) + " bytes takes " + n + " bytes", longer.getMessage());
    assertEquals(4, roomy.position());
    ByteBuffer exact = ByteBuffer.allocate(n - 1);
    assertThrows(IllegalArgumentException.class, () -> MessageCodec.encode(MIXED, exact, n - 1));
    assertEquals(0, exact.position());
    ByteBuffer small = ByteBuffer.allocate(n - 1);
    assertThrows(BufferOverflowException.class, () -> MessageCodec.encode(MIXED, small, n));
    assertEquals(0, small.position());
  }

  @Test
  void oneDecoderReadsMessageAfterMessageAndSurvivesABadOne() {
    List<Message> messages = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      messages.add(Message.builder().put("n", (long) i).put("ключ", "значение " + i).build());
    }
    messages.add(MIXED);
    MessageCodec.Decoder decoder = new MessageCodec.Decoder();
    for (Message m : messages) {
      ByteBuffer in = ByteBuffer.wrap(MessageCodec.toBytes(m));
      assertEquals(m, decoder.decode(in));
      assertEquals(in.limit(), in.position());
    }
    // A body length beyond the bytes there: the position and limit are as they were.
    byte[] bad = MessageCodec.toBytes(MIXED);
    bad[bad.length - 3 - 1] = 9;
    CodecException once =
        assertThrows(CodecException.class, () -> MessageCodec.decode(ByteBuffer.wrap(bad)));
    ByteBuffer in = ByteBuffer.wrap(bad);
    CodecException e = assertThrows(CodecException.class, () -> decoder.decode(in));
    assertEquals(once.getMessage(), e.getMessage());
    assertEquals(0, in.position());
    assertEquals(bad.length, in.limit());
    // Malformed UTF-8 in a string, read through the decoder of strings that are not ASCII.
    byte[] badUtf8 = MessageCodec.toBytes(MIXED);
    int i = 0;
    while (!((badUtf8[i] & 0xFF) == 0xC3 && (badUtf8[i + 1] & 0xFF) == 0xAF)) { // "ï"
      i++;
    }
    badUtf8[i + 1] = ' ';
    ByteBuffer utf8In = ByteBuffer.wrap(badUtf8);
    CodecException e2 = assertThrows(CodecException.class, () -> decoder.decode(utf8In));
    assertEquals("malformed UTF-8 in string value", e2.detail());
    assertEquals(0, utf8In.position());
    assertEquals(badUtf8.length, utf8In.limit());
    ByteBuffer good = ByteBuffer.wrap(MessageCodec.toBytes(MIXED));
    assertEquals(MIXED, decoder.decode(good));
  }

  /**
   * A message of shape {@code shape} (its names and their types) with values drawn from {@code r}.
   */
  private static Message ofShape(int shape, Random r) {
    Message.Builder b = Message.builder();
    switch (shape) {
      case 0 -> b.put("bucket", (long) r.nextInt(10));
      case 1 -> b.put("bucket", "b" + r.nextInt(10)); // the same name, another type
      case 2 -> b.put("bucket", (long) r.nextInt(10)).put("z", r.nextBoolean());
      case 3 -> b.put("ключ", r.nextDouble()).put("x😀", "naïve " + r.nextInt(100));
      default -> {} // no attribute at all
    }
    return b.body(new byte[r.nextInt(3) * 100]).build();
  }

  /**
   * One decoder reads a message whose names are the last one's against them, and shares them: a
   * stream that mixes names, types, counts and bad bytes decodes exactly as each message alone, and
   * fails with the same error, leaving the input where it was.
   */
  @Test
  void aDecoderOfSameNamedMessagesAgreesWithDecodingAlone() {
    Random r = new Random(7);
    MessageCodec.Decoder decoder = new MessageCodec.Decoder();
    int failures = 0;
    for (int k = 0; k < 2_000; k++) {
      // Runs of one shape, as a stream has, broken by others.
      Message m = ofShape(k % 50 < 40 ? 0 : r.nextInt(5), r);
      byte[] bytes = MessageCodec.toBytes(m);
      int cut = bytes.length;
      if (r.nextInt(4) == 0) {
        int at = r.nextInt(bytes.length);
        bytes[at] = (byte) r.nextInt(256);
        if (r.nextBoolean()) {
          cut = r.nextInt(bytes.length);
        }
      }
      byte[] input = java.util.Arrays.copyOf(bytes, cut);
      String alone;
      try {
        ByteBuffer once = ByteBuffer.wrap(input);
        alone = MessageCodec.decode(once) + " at " + once.position();
      } catch (CodecException e) {
        alone = e.getMessage();
      }
      ByteBuffer in = ByteBuffer.wrap(input);
      String shared;
      try {
        shared = decoder.decode(in) + " at " + in.position();
      } catch (CodecException e) {
        failures++;
        shared = e.getMessage();
        assertEquals(0, in.position(), "a failed decode leaves the position");
        assertEquals(input.length, in.limit(), "a failed decode leaves the limit");
      }
      assertEquals(alone, shared, "message " + k);
    }
    assertTrue(failures > 50, "bad inputs were tried: " + failures);
  }

  @Test
  void aMessageWithTheSameNamesTakesOneValueForEach() {
    Message m = Message.builder().put("a", 1L).put("b", "x").build();
    Message n = m.withValues(new Value[] {Value.of(true), Value.of(2.5)}, new byte[] {9});
    assertEquals(Message.builder().put("a", true).put("b", 2.5).body(new byte[] {9}).build(), n);
    assertThrows(
        IllegalArgumentException.class,
        () -> m.withValues(new Value[] {Value.of(1L)}, new byte[0]));
    assertThrows(
        IllegalArgumentException.class,
        () -> m.withValues(new Value[] {Value.of(1L), null}, new byte[0]));
  }
}
