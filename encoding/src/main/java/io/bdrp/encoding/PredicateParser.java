package io.bdrp.encoding;

import java.util.ArrayList;
import java.util.List;

/**
 * Parser of the predicate language ({@code docs/predicate-language.md}).
 *
 * <pre>
 * predicate   = "true" | "false" | disjunction         (the whole input)
 * disjunction = conjunction { "||" conjunction }
 * conjunction = term { "&amp;&amp;" term }
 * term        = "(" disjunction ")" | "exists" "(" name ")" | name op value
 * name        = identifier | string
 * op          = "=" | "!=" | "&lt;" | "&lt;=" | "&gt;" | "&gt;=" | "prefix" | "suffix" | "contains"
 * value       = string | number | "true" | "false"
 * </pre>
 *
 * <p>The result is normalised to disjunctive normal form and canonicalised by {@link Predicate#of}.
 * Expansion of {@code (a || b) && (c || d)} multiplies conjunctions; it stops with an error as soon
 * as a partial result would exceed {@link Limits#MAX_CONJUNCTIONS} conjunctions or a conjunction
 * {@link Limits#MAX_CONSTRAINTS} constraints. Parentheses nest at most {@link #MAX_NESTING} deep,
 * so the recursive descent stays far from the end of any thread's stack. Every error is a {@link
 * PredicateSyntaxException} naming the token and its column. Stateless and thread-safe.
 */
public final class PredicateParser {
  /** Deepest nesting of parentheses the parser accepts. */
  public static final int MAX_NESTING = 100;

  /** Longest token, in code points, that an error message quotes in full. */
  private static final int SHOWN_CODE_POINTS = 40;

  private PredicateParser() {}

  /** Parses a predicate; see the class comment for the grammar. */
  public static Predicate parse(String text) {
    if (text == null) {
      throw new PredicateSyntaxException(1, "end of input", "predicate text is null");
    }
    return new Parser(text).parse();
  }

  private enum Kind {
    LPAREN,
    RPAREN,
    AND,
    OR,
    OP,
    WORD,
    STRING,
    NUMBER,
    END
  }

  /** A token: kind, text as written, decoded value (strings, numbers), start index. */
  private record Token(Kind kind, String text, Object value, int start) {}

  /** An expression in DNF: a list of conjunctions, each a list of constraints. */
  private static final class Parser {
    private final String src;
    private int pos;
    private int depth;
    private Token tok;

    Parser(String src) {
      this.src = src;
    }

    Predicate parse() {
      next();
      if (tok.kind == Kind.END) {
        throw error(tok, "empty predicate: expected a constraint, 'true' or 'false'");
      }
      if (tok.kind == Kind.WORD && tok.text.equals("true")) {
        Token t = tok;
        next();
        if (tok.kind == Kind.END) {
          return Predicate.ALL;
        }
        throw error(t, "'true' stands alone as the predicate that matches every message");
      }
      if (tok.kind == Kind.WORD && tok.text.equals("false")) {
        Token f = tok;
        next();
        if (tok.kind == Kind.END) {
          return Predicate.NONE;
        }
        throw error(f, "'false' stands alone as the predicate that matches nothing");
      }
      List<List<Constraint>> dnf = disjunction();
      if (tok.kind != Kind.END) {
        throw error(tok, "expected '&&', '||' or the end but found " + describe(tok));
      }
      return Predicate.of(dnf);
    }

    private List<List<Constraint>> disjunction() {
      Token first = tok;
      List<List<Constraint>> out = new ArrayList<>(conjunction());
      while (tok.kind == Kind.OR) {
        Token or = tok;
        next();
        List<List<Constraint>> more = conjunction();
        if (out.size() + more.size() > Limits.MAX_CONJUNCTIONS) {
          throw error(
              or,
              "predicate expands to more than "
                  + Limits.MAX_CONJUNCTIONS
                  + " conjunctions (from column "
                  + column(first.start)
                  + ")");
        }
        out.addAll(more);
      }
      return out;
    }

