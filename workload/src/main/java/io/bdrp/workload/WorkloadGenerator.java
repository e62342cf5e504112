package io.bdrp.workload;

import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded generator of messages and predicates following the paper's model (§5.1.4).
 *
 * <p>A message has {@code attributesPerMessage} attributes with distinct names: a share {@code
 * stringFraction} are strings drawn from {@link Terms#DICTIONARY} under names {@code s0, s1, ...},
 * the rest integers uniform in [0, integerMax] under names {@code i0, i1, ...}. A predicate has
 * {@code conjunctionsPerPredicate} conjunctions of {@code minConstraints} to {@code maxConstraints}
 * constraints drawn from the same names and value distributions: string constraints are {@code =} a
 * term, or {@code prefix}/{@code suffix}/{@code contains} a piece of a term (2 to 4 characters, so
 * that a piece matches several terms); integer constraints are {@code =}, {@code <} or {@code >} a
 * uniform integer.
 *
 * <p>The same seed gives the same sequence. Not thread-safe: one generator per thread.
 */
public final class WorkloadGenerator {
  private final WorkloadSpec spec;
  private final SplittableRandom random;

  public WorkloadGenerator(WorkloadSpec spec, long seed) {
    this.spec = spec;
    this.random = new SplittableRandom(seed);
  }

  public WorkloadSpec spec() {
    return spec;
  }

  /** A message without a body. */
  public Message message() {
    return message(new byte[0]);
  }

  /** A message with the given body. */
  public Message message(byte[] body) {
    return attributes().body(body).build();
  }

  /**
   * A message as {@link #message(byte[])} plus one integer attribute that no predicate of this
   * generator names (a message number for accounting, say); fails if the name is one it uses.
   */
  public Message messageWith(byte[] body, String name, long value) {
    if (name.matches("[si][0-9]+")) {
      throw new IllegalArgumentException("'" + name + "' is a workload attribute name");
    }
    return attributes().put(name, value).body(body).build();
  }

  private Message.Builder attributes() {
    Message.Builder b = Message.builder();
    int strings = spec.stringAttributes();
    for (int n : distinct(spec.stringNames(), strings)) {
      b.put("s" + n, term());
    }
    for (int n : distinct(spec.integerNames(), spec.attributesPerMessage() - strings)) {
      b.put("i" + n, (long) random.nextInt(spec.integerMax() + 1));
    }
    return b;
  }

  /** A predicate (canonical; conjunctions that contradict themselves are dropped by it). */
  public Predicate predicate() {
    List<List<Constraint>> disjunction = new ArrayList<>(spec.conjunctionsPerPredicate());
    for (int i = 0; i < spec.conjunctionsPerPredicate(); i++) {
      int k =
          spec.minConstraints() + random.nextInt(spec.maxConstraints() - spec.minConstraints() + 1);
      List<Constraint> conjunction = new ArrayList<>(k);
      for (int j = 0; j < k; j++) {
        conjunction.add(constraint());
      }
      disjunction.add(conjunction);
    }
    return Predicate.of(disjunction);
  }

  /** One constraint of the model. */
  public Constraint constraint() {
    if (random.nextDouble() < spec.stringConstraintFraction()) {
      String name = "s" + random.nextInt(spec.stringNames());
      if (random.nextDouble() < spec.stringEqualityFraction()) {
        return Constraint.of(name, Op.EQ, Value.of(term()));
      }
      String t = term();
      int len = Math.min(t.length(), 2 + random.nextInt(3));
      return switch (random.nextInt(3)) {
        case 0 -> Constraint.of(name, Op.PREFIX, Value.of(t.substring(0, len)));
        case 1 -> Constraint.of(name, Op.SUFFIX, Value.of(t.substring(t.length() - len)));
        default -> {
          int start = random.nextInt(t.length() - len + 1);
          yield Constraint.of(name, Op.CONTAINS, Value.of(t.substring(start, start + len)));
        }
      };
    }
    String name = "i" + random.nextInt(spec.integerNames());
    Value v = Value.of((long) random.nextInt(spec.integerMax() + 1));
    if (random.nextDouble() < spec.integerEqualityFraction()) {
      return Constraint.of(name, Op.EQ, v);
    }
    return Constraint.of(name, random.nextBoolean() ? Op.LT : Op.GT, v);
  }

  private String term() {
    return Terms.DICTIONARY.get(random.nextInt(Terms.DICTIONARY.size()));
  }

  /** k distinct numbers from [0, n), by a partial Fisher-Yates shuffle. */
  private int[] distinct(int n, int k) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    for (int i = 0; i < k; i++) {
      int j = i + random.nextInt(n - i);
      int t = all[i];
      all[i] = all[j];
      all[j] = t;
    }
    int[] out = new int[k];
    System.arraycopy(all, 0, out, 0, k);
    return out;
  }
}
