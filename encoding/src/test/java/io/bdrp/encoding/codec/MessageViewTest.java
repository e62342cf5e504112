package io.bdrp.encoding.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.RandomModel;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageView} takes a message only where {@link MessageCodec#decode} would decode it to the
 * same attributes, never one it refuses; and a message whose attributes it holds already allocates
 * nothing.
 */
class MessageViewTest {
  private static boolean wrap(MessageView v, byte[] bytes) {
    System.arraycopy(bytes, 0, v.buffer(bytes.length), 0, bytes.length);
    return v.wrap(bytes.length);
  }

  /** Whether the reference decoder takes {@code bytes} as one whole message, and which. */
  private static Message reference(byte[] bytes) {
    try {
      return MessageCodec.fromBytes(bytes);
    } catch (CodecException | IllegalArgumentException e) {
      return null;
    }
  }

  private static void assertSameAttributes(Message m, MessageView v) {
    assertEquals(m.size(), v.size());
    for (int i = 0; i < m.size(); i++) {
      assertEquals(m.name(i), v.name(i));
      assertEquals(m.value(i), v.value(i));
    }
  }

  @Test
  void encodedMessagesGiveTheAttributesTheDecoderGives() {
    RandomModel r = new RandomModel(20_261_127L);
    MessageView v = new MessageView();
    for (int i = 0; i < 5_000; i++) {
      Message m = r.message();
      assertTrue(wrap(v, MessageCodec.toBytes(m)), "an encoded message is taken");
      assertSameAttributes(m, v);
    }
  }

  /**
   * Names and string values of every length up to 24 bytes, each differing from the others of its
   * length in one byte at one position, are told apart: every one read back as itself, twice (the
   * second time from the table). Guards the comparison and hash of short encodings by words, which
   * must cover every byte of the encoding.
   */
  @Test
  void encodingsThatDifferInOneByteAreToldApart() {
    MessageView v = new MessageView();
    for (int round = 0; round < 2; round++) {
      for (int length = 1; length <= 24; length++) {
        for (int at = 0; at < length; at++) {
          char[] c = new char[length];
          Arrays.fill(c, 'a');
          c[at] = 'b';
          String s = new String(c);
          Message m = Message.builder().put(s, s).put(s + "~", (long) at).build();
          assertTrue(wrap(v, MessageCodec.toBytes(m)), s);
          assertSameAttributes(m, v);
        }
      }
    }
  }

  @Test
  void whatTheViewTakesTheDecoderTakesAlike() {
    RandomModel r = new RandomModel(7L);
    Random random = new Random(11L);
    MessageView v = new MessageView();
    for (int i = 0; i < 20_000; i++) {
      byte[] b = MessageCodec.toBytes(r.message());
      // Corrupted: a byte changed, cut short, or a byte appended.
      switch (random.nextInt(3)) {
        case 0 -> b[random.nextInt(b.length)] = (byte) random.nextInt(256);
        case 1 -> b = Arrays.copyOf(b, random.nextInt(b.length));
        default -> b = Arrays.copyOf(b, b.length + 1);
      }
      Message m = reference(b);
      if (wrap(v, b)) {
        assertTrue(m != null, "taken, but the decoder refuses it");
        assertSameAttributes(m, v);
      } else {
        assertEquals(0, v.size(), "nothing is left of a message not taken");
      }
    }
  }

  @Test
  void attributesOutOfNameOrderAreLeftToTheDecoder() {
    // Two attributes, "b" then "a": MessageCodec.decode sorts them.
    byte[] b = {
      0,
      2, // attrCount
      4,
      1,
      'b',
      1, // boolean b = true
      4,
      1,
      'a',
      0, // boolean a = false
      0,
      0,
      0,
      0 // empty body
    };
    MessageView v = new MessageView();
    assertFalse(wrap(v, b));
    assertEquals(2, MessageCodec.fromBytes(b).size());
    b[8] = 'b'; // a repeated name: refused by the decoder
    assertFalse(wrap(v, b));
    assertEquals(null, reference(b));
  }

  @Test
  void aMessageOfKnownAttributesAllocatesNothing() {
    RandomModel r = new RandomModel(3L);
    byte[][] messages = new byte[64][];
    for (int i = 0; i < messages.length; i++) {
      messages[i] = MessageCodec.toBytes(r.message());
    }
    MessageView v = new MessageView();
    for (int i = 0; i < 50_000; i++) {
      wrap(v, messages[i % messages.length]); // warm-up: every attribute decoded once, JIT
    }
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().threadId();
    long least = Long.MAX_VALUE;
    for (int run = 0; run < 3; run++) {
      long a0 = mx.getThreadAllocatedBytes(thread);
      for (int i = 0; i < 10_000; i++) {
        wrap(v, messages[i % messages.length]);
      }
      least = Math.min(least, mx.getThreadAllocatedBytes(thread) - a0);
    }
    assertTrue(least <= 4_096, "10,000 messages allocated " + least + " bytes");
  }
}
