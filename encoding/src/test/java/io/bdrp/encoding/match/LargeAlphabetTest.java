package io.bdrp.encoding.match;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
 * Operands over an alphabet so large that the compiled table would pass its size cap: the matcher
 * walks the tries themselves, and must still agree with the reference evaluator.
 */
class LargeAlphabetTest {
  private static final int OPERANDS = 1_100; // 1,101 rows x 1,101 columns > MAX_TABLE_INTS

  @Test
  void triesTooLargeToCompileAreWalkedDirectly() {
    CharTrie trie = new CharTrie(false);
    for (int i = 0; i < OPERANDS; i++) {
      trie.put(String.valueOf((char) (0x4E00 + i)), i);
    }
    assertNull(trie.compile(true, Entries.IDS), "the table should be over the cap");

    for (Op op : new Op[] {Op.PREFIX, Op.SUFFIX, Op.CONTAINS}) {
      agreesWithTheReference(op);
    }
  }

  /** Every operand under one operator, so that its trie alone is over the cap. */
  private static void agreesWithTheReference(Op op) {
    ExactMatcher matcher = new ExactMatcher();
    List<Predicate> predicates = new ArrayList<>();
    for (int h = 0; h < OPERANDS; h++) {
      String operand = String.valueOf((char) (0x4E00 + h));
      Predicate p = Predicate.ofConstraints(Constraint.of("s", op, Value.of(operand)));
      predicates.add(p);
      matcher.put(h, p);
    }
    Random r = new Random(5);
    for (int t = 0; t < 300; t++) {
      StringBuilder sb = new StringBuilder();
      for (int i = r.nextInt(6); i > 0; i--) {
        sb.append((char) (0x4E00 + r.nextInt(OPERANDS + 50)));
      }
      Message m = Message.builder().put("s", sb.toString()).build();
      List<Integer> expected = new ArrayList<>();
      for (int h = 0; h < OPERANDS; h++) {
        if (predicates.get(h).matches(m)) {
          expected.add(h);
        }
      }
      assertArrayEquals(
          expected.stream().mapToInt(Integer::intValue).toArray(), matcher.match(m), sb::toString);
    }
  }
}
