package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class PredicateParserTest {

  @Property(tries = 3000)
  void printedPredicatesParseBackToEqualOnes(@ForAll long seed) {
    Predicate p = new RandomModel(seed).predicate(5, 5);
    assertEquals(p, Predicate.parse(p.toString()), p::toString);
  }

  @Test
  void theReadmeExample() {
    Predicate p = Predicate.parse("stock = \"XYZ\" && price > 20 || keywords contains \"Italy\"");
    assertEquals("keywords contains \"Italy\" || price > 20 && stock = \"XYZ\"", p.toString());
    Message m = Message.builder().put("stock", "XYZ").put("price", 50.5).build();
    assertTrue(p.matches(m));
  }

  @Test
  void everyOperatorOnEveryTypeItAppliesTo() {
    String[] numberOps = {"=", "!=", "<", "<=", ">", ">="};
    for (String op : numberOps) {
      for (String v : List.of("5", "-5", "2.5", "1e3", "-0.25E-2")) {
        Predicate p = Predicate.parse("x " + op + " " + v);
        Constraint c = p.get(0).get(0);
        assertEquals(op, c.op().symbol());
        assertTrue(c.value().type().isNumeric());
      }
      assertEquals(op, Predicate.parse("s " + op + " \"abc\"").get(0).get(0).op().symbol());
    }
    for (String op : List.of("prefix", "suffix", "contains")) {
      assertEquals(op, Predicate.parse("s " + op + " \"ab\"").get(0).get(0).op().symbol());
    }
    assertEquals("b = true", Predicate.parse("b = true").toString());
    assertEquals("b = false", Predicate.parse("b != true").toString());
    assertEquals("exists(price)", Predicate.parse(" exists ( price ) ").toString());
    assertEquals(Predicate.NONE, Predicate.parse("false"));
    assertEquals(Predicate.NONE, Predicate.parse("x = 1 && x = 2"));
    assertEquals("false", Predicate.NONE.toString());
  }

  @Test
  void numbersFollowJsonAndCompareAcrossTypes() {
    assertEquals(Value.of(50), Predicate.parse("p = 50.0").get(0).get(0).value());
    assertEquals(
        Value.of(Long.MIN_VALUE),
        Predicate.parse("p = -9223372036854775808").get(0).get(0).value());
    assertEquals(Value.of(1e300), Predicate.parse("p < 1e300").get(0).get(0).value());
    assertTrue(Predicate.parse("p = 50").matches(Message.builder().put("p", 50.0).build()));
  }

  @Test
  void quotedNamesAndEscapes() {
    Predicate p = Predicate.parse("\"with space\" = \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\"");
    Constraint c = p.get(0).get(0);
    assertEquals("with space", c.name());
    assertEquals("a\"b\\c\n\u00e9\uD83D\uDE00", c.value().asString());
    assertEquals("\"prefix\" = 1", Predicate.parse("\"prefix\" = 1").toString());
    assertEquals(p, Predicate.parse(p.toString()));
  }

  @Test
  void parenthesesExpandToDisjunctiveNormalForm() {
    Predicate p = Predicate.parse("(a = 1 || b = 2) && (c = 3 || d = 4)");
    assertEquals(
        "a = 1 && c = 3 || a = 1 && d = 4 || b = 2 && c = 3 || b = 2 && d = 4", p.toString());
  }

  /** An expression tree that is printed as text and evaluated directly. */
  private sealed interface Expr permits Leaf, And, Or {}

  private record Leaf(Constraint c) implements Expr {}

  private record And(List<Expr> parts) implements Expr {}

  private record Or(List<Expr> parts) implements Expr {}

  private static Expr randomExpr(RandomModel r, int depth) {
    Random rnd = r.random();
    if (depth == 0 || rnd.nextInt(3) == 0) {
      return new Leaf(r.constraint());
    }
    List<Expr> parts = new ArrayList<>();
    for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
      parts.add(randomExpr(r, depth - 1));
    }
    return rnd.nextBoolean() ? new And(parts) : new Or(parts);
  }

  private static String text(Expr e, Random rnd) {
    return switch (e) {
      case Leaf l -> rnd.nextInt(5) == 0 ? "(" + l.c() + ")" : l.c().toString();
      case And a ->
          "(" + String.join(" && ", a.parts().stream().map(x -> text(x, rnd)).toList()) + ")";
      case Or o ->
          "(" + String.join(" || ", o.parts().stream().map(x -> text(x, rnd)).toList()) + ")";
    };
  }

  private static boolean eval(Expr e, Message m) {
    return switch (e) {
      case Leaf l -> l.c().test(m);
      case And a -> a.parts().stream().allMatch(x -> eval(x, m));
      case Or o -> o.parts().stream().anyMatch(x -> eval(x, m));
    };
  }

  @Property(tries = 2000)
  void nestedExpressionsMeanWhatTheirTreeMeans(@ForAll long seed) {
    RandomModel r = new RandomModel(seed);
    Expr e = randomExpr(r, 3);
    String text = text(e, r.random());
    Predicate p = Predicate.parse(text);
    for (int i = 0; i < 30; i++) {
      Message m = i % 2 == 0 ? r.message() : r.messageNear(p);
      assertEquals(eval(e, m), p.matches(m), () -> text + " on " + m);
    }
  }

  private static String factors(int n) {
    List<String> f = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      f.add("(a" + i + " = 0 || a" + i + " = 1)");
    }
    return String.join(" && ", f);
  }

  @Test
  void expansionIsCappedAtTheLimit() {
    assertEquals(Limits.MAX_CONJUNCTIONS, Predicate.parse(factors(10)).size());
    String big = factors(11);
    PredicateSyntaxException e =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse(big));
    assertEquals(big.lastIndexOf("&&") + 1, e.column());
    assertEquals("&&", e.token());
    assertTrue(
        e.problem().contains("2048 conjunctions, more than the limit of 1024"), e::getMessage);
  }

  @Test
  void parenthesesNestAtMostTheLimitDeep() {
    int n = PredicateParser.MAX_NESTING;
    assertEquals("x = 1", Predicate.parse("(".repeat(n) + "x = 1" + ")".repeat(n)).toString());
    String tooDeep = "(".repeat(n + 1) + "x = 1" + ")".repeat(n + 1);
    PredicateSyntaxException e =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse(tooDeep));
    assertEquals(n + 1, e.column());
    assertEquals("(", e.token());
    assertEquals(
        "column " + (n + 1) + ": parentheses nested more than " + n + " deep", e.getMessage());
    // Far deeper than any thread's stack would allow a recursive descent to go.
    String huge = "(".repeat(200_000) + "x = 1" + ")".repeat(200_000);
    assertEquals(
        n + 1, assertThrows(PredicateSyntaxException.class, () -> Predicate.parse(huge)).column());
  }

  @Test
  void longTokensAreShortenedInMessagesButKeptWhole() {
    String digits = "9".repeat(100_000);
    PredicateSyntaxException e =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse("a = " + digits));
    assertEquals(digits, e.token());
    assertTrue(e.getMessage().contains("(100000 characters)"), e::getMessage);
    assertTrue(e.getMessage().length() < 200, e::getMessage);

    String word = "w".repeat(5_000);
    PredicateSyntaxException f =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse("a = 1 " + word));
    assertEquals(word, f.token());
    assertTrue(f.getMessage().length() < 200, f::getMessage);

    String number = "1." + "0".repeat(1_000);
    PredicateSyntaxException g =
        assertThrows(PredicateSyntaxException.class, () -> Predicate.parse("a prefix " + number));
    assertEquals("prefix", g.token());
    assertTrue(g.getMessage().contains("(1002 characters)"), g::getMessage);
    assertTrue(g.getMessage().length() < 200, g::getMessage);
  }

  private record Bad(String input, int column, String token, String fragment) {}

  @Test
  void badInputsNameTheirColumnAndToken() {
    String astral = "\uD83D\uDE00";
    List<Bad> cases =
        List.of(
            new Bad("", 1, "end of input", "empty predicate"),
            new Bad("   ", 4, "end of input", "empty predicate"),
            new Bad("(a = 1", 7, "end of input", "expected ')' to close '(' at column 1"),
            new Bad("a = 1 &&", 9, "end of input", "expected an attribute name but found the end"),
            new Bad("a =", 4, "end of input", "expected a value after '='"),
            new Bad("a = \"x\\q\"", 7, "\\q", "unknown escape"),
            new Bad("a = \"abc", 5, "\"abc", "unterminated string"),
            new Bad(
                "a = 99999999999999999999", 5, "99999999999999999999", "out of the 64-bit range"),
            new Bad("a = 1e400", 5, "1e400", "out of the range of a double"),
            new Bad("a prefix 5", 3, "prefix", "operator prefix does not apply to number 5"),
            new Bad("prefix = 1", 1, "prefix", "keyword and cannot be a bare attribute name"),
            new Bad("exists(", 8, "end of input", "attribute name after exists("),
            new Bad("exists(a", 9, "end of input", "expected ')' after the name"),
            new Bad("a = 1 b", 7, "b", "expected '&&', '||' or the end"),
            new Bad("||", 1, "||", "expected an attribute name but found '||'"),
            new Bad("x = = 1", 5, "=", "expected a value after '='"),
            new Bad(
                "\"" + astral + "\" = 1 && x <", 15, "end of input", "expected a value after '<'"),
            new Bad("a == 1", 3, "==", "equality is written '='"),
            new Bad("a ! 1", 3, "!", "did you mean '!='"),
            new Bad("a & b", 3, "&", "did you mean '&&'"),
            new Bad("a = 01", 5, "01", "malformed number"),
            new Bad("a = tru", 5, "tru", "strings are double-quoted"),
            new Bad("b < true", 3, "<", "operator < does not apply to boolean true"),
            new Bad("exists = 1", 1, "exists", "'exists' is a keyword"),
            new Bad("a = \"\\ud800\"", 5, "\"\\ud800\"", "unpaired surrogate"),
            new Bad("a = \"x\ty\"", 7, "\\u0009", "control character U+0009"),
            new Bad("a = 1 || false", 10, "false", "keyword"),
            new Bad("false && a = 1", 1, "false", "'false' stands alone"),
            new Bad("a = 1)", 6, ")", "expected '&&', '||' or the end"),
            new Bad("@", 1, "@", "unexpected character '@' (U+0040)"),
            new Bad("a\u00a0= 1", 2, "\u00a0", "(U+00A0)"),
            new Bad("(a = 1 || b = 2", 16, "end of input", "expected ')'"),
            new Bad("a = \"\\u12\"", 6, "\\u12\"", "four hexadecimal digits"),
            new Bad("\"\" = 1", 1, "\"\"", "attribute name is empty"),
            new Bad("a > \"x\" &&", 11, "end of input", "attribute name"));
    for (Bad b : cases) {
      PredicateSyntaxException e =
          assertThrows(PredicateSyntaxException.class, () -> Predicate.parse(b.input()), b::input);
      assertEquals(b.column(), e.column(), () -> b.input() + " -> " + e.getMessage());
      assertEquals(b.token(), e.token(), () -> b.input() + " -> " + e.getMessage());
      assertTrue(e.problem().contains(b.fragment()), () -> b.input() + " -> " + e.getMessage());
      assertEquals("column " + b.column() + ": " + e.problem(), e.getMessage());
    }
  }

  @Property(tries = 5000)
  void garbageNeverThrowsAnythingButASyntaxError(@ForAll long seed) {
    Random r = new Random(seed);
    String text;
    if (r.nextBoolean()) {
      String alphabet =
          "ab ()&|=!<>\"\\-.0123456789eEu_xprefixsuffixcontainsexiststruefalse\u00e9\uD83D\uDE00\t";
      StringBuilder sb = new StringBuilder();
      for (int i = r.nextInt(30); i > 0; i--) {
        sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
      }
      text = sb.toString();
    } else {
      StringBuilder sb = new StringBuilder(new RandomModel(seed).predicate().toString());
      for (int i = 1 + r.nextInt(3); i > 0 && sb.length() > 0; i--) {
        int at = r.nextInt(sb.length());
        switch (r.nextInt(3)) {
          case 0 -> sb.deleteCharAt(at);
          case 1 -> sb.insert(at, "()&|=\"\\ 9x".charAt(r.nextInt(10)));
          default -> sb.setCharAt(at, "()&|=\"\\ 9x".charAt(r.nextInt(10)));
        }
      }
      text = sb.toString();
    }
    try {
      Predicate p = Predicate.parse(text);
      assertEquals(p, Predicate.parse(p.toString()));
    } catch (PredicateSyntaxException e) {
      assertTrue(
          e.column() >= 1 && e.column() <= text.codePointCount(0, text.length()) + 1,
          e::getMessage);
    }
  }
}
