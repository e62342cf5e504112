package io.bdrp.encoding.bloom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.List;
import org.junit.jupiter.api.Test;

class EncoderTest {
  private final Encoder enc = new Encoder(BloomParameters.DEFAULT);

  private static Predicate single(Constraint... cs) {
    return Predicate.ofConstraints(cs);
  }

  @Test
  void paperExampleMatches() {
    Message m = Message.builder().put("stock", "XYZ").put("price", 50).put("quantity", 100).build();
    Predicate p =
        single(
            Constraint.of("stock", Op.EQ, Value.of("XYZ")),
            Constraint.of("price", Op.GT, Value.of(20)));
    assertTrue(enc.encode(p).matches(enc.encode(m)));
  }

  @Test
  void categoriesFollowThePaper() {
    Encoder enc = new Encoder(BloomParameters.DEFAULT.withCategories(CategoryScheme.PAPER));
    // The predicate's filter is exactly {$stock=XYZ, ∃#price}.
    long[] expected = BloomParameters.DEFAULT.newFilter();
    Categories.add(
        expected, Categories.equality("stock", Value.of("XYZ")), BloomParameters.DEFAULT);
    Categories.add(expected, Categories.existence('#', "price"), BloomParameters.DEFAULT);
    Predicate p =
        single(
            Constraint.of("stock", Op.EQ, Value.of("XYZ")),
            Constraint.of("price", Op.GT, Value.of(20)));
    assertArrayEquals(expected, enc.encode(p).filter(0));
    // The message's filter is {∃$stock, $stock=XYZ}.
    long[] msg = BloomParameters.DEFAULT.newFilter();
    Categories.add(msg, Categories.existence('$', "stock"), BloomParameters.DEFAULT);
    Categories.add(msg, Categories.equality("stock", Value.of("XYZ")), BloomParameters.DEFAULT);
    assertArrayEquals(msg, enc.encode(Message.builder().put("stock", "XYZ").build()));
  }

  @Test
  void sharpCategoriesNarrowPrefixesAndRanges() {
    Predicate prefix = single(Constraint.of("s", Op.PREFIX, Value.of("mar")));
    Predicate below = single(Constraint.of("n", Op.LT, Value.of(37)));
    Message market = Message.builder().put("s", "market").put("n", 36).build();
    Message minister = Message.builder().put("s", "minister").put("n", 64).build();
    // Under the paper's categories both predicates only ask for the attribute: both messages match.
    Encoder paper = new Encoder(BloomParameters.DEFAULT.withCategories(CategoryScheme.PAPER));
    for (Predicate p : List.of(prefix, below)) {
      assertTrue(paper.encode(p).matches(paper.encode(market)));
      assertTrue(paper.encode(p).matches(paper.encode(minister)));
    }
    // Sharp: "minister" does not start with "mar", and 64 is not in a bucket that covers x < 37.
    Encoder sharp = new Encoder(BloomParameters.DEFAULT);
    for (Predicate p : List.of(prefix, below)) {
      assertTrue(sharp.encode(p).matches(sharp.encode(market)), p::toString);
      assertFalse(sharp.encode(p).matches(sharp.encode(minister)), p::toString);
    }
    // x < 37 alone is covered by three buckets: negatives, [0, 32) and [32, 40).
    assertEquals(3, sharp.encode(below).size());
  }

  @Test
  void integerAndDoubleOfEqualValueShareTheirCategory() {
    assertEquals(
        Categories.equality("price", Value.of(50)), Categories.equality("price", Value.of(50.0)));
    assertNotEquals(
        Categories.equality("price", Value.of(50)), Categories.equality("price", Value.of(50.5)));
    assertNotEquals(
        Categories.equality("price", Value.of(50)), Categories.equality("price", Value.of("50")));
  }

  @Test
  void categoryInputsAreUnambiguous() {
    // Without a length prefix, name "ab" + value "c" and name "a" + value "bc" would collide.
    assertNotEquals(
        Categories.equality("ab", Value.of("c")), Categories.equality("a", Value.of("bc")));
    assertNotEquals(Categories.existence('$', "a"), Categories.existence('#', "a"));
  }

  @Test
  void categoryHashIsPinned() {
    // The hash is part of the router-to-router protocol: filters from routers of different
    // builds must agree. If this changes, the protocol version must change with it.
    assertEquals(0x79a5f1b806e7fa11L, Categories.existence('$', "stock"));
    assertEquals(0x92c34c51a8beda95L, Categories.equality("price", Value.of(50)));
  }

  @Test
  void existsExpandsOverTypes() {
    Predicate p = single(Constraint.exists("x"));
    assertEquals(3, enc.encode(p).size());
    for (Value v : List.of(Value.of("s"), Value.of(1), Value.of(1.5), Value.TRUE)) {
      assertTrue(
          enc.encode(p).matches(enc.encode(Message.builder().put("x", v).build())), v::toString);
    }
    assertFalse(enc.encode(p).matches(enc.encode(Message.builder().put("y", 1).build())));
  }

  @Test
  void manyExistsConstraintsWidenRatherThanExplode() {
    Predicate p =
        single(
            Constraint.exists("a"),
            Constraint.exists("b"),
            Constraint.exists("c"),
            Constraint.exists("d"),
            Constraint.exists("e"));
    EncodedPredicate ep = enc.encode(p);
    assertEquals(27, ep.size());
    Message m =
        Message.builder()
            .put("a", 1)
            .put("b", "x")
            .put("c", true)
            .put("d", 2.5)
            .put("e", 1)
            .build();
    assertTrue(ep.matches(enc.encode(m)));
  }

  @Test
  void encodeIntoReusesTheArray() {
    Message m = Message.builder().put("a", 1).build();
    long[] dst = BloomParameters.DEFAULT.newFilter();
    dst[0] = -1L;
    enc.encodeInto(m, dst);
    assertArrayEquals(enc.encode(m), dst);
  }

  @Test
  void parametersAreValidated() {
    assertThrows(IllegalArgumentException.class, () -> new BloomParameters(32, 3));
    assertThrows(IllegalArgumentException.class, () -> new BloomParameters(256, 0));
    assertEquals(3, new BloomParameters(130, 2).words());
  }
}
