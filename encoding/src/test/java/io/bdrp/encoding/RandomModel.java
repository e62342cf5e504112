package io.bdrp.encoding;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Seeded generator of messages and predicates for property tests. It draws names and values from
 * small pools full of edge cases (empty and unicode strings, surrogate pairs, quotes and control
 * characters, extreme and integral-double numbers, int/double mixes) so that random messages often
 * hit random constraints exactly at their boundaries.
 */
public final class RandomModel {
  static final String[] NAMES = {
    "a", "b", "price", "stock", "x.y", "with space", "\u00e9t\u00e9", "\uD83D\uDE00", "exists", "_"
  };
  static final String[] STRINGS = {
    "",
    "a",
    "ab",
    "abc",
    "b",
    "ba",
    "Italy",
    "XYZ",
    "\u00e9",
    "\uFFFF",
    new String(Character.toChars(0x10000)),
    "\uD83D\uDE00x",
    "q\"uote",
    "back\\slash",
    "tab\tnew\nline",
    "\u0001ctl",
    "a b"
  };
  static final long[] LONGS = {
    0, 1, -1, 2, 3, 20, 50, 100, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 53, (1L << 53) + 1
  };
  static final double[] DOUBLES = {
    0.5,
    -0.0,
    0.0,
    2.0,
    50.0,
    50.5,
    -1.5,
    1e300,
    -1e300,
    4.9e-324,
    9.223372036854775807E18,
    (double) (1L << 53),
    1e19
  };

  private final Random random;

  public RandomModel(long seed) {
    this.random = new Random(seed);
  }

  public Random random() {
    return random;
  }

  public String name() {
    return NAMES[random.nextInt(NAMES.length)];
  }

  /** A random value of a random type. */
  public Value value() {
    return switch (random.nextInt(4)) {
      case 0 -> Value.of(STRINGS[random.nextInt(STRINGS.length)]);
      case 1 ->
          Value.of(
              random.nextInt(3) == 0 ? random.nextInt(7) - 3 : LONGS[random.nextInt(LONGS.length)]);
      case 2 -> Value.of(DOUBLES[random.nextInt(DOUBLES.length)]);
      default -> Value.of(random.nextBoolean());
    };
  }

  /** A message of 0 to {@code maxAttributes} attributes with distinct names. */
  public Message message(int maxAttributes) {
    Message.Builder b = Message.builder();
    int n = random.nextInt(maxAttributes + 1);
    List<String> used = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name = name();
      if (!used.contains(name)) {
        used.add(name);
        b.put(name, value());
      }
    }
    if (random.nextInt(4) == 0) {
      byte[] body = new byte[random.nextInt(40)];
      random.nextBytes(body);
      b.body(body);
    }
    return b.build();
  }

  public Message message() {
    return message(8);
  }

  /** A random valid constraint. */
  public Constraint constraint() {
    String name = name();
    if (random.nextInt(12) == 0) {
      return Constraint.exists(name);
    }
    Value v = value();
    List<Op> ops = new ArrayList<>();
    for (Op op : Op.values()) {
      if (op.appliesTo(v.type())) {
        ops.add(op);
      }
    }
    return Constraint.of(name, ops.get(random.nextInt(ops.size())), v);
  }

  /** A raw (not yet canonical) disjunction of conjunctions. */
  public List<List<Constraint>> rawDisjunction(int maxConjunctions, int maxConstraints) {
    int n = 1 + random.nextInt(maxConjunctions);
    List<List<Constraint>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int k = 1 + random.nextInt(maxConstraints);
      List<Constraint> conj = new ArrayList<>(k);
      for (int j = 0; j < k; j++) {
        conj.add(constraint());
      }
      out.add(conj);
    }
    return out;
  }

  /** A canonical predicate (may be {@link Predicate#NONE} if every conjunction contradicts). */
  public Predicate predicate(int maxConjunctions, int maxConstraints) {
    return Predicate.of(rawDisjunction(maxConjunctions, maxConstraints));
  }

  public Predicate predicate() {
    return predicate(4, 4);
  }

  /**
   * A message built to satisfy one random conjunction of {@code p} where possible (so that matching
   * tests see many positives, not only misses). Falls back to a random message.
   */
  public Message messageNear(Predicate p) {
    if (p.isEmpty()) {
      return message();
    }
    Conjunction c = p.get(random.nextInt(p.size()));
    Message.Builder b = Message.builder();
    List<String> used = new ArrayList<>();
    for (Constraint k : c.constraints()) {
      if (used.contains(k.name())) {
        continue;
      }
      used.add(k.name());
      Value v = k.value();
      if (v == null) {
        v = value();
      } else if (k.op() == Op.PREFIX) {
        v = Value.of(v.asString() + STRINGS[random.nextInt(STRINGS.length)]);
      } else if (k.op() == Op.SUFFIX || k.op() == Op.CONTAINS) {
        v = Value.of(STRINGS[random.nextInt(STRINGS.length)] + v.asString());
      } else if (k.op() != Op.EQ && random.nextBoolean()) {
        v = value();
      } else if (v.type() == ValueType.INTEGER && random.nextBoolean()) {
        v = Value.of((double) v.asLong()); // same number, other type
      }
      b.put(k.name(), v);
    }
    for (int i = random.nextInt(3); i > 0; i--) {
      String name = name();
      if (!used.contains(name)) {
        used.add(name);
        b.put(name, value());
      }
    }
    return b.build();
  }
}
