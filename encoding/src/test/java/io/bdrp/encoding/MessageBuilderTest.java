package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * A builder with room for the attributes it is given builds the same messages as any other, and a
 * message built from its full arrays is not changed by what the builder is given afterwards.
 */
class MessageBuilderTest {
  @Test
  void roomForTheAttributesBuildsTheSameMessage() {
    for (int room = 0; room <= 4; room++) {
      Message m = Message.builder(room).put("b", 2L).put("a", "x").put("c", true).build();
      assertEquals(Message.builder().put("a", "x").put("b", 2L).put("c", true).build(), m);
      assertEquals("a", m.name(0));
    }
  }

  @Test
  void aMessageBuiltFromFullArraysKeepsItsAttributes() {
    Message.Builder b = Message.builder(2).put("b", 2L).put("a", 1L);
    Message first = b.build();
    Message again = b.put("c", 3L).put("0", 0L).build();
    assertEquals(2, first.size());
    assertNull(first.get("c"));
    assertEquals(Message.builder().put("a", 1L).put("b", 2L).build(), first);
    assertEquals(4, again.size());
    assertEquals("0", again.name(0));
    Message.Builder full = Message.builder(1).put("a", 1L);
    Message one = full.build();
    Message withBody = full.body(new byte[] {5}).build();
    assertEquals(0, one.bodyLength());
    assertEquals(1, withBody.bodyLength());
    Message.Builder replaced = Message.builder(1).put("m", 1L);
    Message m = replaced.build();
    replaced.put("a", 0L); // lands before "m": would shift m's arrays if they were shared
    assertEquals("m", m.name(0));
    assertEquals(1, m.size());
  }

  @Test
  void roomOutsideTheLimitIsRefused() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Message.builder(-1));
    assertEquals("room for -1 attributes: outside 0..1024", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Message.builder(Limits.MAX_ATTRIBUTES + 1));
  }
}