    private List<List<Constraint>> conjunction() {
      List<List<Constraint>> acc = term();
      while (tok.kind == Kind.AND) {
        Token and = tok;
        next();
        List<List<Constraint>> right = term();
        long product = (long) acc.size() * right.size();
        if (product > Limits.MAX_CONJUNCTIONS) {
          throw error(
              and,
              "'&&' here expands to "
                  + product
                  + " conjunctions, more than the limit of "
                  + Limits.MAX_CONJUNCTIONS);
        }
        List<List<Constraint>> next = new ArrayList<>((int) product);
        for (List<Constraint> a : acc) {
          for (List<Constraint> b : right) {
            if (a.size() + b.size() > Limits.MAX_CONSTRAINTS) {
              throw error(
                  and,
                  "a conjunction here has more than " + Limits.MAX_CONSTRAINTS + " constraints");
            }
            List<Constraint> both = new ArrayList<>(a.size() + b.size());
            both.addAll(a);
            both.addAll(b);
            next.add(both);
          }
        }
        acc = next;
      }
      return acc;
    }

    private List<List<Constraint>> term() {
      if (tok.kind == Kind.LPAREN) {
        Token open = tok;
        if (depth == MAX_NESTING) {
          throw error(open, "parentheses nested more than " + MAX_NESTING + " deep");
        }
        depth++;
        next();
        List<List<Constraint>> inner = disjunction();
        depth--;
        if (tok.kind != Kind.RPAREN) {
          throw error(
              tok,
              "expected ')' to close '(' at column "
                  + column(open.start)
                  + " but found "
                  + describe(tok));
        }
        next();
        return inner;
      }
      List<List<Constraint>> one = new ArrayList<>(1);
      List<Constraint> c = new ArrayList<>(1);
      c.add(constraint());
      one.add(c);
      return one;
    }

    private Constraint constraint() {
      if (tok.kind == Kind.WORD && tok.text.equals("exists")) {
        Token ex = tok;
        next();
        if (tok.kind != Kind.LPAREN) {
          throw error(
              ex,
              "'exists' is a keyword: write exists(name), or quote an attribute called"
                  + " exists as \"exists\"");
        }
        next();
        String name = name("exists(");
        if (tok.kind != Kind.RPAREN) {
          throw error(tok, "expected ')' after the name in exists( but found " + describe(tok));
        }
        next();
        return Constraint.exists(name);
      }
      String name = name(null);
      Token opTok = tok;
      Op op = operator();
      next();
      Token valueTok = tok;
      Value value = value(opTok);
      if (!op.appliesTo(value.type())) {
        throw error(
            opTok,
            "operator "
                + op.symbol()
                + " does not apply to "
                + Constraint.describe(value.type())
                + " "
                + shown(valueTok.text)
                + (value.type() == ValueType.BOOLEAN
                    ? " (booleans take = and !=)"
                    : " (prefix, suffix and contains take strings)"));
      }
      return Constraint.of(name, op, value);
    }

    /** Reads an attribute name: an identifier or a quoted string. */
    private String name(String after) {
      Token t = tok;
      String name;
      if (t.kind == Kind.STRING) {
        name = (String) t.value;
      } else if (t.kind == Kind.WORD) {
        if (Keywords.isKeyword(t.text)) {
          throw error(
              t,
              "'"
                  + t.text
                  + "' is a keyword and cannot be a bare attribute name; quote it: \""
                  + t.text
                  + "\"");
        }
        name = t.text;
      } else {
        throw error(
            t,
            "expected "
                + (after == null ? "an attribute name" : "an attribute name after " + after)
                + " but found "
                + describe(t));
      }
      if (name.isEmpty()) {
        throw error(t, "attribute name is empty");
      }
      int bytes = Strings.utf8Length(name);
      if (bytes > Limits.MAX_NAME_BYTES) {
        throw error(
            t,
            "attribute name is " + bytes + " bytes of UTF-8, more than " + Limits.MAX_NAME_BYTES);
      }
      next();
      return name;
    }

