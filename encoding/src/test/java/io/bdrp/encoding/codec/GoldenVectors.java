package io.bdrp.encoding.codec;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.List;

/**
 * Hand-built messages and predicates with their expected encodings. The hex was worked out by hand
 * from the layouts in docs/wire-encoding.md, field by field (the comments give the byte offset of
 * each field), not produced by the encoder.
 */
final class GoldenVectors {
  private GoldenVectors() {}

  /** No attributes, no body. */
  static final Message EMPTY_MESSAGE = Message.builder().build();

  static final String EMPTY_MESSAGE_HEX =
      "0000" // 0: attribute count 0
          + "00000000"; // 2: body length 0

  /**
   * Every type tag, a negative integer, a double, a non-ASCII name and a body. Name order is {@code
   * b < d < n < s < é} (é is U+00E9).
   */
  static final Message EVERY_TYPE =
      Message.builder()
          .put("s", "hi")
          .put("n", -2L)
          .put("d", 1.5)
          .put("b", true)
          .put("\u00e9", false)
          .body(new byte[] {(byte) 0xCA, (byte) 0xFE})
          .build();

  static final String EVERY_TYPE_HEX =
      "0005" // 0: five attributes
          // 2: BOOLEAN, name "b", true
          + "04 01 62 01"
          // 6: DOUBLE, name "d", 1.5 = 1.1b x 2^0: exponent 1023 = 0x3ff, top fraction bit set
          + "03 01 64 3ff8000000000000"
          // 17: INTEGER, name "n", -2 in two's complement
          + "02 01 6e fffffffffffffffe"
          // 28: STRING, name "s", length 2 at 31, "hi" at 33
          + "01 01 73 0002 6869"
          // 35: BOOLEAN, name "é" = c3 a9 (two bytes) at 37, false at 39
          + "04 02 c3a9 00"
          // 40: body length 2, body at 44
          + "00000002 cafe";

  /**
   * Edge values: an empty string, Long.MIN_VALUE, a negative double, negative zero (a double, not
   * the integer 0), and a name and a value outside the BMP/ASCII. Name order (UTF-16 units) is
   * {@code e < neg < x < z < U+1F600} (its high surrogate is 0xd83d).
   */
  static final Message EDGE_VALUES =
      Message.builder()
          .put("\uD83D\uDE00", "\u20ac5")
          .put("z", -0.0)
          .put("x", -2.5)
          .put("neg", Long.MIN_VALUE)
          .put("e", "")
          .build();

  static final String EDGE_VALUES_HEX =
      "0005"
          // 2: STRING "e" = "", length 0
          + "01 01 65 0000"
          // 7: INTEGER "neg", -2^63
          + "02 03 6e6567 8000000000000000"
          // 20: DOUBLE "x", -2.5: sign 1, 2.5 = 1.01b x 2^1, exponent 1024 = 0x400
          + "03 01 78 c004000000000000"
          // 31: DOUBLE "z", -0.0: only the sign bit
          + "03 01 7a 8000000000000000"
          // 42: STRING U+1F600 = f0 9f 98 80, value "€5": € U+20AC = e2 82 ac, then "5" = 35
          + "01 04 f09f9880 0004 e282ac35"
          // 54: no body
          + "00000000";

  /** Predicate.NONE: no conjunctions. */
  static final String NONE_HEX = "0000";

  /** Predicate.ALL: one conjunction of no constraints. */
  static final String ALL_HEX = "000100";

  /**
   * One conjunction with every operator, each on its own name so that canonicalisation keeps them
   * all; {@code k != false} is canonically {@code k = true}.
   */
  static final Predicate EVERY_OPERATOR =
      Predicate.ofConstraints(
          Constraint.of("k", Op.NE, Value.of(false)),
          Constraint.exists("j"),
          Constraint.of("i", Op.CONTAINS, Value.of("q")),
          Constraint.of("h", Op.SUFFIX, Value.of("yz")),
          Constraint.of("g", Op.PREFIX, Value.of("ab")),
          Constraint.of("f", Op.LE, Value.of(10)),
          Constraint.of("e", Op.LT, Value.of("m")),
          Constraint.of("d", Op.GE, Value.of(-1)),
          Constraint.of("c", Op.GT, Value.of(2.5)),
          Constraint.of("b", Op.NE, Value.of("x")),
          Constraint.of("a", Op.EQ, Value.of(1)));

  static final String EVERY_OPERATOR_HEX =
      "0001" // 0: one conjunction
          + "0b" // 2: eleven constraints
          // 3: op = (1), "a", INTEGER at 6, 1 at 7
          + "01 01 61 02 0000000000000001"
          // 15: op != (2), "b", STRING "x"
          + "02 01 62 01 0001 78"
          // 22: op > (5), "c", DOUBLE 2.5
          + "05 01 63 03 4004000000000000"
          // 34: op >= (6), "d", INTEGER -1
          + "06 01 64 02 ffffffffffffffff"
          // 46: op < (3), "e", STRING "m"
          + "03 01 65 01 0001 6d"
          // 53: op <= (4), "f", INTEGER 10
          + "04 01 66 02 000000000000000a"
          // 65: prefix (7), "g", STRING "ab"
          + "07 01 67 01 0002 6162"
          // 73: suffix (8), "h", STRING "yz"
          + "08 01 68 01 0002 797a"
          // 81: contains (9), "i", STRING "q"
          + "09 01 69 01 0001 71"
          // 88: exists (10), "j", no operand
          + "0a 01 6a"
          // 91: op = (1), "k", BOOLEAN true
          + "01 01 6b 04 01";

  /**
   * Several conjunctions, canonically ordered by their first constraint ({@code alert < flag <
   * price < été}); {@code price < 100.0} is canonically the integer 100.
   */
  static final Predicate SEVERAL_CONJUNCTIONS =
      Predicate.of(
          List.of(
              List.of(
                  Constraint.of("sym", Op.EQ, Value.of("IBM")),
                  Constraint.of("price", Op.LT, Value.of(100.0))),
              List.of(Constraint.of("\u00e9t\u00e9", Op.GE, Value.of(-0.5))),
              List.of(Constraint.exists("alert")),
              List.of(Constraint.of("flag", Op.EQ, Value.of(false)))));

  static final String SEVERAL_CONJUNCTIONS_HEX =
      "0004" // 0: four conjunctions
          // 2: one constraint: exists "alert"
          + "01 | 0a 05 616c657274"
          // 10: one constraint: "flag" = false
          + "01 | 01 04 666c6167 04 00"
          // 19: two constraints: "price" < 100 (integer), "sym" = "IBM"
          + "02 | 03 05 7072696365 02 0000000000000064 | 01 03 73796d 01 0003 49424d"
          // 47: one constraint: "été" (c3a9 74 c3a9) >= -0.5: sign 1, exponent 1022 = 0x3fe
          + "01 | 06 05 c3a974c3a9 03 bfe0000000000000";
}
