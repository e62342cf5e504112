package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Prefix, suffix and contains tries compile to compact rows up to 32 alphabet characters and to
 * wide rows beyond; the matcher agrees with the reference evaluator on both sides of that line,
 * with characters outside the alphabet and beyond ASCII in the values.
 */
class CompiledTrieTest {
  /** The alphabet of {@code size} characters: letters, then CJK characters (beyond ASCII). */
  private static char[] alphabet(int size) {
    char[] a = new char[size];
    for (int i = 0; i < size; i++) {
      a[i] = i < 20 ? (char) ('a' + i) : (char) (0x4E00 + i);
    }
    return a;
  }

  private static String word(Random r, char[] alphabet, int min, int max) {
    StringBuilder sb = new StringBuilder();
    for (int i = min + r.nextInt(max - min + 1); i > 0; i--) {
      // One in ten characters outside the alphabet: a trie stops, an automaton restarts.
      sb.append(r.nextInt(10) == 0 ? 'z' : alphabet[r.nextInt(alphabet.length)]);
    }
    return sb.toString();
  }

  @Test
  void compactUpTo32CharactersWideBeyond() {
    for (int size : new int[] {32, 33}) {
      CharTrie trie = new CharTrie(false);
      char[] a = alphabet(size);
      for (int i = 0; i < size; i++) {
        trie.put(String.valueOf(a[i]), i);
      }
      assertEquals(size <= 32, trie.compile(false, Entries.IDS).compact, "alphabet " + size);
      assertEquals(size <= 32, trie.compile(true, Entries.IDS).compact, "alphabet " + size);
    }
  }

  @Test
  void matcherAgreesWithTheReferenceOnBothLayouts() {
    for (int size : new int[] {3, 32, 33, 40}) {
      for (Op op : new Op[] {Op.PREFIX, Op.SUFFIX, Op.CONTAINS}) {
        agrees(size, op, new Random(size * 31L + op.ordinal()));
      }
    }
  }

  private static void agrees(int size, Op op, Random r) {
    char[] a = alphabet(size);
    ExactMatcher matcher = new ExactMatcher();
    List<Predicate> predicates = new ArrayList<>();
    for (int h = 0; h < 80; h++) {
      Predicate p = Predicate.ofConstraints(Constraint.of("s", op, Value.of(word(r, a, 1, 4))));
      predicates.add(p);
      matcher.put(h, p);
    }
    for (int t = 0; t < 400; t++) {
      String s = word(r, a, 0, 12);
      Message m = Message.builder().put("s", s).build();
      List<Integer> expected = new ArrayList<>();
      for (int h = 0; h < predicates.size(); h++) {
        if (predicates.get(h).matches(m)) {
          expected.add(h);
        }
      }
      assertArrayEquals(
          expected.stream().mapToInt(Integer::intValue).toArray(),
          matcher.match(m),
          () -> op + " over " + size + " characters, value " + s);
    }
  }
}