    private Op operator() {
      Token t = tok;
      if (t.kind == Kind.OP) {
        return Op.fromSymbol(t.text);
      }
      if (t.kind == Kind.WORD
          && (t.text.equals("prefix") || t.text.equals("suffix") || t.text.equals("contains"))) {
        return Op.fromSymbol(t.text);
      }
      throw error(
          t,
          "expected an operator (= != < <= > >= prefix suffix contains) but found " + describe(t));
    }

    private Value value(Token opTok) {
      Token t = tok;
      Value v;
      switch (t.kind) {
        case STRING -> {
          String s = (String) t.value;
          int bytes = Strings.utf8Length(s);
          if (bytes > Limits.MAX_STRING_BYTES) {
            throw error(
                t, "string is " + bytes + " bytes of UTF-8, more than " + Limits.MAX_STRING_BYTES);
          }
          v = Value.of(s);
        }
        case NUMBER -> v = (Value) t.value;
        case WORD -> {
          if (t.text.equals("true")) {
            v = Value.TRUE;
          } else if (t.text.equals("false")) {
            v = Value.FALSE;
          } else {
            throw error(
                t,
                "expected a value after '"
                    + opTok.text
                    + "' but found "
                    + describe(t)
                    + " (strings are double-quoted)");
          }
        }
        default ->
            throw error(t, "expected a value after '" + opTok.text + "' but found " + describe(t));
      }
      next();
      return v;
    }

    // ---- lexer ----

    private void next() {
      while (pos < src.length() && isSpace(src.charAt(pos))) {
        pos++;
      }
      int start = pos;
      if (pos >= src.length()) {
        tok = new Token(Kind.END, "end of input", null, start);
        return;
      }
      char c = src.charAt(pos);
      switch (c) {
        case '(' -> tok = single(Kind.LPAREN, start);
        case ')' -> tok = single(Kind.RPAREN, start);
        case '&' -> tok = pair('&', Kind.AND, start);
        case '|' -> tok = pair('|', Kind.OR, start);
        case '=' -> {
          if (pos + 1 < src.length() && src.charAt(pos + 1) == '=') {
            throw new PredicateSyntaxException(
                column(start), "==", "unknown operator '==': equality is written '='");
          }
          tok = single(Kind.OP, start);
        }
        case '!' -> {
          if (pos + 1 < src.length() && src.charAt(pos + 1) == '=') {
            pos += 2;
            tok = new Token(Kind.OP, "!=", null, start);
          } else {
            throw new PredicateSyntaxException(
                column(start), "!", "unexpected '!': did you mean '!='?");
          }
        }
        case '<', '>' -> {
          pos++;
          if (pos < src.length() && src.charAt(pos) == '=') {
            pos++;
          }
          tok = new Token(Kind.OP, src.substring(start, pos), null, start);
        }
        case '"' -> tok = string(start);
        default -> {
          if (c == '-' || (c >= '0' && c <= '9')) {
            tok = number(start);
          } else {
            int cp = src.codePointAt(pos);
            if (Character.isLetter(cp) || cp == '_') {
              pos += Character.charCount(cp);
              while (pos < src.length()) {
                int d = src.codePointAt(pos);
                if (!(Character.isLetterOrDigit(d) || d == '_' || d == '.')) {
                  break;
                }
                pos += Character.charCount(d);
              }
              tok = new Token(Kind.WORD, src.substring(start, pos), null, start);
            } else {
              throw new PredicateSyntaxException(
                  column(start),
                  new String(Character.toChars(cp)),
                  String.format(
                      "unexpected character '%s' (U+%04X)", new String(Character.toChars(cp)), cp));
            }
          }
        }
      }
    }

