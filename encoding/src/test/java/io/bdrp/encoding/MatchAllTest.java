package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.match.ExactMatcher;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code true}: the predicate that matches every message, through every layer that holds one. */
class MatchAllTest {
  private static final List<Message> MESSAGES =
      List.of(
          Message.builder().build(),
          Message.builder().put("a", 1).build(),
          Message.builder().put("topic", "news").put("price", 2.5).put("ok", true).build());

  @Test
  void trueParsesAloneAndPrintsBack() {
    Predicate all = Predicate.parse("true");
    assertEquals(Predicate.ALL, all);
    assertTrue(all.isAll());
    assertFalse(all.isEmpty());
    assertEquals("true", all.toString());
    assertEquals(Predicate.ALL, Predicate.parse(" true "));
    PredicateSyntaxException e =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse("true || a = 1"));
    assertTrue(e.getMessage().contains("'true' stands alone"), e.getMessage());
    // As a value it is still a boolean.
    assertEquals("ok = true", Predicate.parse("ok = true").toString());
  }

  @Test
  void trueMatchesEveryMessageAndAbsorbsEveryOtherConjunction() {
    for (Message m : MESSAGES) {
      assertTrue(Predicate.ALL.matches(m), m::toString);
    }
    assertEquals(Predicate.ALL, Predicate.parse("a = 1").or(Predicate.ALL));
    assertEquals(Predicate.ALL, Predicate.of(List.of(List.of())));
    assertFalse(Predicate.parse("a = 1").isAll());
  }

  @Test
  void theExactMatcherReportsAMatchAllHostForEveryMessageOnce() {
    ExactMatcher x = new ExactMatcher();
    x.put(1, Predicate.ALL);
    x.put(2, Predicate.parse("a = 1"));
    assertArrayEquals(new int[] {1}, x.match(MESSAGES.get(0)));
    assertArrayEquals(new int[] {1, 2}, x.match(MESSAGES.get(1)));
    assertArrayEquals(new int[] {1}, x.match(MESSAGES.get(2)));
    // A host moving from true to a constraint, and back.
    x.put(1, Predicate.parse("topic = \"news\""));
    assertArrayEquals(new int[] {}, x.match(MESSAGES.get(0)));
    assertArrayEquals(new int[] {1}, x.match(MESSAGES.get(2)));
    x.put(1, Predicate.ALL);
    assertArrayEquals(new int[] {1}, x.match(MESSAGES.get(0)));
    x.remove(1);
    assertArrayEquals(new int[] {}, x.match(MESSAGES.get(0)));
    assertArrayEquals(new int[] {2}, x.match(MESSAGES.get(1)));
  }

  @Test
  void encodedTrueIsTheEmptyFilterWhichEveryMessageCovers() {
    BloomParameters params = BloomParameters.DEFAULT;
    Encoder enc = new Encoder(params);
    EncodedPredicate all = enc.encode(Predicate.ALL);
    assertEquals(1, all.size());
    // It absorbs every other filter of an aggregate.
    assertEquals(all, all.union(enc.encode(Predicate.parse("a = 1 || topic prefix \"ne\""))));
    // Checked directly in a bucket, and at the root of a trie split down to single filters.
    java.util.Map<Integer, EncodedPredicate> routers = new java.util.HashMap<>();
    routers.put(7, all);
    for (int r = 8; r < 48; r++) {
      routers.put(r, enc.encode(Predicate.parse("x" + r + " = " + r)));
    }
    for (int bucket : new int[] {EncodedIndex.DEFAULT_BUCKET_SIZE, 1}) {
      EncodedIndex small = EncodedIndex.build(params, java.util.Map.of(7, all), bucket);
      EncodedIndex large = EncodedIndex.build(params, routers, bucket);
      for (Message m : MESSAGES) {
        long[] d = new long[1];
        small.match(enc.encode(m), d);
        assertEquals(1L << 7, d[0], m::toString);
        d[0] = 0;
        large.match(enc.encode(m), d);
        assertEquals(1L << 7, d[0], m::toString); // none of the x-attributes is in a message
      }
    }
  }
}
