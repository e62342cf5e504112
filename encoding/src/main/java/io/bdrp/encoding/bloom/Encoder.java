package io.bdrp.encoding.bloom;

import io.bdrp.encoding.Attributes;
import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * Encodes messages and predicates as Bloom filters (paper §3), under the parameters' {@link
 * CategoryScheme}.
 *
 * <p>A message is encoded as one filter holding all categories of all its attributes. A conjunction
 * becomes one or a few <em>alternatives</em>, each a set of categories, and one filter per
 * alternative. The invariant that makes the encoding free of false negatives: when a message
 * satisfies a conjunction, the message's categories include those of at least one alternative, so
 * its filter covers that alternative's filter.
 *
 * <p>Alternatives come from two places. {@code exists(name)} says nothing about the type, while
 * existence categories are typed, so an {@code exists} constraint has one alternative per type
 * (string, number, boolean); with several, the product of those, up to {@value
 * #MAX_EXPANDED_EXISTS} of them; further {@code exists} constraints are left out, which only widens
 * the filter. Under {@link CategoryScheme#SHARP} a numeric range (the bounds on one name in the
 * conjunction) is covered by a few magnitude buckets, one alternative each; the product of a
 * conjunction's alternatives is kept within {@value #MAX_ALTERNATIVES} by covering ranges with
 * fewer, wider buckets, down to the existence category.
 *
 * <p>Immutable and thread-safe; {@link #encodeInto} allocates nothing.
 */
public final class Encoder {
  /** Most {@code exists} constraints of a conjunction that are expanded over the types. */
  public static final int MAX_EXPANDED_EXISTS = 3;

  /** Most alternatives (filters) a conjunction is encoded as. */
  public static final int MAX_ALTERNATIVES = 27;

  /** Most buckets one numeric range is covered by. */
  static final int MAX_RANGE_BUCKETS = 8;

  /** Most distinct character pairs of a substring, prefix or suffix operand that are encoded. */
  static final int MAX_OPERAND_PAIRS = 3;

  private static final char[] TYPE_TAGS = {
    ValueType.STRING.categoryTag(), ValueType.INTEGER.categoryTag(), ValueType.BOOLEAN.categoryTag()
  };

  private final BloomParameters params;
  private final boolean sharp;

  public Encoder(BloomParameters params) {
    this.params = params;
    this.sharp = params.categories() == CategoryScheme.SHARP;
  }

  public BloomParameters parameters() {
    return params;
  }

  /** The filter of a message (a new array). */
  public long[] encode(Message m) {
    long[] f = params.newFilter();
    encodeInto(m, f);
    return f;
  }

  /**
   * Clears {@code dst} (of {@link BloomParameters#words()} words) and encodes {@code m} into it.
   */
  public void encodeInto(Attributes m, long[] dst) {
    Arrays.fill(dst, 0L);
    categories(m, dst, null);
  }

  /** Passes every category of a message to {@code sink} (repeats possible). */
  public void categories(Message m, LongConsumer sink) {
    categories(m, null, sink);
  }

  /** Adds each category to {@code dst}, or passes it to {@code sink} when that is not null. */
  private void categories(Attributes m, long[] dst, LongConsumer sink) {
    for (int i = 0; i < m.size(); i++) {
      String name = m.name(i);
      Value v = m.value(i);
      emit(Categories.existence(v.type().categoryTag(), name), dst, sink);
      emit(Categories.equality(name, v), dst, sink);
      if (!sharp) {
        continue;
      }
      switch (v.type()) {
        case STRING -> stringCategories(name, v.asString(), dst, sink);
        case INTEGER, DOUBLE -> magnitudeCategories(name, Categories.cell(v), dst, sink);
        default -> {}
      }
    }
  }

  private void emit(long category, long[] dst, LongConsumer sink) {
    if (sink != null) {
      sink.accept(category);
    } else {
      Categories.add(dst, category, params);
    }
  }

  private void stringCategories(String name, String s, long[] dst, LongConsumer sink) {
    int n = s.length();
    for (int len = 2; len <= Math.min(3, n); len++) {
      emit(Categories.prefix(name, s, len), dst, sink);
      emit(Categories.suffix(name, s, len), dst, sink);
    }
    long buckets = 0;
    for (int i = 1; i < n; i++) {
      buckets |= 1L << Categories.pairBucket(s.charAt(i - 1), s.charAt(i));
    }
    for (; buckets != 0; buckets &= buckets - 1) {
      emit(Categories.pair(name, Long.numberOfTrailingZeros(buckets)), dst, sink);
    }
  }

  private void magnitudeCategories(String name, int cell, long[] dst, LongConsumer sink) {
    for (int level : Categories.MAGNITUDE_LEVELS) {
      emit(Categories.magnitude(name, level, cell >>> level), dst, sink);
    }
  }

  /** The minimal filter set of a predicate. */
  public EncodedPredicate encode(Predicate p) {
    List<char[]> filters = new ArrayList<>(p.size());
    for (Conjunction c : p.conjunctions()) {
      for (long[] alternative : categories(c)) {
        filters.add(positions(alternative));
      }
    }
    return EncodedPredicate.minimalSet(params, filters, null);
  }

  /** The filter of a set of categories as its set-bit positions, ascending (never made dense). */
  private char[] positions(long[] categories) {
    int[] bits = new int[categories.length * params.hashes()];
    int n = 0;
    for (long category : categories) {
      n = Categories.positions(category, params, bits, n);
    }
    Arrays.sort(bits, 0, n);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
      if (i == 0 || bits[i] != bits[i - 1]) {
        bits[distinct++] = bits[i];
      }
    }
    char[] out = new char[distinct];
    for (int i = 0; i < distinct; i++) {
      out[i] = (char) bits[i];
    }
    return out;
  }

  /** The filters of one conjunction, one per alternative. */
  public List<long[]> encode(Conjunction c) {
    List<long[]> out = new ArrayList<>(1);
    for (long[] alternative : categories(c)) {
      out.add(filter(alternative));
    }
    return out;
  }

  private long[] filter(long[] categories) {
    long[] f = params.newFilter();
    for (long category : categories) {
      Categories.add(f, category, params);
    }
    return f;
  }

  /**
   * The alternatives of a conjunction, each the array of its category hashes: a message that
   * satisfies the conjunction has every category of at least one of them.
   */
  public List<long[]> categories(Conjunction c) {
    List<Long> base = new ArrayList<>();
    List<String> exists = new ArrayList<>(0);
    Map<String, int[]> ranges = new LinkedHashMap<>(); // name -> {low cell, high cell}
    for (int i = 0; i < c.size(); i++) {
      Constraint k = c.get(i);
      Op op = k.op();
      if (op == Op.EXISTS) {
        if (exists.size() < MAX_EXPANDED_EXISTS) {
          exists.add(k.name());
        }
      } else if (op == Op.EQ) {
        base.add(Categories.equality(k.name(), k.value()));
        if (sharp) {
          sharpEquality(k, base);
        }
      } else {
        base.add(Categories.existence(k.value().type().categoryTag(), k.name()));
        if (sharp) {
          sharpConstraint(k, base, ranges);
        }
      }
    }
    // Alternatives for a range only pay where the range is the whole conjunction: next to other
    // constraints, whose categories already make the filter rare, one bucket does as well.
    int budget = c.size() == 1 ? MAX_ALTERNATIVES : 1;
    for (int i = 0; i < exists.size(); i++) {
      budget /= TYPE_TAGS.length;
    }
    List<List<long[]>> choices = rangeChoices(ranges, budget);
    for (String name : exists) {
      List<long[]> types = new ArrayList<>(TYPE_TAGS.length);
      for (char tag : TYPE_TAGS) {
        types.add(new long[] {Categories.existence(tag, name)});
      }
      choices.add(types);
    }
    List<long[]> out = new ArrayList<>();
    expand(base.stream().mapToLong(Long::longValue).toArray(), choices, 0, out);
    return out;
  }

  private static void sharpConstraint(Constraint k, List<Long> base, Map<String, int[]> ranges) {
    Value v = k.value();
    String name = k.name();
    if (v.type() == ValueType.STRING) {
      String s = v.asString();
      int n = s.length();
      switch (k.op()) {
        case PREFIX -> {
          if (n >= 2) {
            base.add(Categories.prefix(name, s, Math.min(3, n)));
          }
        }
        case SUFFIX -> {
          if (n >= 2) {
            base.add(Categories.suffix(name, s, Math.min(3, n)));
          }
        }
        case CONTAINS -> pairs(name, s, base);
        default -> {}
      }
      return;
    }
    if (v.type() != ValueType.INTEGER && v.type() != ValueType.DOUBLE) {
      return;
    }
    int low = 0;
    int high = Categories.CELLS - 1;
    switch (k.op()) {
      case LT -> {
        // v < b with an integral b means floor(v) <= b - 1.
        Value c = v.canonical();
        if (c.type() == ValueType.INTEGER && c.asLong() != Long.MIN_VALUE) {
          high = Categories.cell(c.asLong() - 1);
        } else {
          high = Categories.cell(v);
        }
      }
      case LE -> high = Categories.cell(v);
      case GT, GE -> low = Categories.cell(v);
      default -> {
        return;
      }
    }
    int[] r = ranges.computeIfAbsent(name, x -> new int[] {0, Categories.CELLS - 1});
    r[0] = Math.max(r[0], low);
    r[1] = Math.min(r[1], high);
  }

  /**
   * An equality constraint also gets the categories that an equal value implies and that are cheap:
   * the existence category, and the leading characters of a string or the finest magnitude bucket
   * of a number. They add no precision but more bits, so that the filter of a single equality is
   * rarely covered by a message filter by chance (a message filter of the sharp scheme sets more
   * bits than the paper's).
   */
  private static void sharpEquality(Constraint k, List<Long> base) {
    Value v = k.value();
    String name = k.name();
    base.add(Categories.existence(v.type().categoryTag(), name));
    switch (v.type()) {
      case STRING -> {
        String s = v.asString();
        if (s.length() >= 2) {
          base.add(Categories.prefix(name, s, Math.min(3, s.length())));
        }
      }
      case INTEGER, DOUBLE -> base.add(Categories.magnitude(name, 0, Categories.cell(v)));
      default -> {}
    }
  }

  /** The level after {@code level} in {@link Categories#MAGNITUDE_LEVELS}, or -1. */
  private static int nextLevel(int level) {
    for (int l : Categories.MAGNITUDE_LEVELS) {
      if (l > level) {
        return l;
      }
    }
    return -1;
  }

  /** The categories of up to {@value #MAX_OPERAND_PAIRS} distinct pair buckets of an operand. */
  private static void pairs(String name, String s, List<Long> base) {
    long seen = 0;
    for (int i = 1; i < s.length() && Long.bitCount(seen) < MAX_OPERAND_PAIRS; i++) {
      int b = Categories.pairBucket(s.charAt(i - 1), s.charAt(i));
      if ((seen & (1L << b)) == 0) {
        seen |= 1L << b;
        base.add(Categories.pair(name, b));
      }
    }
  }

  /**
   * For each numeric range, the bucket categories that cover it (one per alternative), with the
   * product of their counts at most {@code budget}: the range with the most buckets is covered with
   * fewer, wider ones until it fits. A range whose cover is everything is left to the existence
   * category already in the base.
   */
  private static List<List<long[]>> rangeChoices(Map<String, int[]> ranges, int budget) {
    List<String> names = new ArrayList<>(ranges.keySet());
    List<int[][]> covers = new ArrayList<>(names.size());
    for (String name : names) {
      int[] r = ranges.get(name);
      covers.add(cover(r[0], r[1], MAX_RANGE_BUCKETS));
    }
    while (true) {
      long product = 1;
      int widest = -1;
      for (int i = 0; i < covers.size(); i++) {
        int n = Math.max(1, covers.get(i).length);
        product *= n;
        if (n > 1 && (widest < 0 || n > covers.get(widest).length)) {
          widest = i;
        }
      }
      if (product <= Math.max(1, budget) || widest < 0) {
        break;
      }
      int[] r = ranges.get(names.get(widest));
      covers.set(widest, cover(r[0], r[1], covers.get(widest).length - 1));
    }
    List<List<long[]>> choices = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      int[][] blocks = covers.get(i);
      if (blocks.length == 0) {
        continue;
      }
      List<long[]> alternatives = new ArrayList<>(blocks.length);
      for (int[] b : blocks) {
        // The bucket and, where there is one, the wider bucket around it: implied by the first,
        // it adds no precision but two more bits, so that a filter of one range is rarely covered
        // by a message filter by chance.
        long bucket = Categories.magnitude(names.get(i), b[0], b[1]);
        int up = nextLevel(b[0]);
        alternatives.add(
            up < 0
                ? new long[] {bucket}
                : new long[] {
                  bucket, Categories.magnitude(names.get(i), up, b[1] >>> (up - b[0]))
                });
      }
      choices.add(alternatives);
    }
    return choices;
  }

  /**
   * At most {@code max} aligned blocks {level, index} of {@link Categories#MAGNITUDE_LEVELS} that
   * together cover the cells [low, high]; empty when the range is empty or its cover would be all
   * cells. Starts from the exact cover (the widest aligned block that fits at each step) and, while
   * there are too many blocks, widens the finest ones to the next level.
   */
  static int[][] cover(int low, int high, int max) {
    int[] levels = Categories.MAGNITUDE_LEVELS;
    if (low > high || max < 1) {
      return new int[0][];
    }
    List<int[]> blocks = new ArrayList<>();
    for (int x = low; x <= high; ) {
      int level = 0;
      for (int l : levels) {
        int size = 1 << l;
        if ((x & (size - 1)) == 0 && x + size - 1 <= high) {
          level = l;
        }
      }
      blocks.add(new int[] {level, x >>> level});
      x += 1 << level;
    }
    while (blocks.size() > max) {
      int finest = Integer.MAX_VALUE;
      for (int[] b : blocks) {
        finest = Math.min(finest, b[0]);
      }
      int next = nextLevel(finest);
      if (next < 0) {
        return new int[0][];
      }
      List<int[]> wider = new ArrayList<>(blocks.size());
      for (int[] b : blocks) {
        int[] w = b[0] == finest ? new int[] {next, b[1] >>> (next - finest)} : b;
        boolean inside = false;
        for (int[] o : wider) {
          if (o[0] >= w[0] && (w[1] >>> (o[0] - w[0])) == o[1]) {
            inside = true;
            break;
          }
        }
        if (!inside) {
          wider.removeIf(o -> o[0] < w[0] && (o[1] >>> (w[0] - o[0])) == w[1]);
          wider.add(w);
        }
      }
      blocks = wider;
    }
    int top = levels[levels.length - 1];
    if (blocks.size() == Categories.CELLS >>> top && blocks.stream().allMatch(b -> b[0] == top)) {
      return new int[0][];
    }
    return blocks.toArray(new int[0][]);
  }

  /** One alternative per combination of one category from each choice, each with the base. */
  private static void expand(long[] cats, List<List<long[]>> choices, int i, List<long[]> out) {
    if (i == choices.size()) {
      out.add(cats);
      return;
    }
    for (long[] more : choices.get(i)) {
      long[] next = Arrays.copyOf(cats, cats.length + more.length);
      System.arraycopy(more, 0, next, cats.length, more.length);
      expand(next, choices, i + 1, out);
    }
  }

  /**
   * How many filters {@link #encode(Predicate)} makes of {@code p} before it keeps the minimal set:
   * one per alternative of each conjunction. Counting stops once the count is above {@code
   * stopAbove}, so that the cost of asking is bounded by the limit it is checked against, not by
   * the predicate; builds no filter.
   */
  public long filterCount(Predicate p, long stopAbove) {
    long n = 0;
    for (Conjunction c : p.conjunctions()) {
      n += categories(c).size();
      if (n > stopAbove) {
        break;
      }
    }
    return n;
  }
}