    private static boolean isSpace(char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    private Token single(Kind kind, int start) {
      pos++;
      return new Token(kind, src.substring(start, pos), null, start);
    }

    private Token pair(char c, Kind kind, int start) {
      if (pos + 1 < src.length() && src.charAt(pos + 1) == c) {
        pos += 2;
        return new Token(kind, src.substring(start, pos), null, start);
      }
      String what = c == '&' ? "'&&'" : "'||'";
      throw new PredicateSyntaxException(
          column(start), String.valueOf(c), "unexpected '" + c + "': did you mean " + what + "?");
    }

    private Token number(int start) {
      while (pos < src.length() && "+-.eE0123456789".indexOf(src.charAt(pos)) >= 0) {
        pos++;
      }
      String text = src.substring(start, pos);
      if (!text.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
        throw new PredicateSyntaxException(
            column(start), text, "malformed number '" + shown(text) + "' (JSON number syntax)");
      }
      boolean integral = text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
      Value v;
      if (integral) {
        try {
          v = Value.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
          throw new PredicateSyntaxException(
              column(start),
              text,
              "integer "
                  + shown(text)
                  + " is out of the 64-bit range (write it as a decimal to compare as a double)");
        }
      } else {
        double d = Double.parseDouble(text);
        if (!Double.isFinite(d)) {
          throw new PredicateSyntaxException(
              column(start), text, "number " + shown(text) + " is out of the range of a double");
        }
        v = Value.of(d);
      }
      return new Token(Kind.NUMBER, text, v, start);
    }

    private Token string(int start) {
      StringBuilder out = new StringBuilder();
      pos++; // opening quote
      while (true) {
        if (pos >= src.length()) {
          throw new PredicateSyntaxException(
              column(start), src.substring(start), "unterminated string starting here");
        }
        char c = src.charAt(pos);
        if (c == '"') {
          pos++;
          break;
        }
        if (c < 0x20) {
          throw new PredicateSyntaxException(
              column(pos),
              String.format("\\u%04x", (int) c),
              String.format(
                  "control character U+%04X in a string: write it as an escape", (int) c));
        }
        if (c != '\\') {
          out.append(c);
          pos++;
          continue;
        }
        int escAt = pos;
        if (pos + 1 >= src.length()) {
          throw new PredicateSyntaxException(
              column(start), src.substring(start), "unterminated string starting here");
        }
        char e = src.charAt(pos + 1);
        pos += 2;
        switch (e) {
          case '"' -> out.append('"');
          case '\\' -> out.append('\\');
          case '/' -> out.append('/');
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (pos + 4 > src.length() || !src.substring(pos, pos + 4).matches("[0-9a-fA-F]{4}")) {
              throw new PredicateSyntaxException(
                  column(escAt),
                  src.substring(escAt, Math.min(src.length(), pos + 4)),
                  "\\u needs four hexadecimal digits");
            }
            out.append((char) Integer.parseInt(src.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default ->
              throw new PredicateSyntaxException(
                  column(escAt), "\\" + e, "unknown escape '\\" + e + "' in a string");
        }
      }
      String s = out.toString();
      int bad = Strings.firstUnpairedSurrogate(s);
      if (bad >= 0) {
        throw new PredicateSyntaxException(
            column(start),
            src.substring(start, pos),
            "string has an unpaired surrogate (half of a UTF-16 pair, from a \\u escape or raw)");
      }
      return new Token(Kind.STRING, src.substring(start, pos), s, start);
    }

    // ---- errors ----

    private int column(int index) {
      return src.codePointCount(0, Math.min(index, src.length())) + 1;
    }

    private PredicateSyntaxException error(Token t, String problem) {
      return new PredicateSyntaxException(column(t.start), t.text, problem);
    }

    /**
     * The token as quoted in a message: in full up to {@link #SHOWN_CODE_POINTS} code points, else
     * its start and its length, so that a 64 KiB string does not make a 64 KiB error reply.
     */
    private static String shown(String text) {
      int n = text.codePointCount(0, text.length());
      if (n <= SHOWN_CODE_POINTS) {
        return text;
      }
      return text.substring(0, text.offsetByCodePoints(0, SHOWN_CODE_POINTS - 8))
          + "... ("
          + n
          + " characters)";
    }

    private static String describe(Token t) {
      return t.kind == Kind.END ? "the end of input" : "'" + shown(t.text) + "'";
    }
  }
}
