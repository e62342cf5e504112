package io.bdrp.encoding;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A conjunction of constraints in canonical form: sorted, deduplicated and simplified per
 * attribute, so that equal conjunctions are equal objects. Immutable.
 *
 * <p>Simplification keeps the meaning exactly. Per attribute name:
 *
 * <ul>
 *   <li>{@code exists(a)} is dropped when a typed constraint on {@code a} is present;
 *   <li>constraints of different types on one name cannot all hold: contradiction;
 *   <li>an equality fixes the value: every other constraint is checked against it and dropped, or
 *       the conjunction is a contradiction ({@code x = 1 && x = 2});
 *   <li>of several lower (upper) bounds only the tightest is kept; crossing bounds are a
 *       contradiction; {@code x >= v && x <= v} becomes {@code x = v};
 *   <li>of several prefixes (suffixes) the longest is kept, or they contradict; a {@code contains}
 *       implied by another string constraint is dropped;
 *   <li>{@code x != v} is dropped when another constraint already excludes {@code v}.
 * </ul>
 */
public final class Conjunction implements Comparable<Conjunction> {
  /**
   * The conjunction of no constraints: it holds on every message, and is written {@code true}. A
   * predicate that has it has nothing else ({@link Predicate#ALL}).
   */
  public static final Conjunction TRUE = new Conjunction(new Constraint[0]);

  private final Constraint[] constraints;

  private Conjunction(Constraint[] constraints) {
    this.constraints = constraints;
  }

  /**
   * The canonical conjunction of the given constraints, or empty if they contradict each other;
   * {@link #TRUE} for no constraints. Fails on more than {@link Limits#MAX_CONSTRAINTS}.
   */
  public static Optional<Conjunction> of(Collection<Constraint> constraints) {
    if (constraints.isEmpty()) {
      return Optional.of(TRUE);
    }
    Constraint[] sorted = constraints.toArray(new Constraint[0]);
    Arrays.sort(sorted);
    List<Constraint> out = new ArrayList<>(sorted.length);
    int i = 0;
    while (i < sorted.length) {
      int j = i;
      while (j < sorted.length && sorted[j].name().equals(sorted[i].name())) {
        j++;
      }
      if (!simplifyName(Arrays.asList(sorted).subList(i, j), out)) {
        return Optional.empty();
      }
      i = j;
    }
    if (out.size() > Limits.MAX_CONSTRAINTS) {
      throw new IllegalArgumentException(
          "conjunction has " + out.size() + " constraints, more than " + Limits.MAX_CONSTRAINTS);
    }
    out.sort(null);
    return Optional.of(new Conjunction(out.toArray(new Constraint[0])));
  }

  /** Convenience for {@link #of(Collection)}. */
  public static Optional<Conjunction> of(Constraint... constraints) {
    return of(Arrays.asList(constraints));
  }

  /**
   * Simplifies the constraints on one attribute name (sorted, all with the same name) and appends
   * the result to {@code out}. Returns false on a contradiction.
   */
  private static boolean simplifyName(List<Constraint> group, List<Constraint> out) {
    List<Constraint> typed = new ArrayList<>(group.size());
    for (Constraint c : group) {
      if (c.op() != Op.EXISTS && (typed.isEmpty() || !typed.get(typed.size() - 1).equals(c))) {
        typed.add(c);
      }
    }
    if (typed.isEmpty()) {
      out.add(group.get(0)); // only exists(name), deduplicated
      return true;
    }
    ValueType family = typed.get(0).value().type();
    for (Constraint c : typed) {
      if (!c.value().type().comparableWith(family)) {
        return false; // one attribute cannot have two types
      }
    }

    // An equality fixes the value: the conjunction holds iff that value passes the rest.
    for (Constraint eq : typed) {
      if (eq.op() == Op.EQ) {
        for (Constraint c : typed) {
          if (!c.test(eq.value())) {
            return false;
          }
        }
        out.add(eq);
        return true;
      }
    }

    // Tightest bounds.
    Constraint lower = null;
    Constraint upper = null;
    for (Constraint c : typed) {
      switch (c.op()) {
        case GT, GE -> lower = tighterLower(lower, c);
        case LT, LE -> upper = tighterUpper(upper, c);
        default -> {}
      }
    }
    if (lower != null && upper != null) {
      int cmp = lower.value().compareTo(upper.value());
      if (cmp > 0) {
        return false;
      }
      if (cmp == 0) {
        if (lower.op() == Op.GT || upper.op() == Op.LT) {
          return false;
        }
        // x >= v && x <= v  is  x = v; check the rest against v.
        List<Constraint> withEq = new ArrayList<>(typed);
        withEq.add(Constraint.of(lower.name(), Op.EQ, lower.value()));
        withEq.sort(null);
        return simplifyName(withEq, out);
      }
    }

    // Longest prefix and suffix.
    Constraint prefix = null;
    Constraint suffix = null;
    for (Constraint c : typed) {
      if (c.op() == Op.PREFIX) {
        if (prefix == null || c.value().asString().startsWith(prefix.value().asString())) {
          prefix = c;
        } else if (!prefix.value().asString().startsWith(c.value().asString())) {
          return false;
        }
      } else if (c.op() == Op.SUFFIX) {
        if (suffix == null || c.value().asString().endsWith(suffix.value().asString())) {
          suffix = c;
        } else if (!suffix.value().asString().endsWith(c.value().asString())) {
          return false;
        }
      }
    }

    List<Constraint> kept = new ArrayList<>(typed.size());
    if (lower != null) {
      kept.add(lower);
    }
    if (upper != null) {
      kept.add(upper);
    }
    if (prefix != null) {
      kept.add(prefix);
    }
    if (suffix != null) {
      kept.add(suffix);
    }
    // contains: drop those implied by the prefix, the suffix or a longer contains.
    for (Constraint c : typed) {
      if (c.op() != Op.CONTAINS) {
        continue;
      }
      String s = c.value().asString();
      boolean implied =
          (prefix != null && prefix.value().asString().contains(s))
              || (suffix != null && suffix.value().asString().contains(s));
      for (Constraint d : typed) {
        if (implied) {
          break;
        }
        if (d != c && d.op() == Op.CONTAINS) {
          String t = d.value().asString();
          // d implies c when t strictly contains s (equal ones were deduplicated above).
          implied = t.length() > s.length() && t.contains(s);
        }
      }
      if (!implied) {
        kept.add(c);
      }
    }
    // x != v: drop when v already fails another kept constraint.
    for (Constraint c : typed) {
      if (c.op() != Op.NE) {
        continue;
      }
      boolean excluded = false;
      for (Constraint k : kept) {
        if (!k.test(c.value())) {
          excluded = true;
          break;
        }
      }
      if (!excluded) {
        kept.add(c);
      }
    }
    out.addAll(kept);
    return true;
  }

  private static Constraint tighterLower(Constraint a, Constraint b) {
    if (a == null) {
      return b;
    }
    int c = a.value().compareTo(b.value());
    if (c != 0) {
      return c > 0 ? a : b;
    }
    return a.op() == Op.GT ? a : b;
  }

  private static Constraint tighterUpper(Constraint a, Constraint b) {
    if (a == null) {
      return b;
    }
    int c = a.value().compareTo(b.value());
    if (c != 0) {
      return c < 0 ? a : b;
    }
    return a.op() == Op.LT ? a : b;
  }

  /** Number of constraints. */
  public int size() {
    return constraints.length;
  }

  /** The i-th constraint in canonical order. */
  public Constraint get(int i) {
    return constraints[i];
  }

  /** The constraints in canonical order (an unmodifiable view). */
  public List<Constraint> constraints() {
    return List.of(constraints);
  }

  /** True when every constraint holds on the message. */
  public boolean matches(Message m) {
    for (Constraint c : constraints) {
      if (!c.test(m)) {
        return false;
      }
    }
    return true;
  }

  /** True when every constraint of this conjunction is also in {@code other}. */
  boolean isSubsetOf(Conjunction other) {
    if (constraints.length > other.constraints.length) {
      return false;
    }
    int j = 0;
    for (Constraint c : constraints) {
      while (j < other.constraints.length && other.constraints[j].compareTo(c) < 0) {
        j++;
      }
      if (j == other.constraints.length || !other.constraints[j].equals(c)) {
        return false;
      }
      j++;
    }
    return true;
  }

  @Override
  public int compareTo(Conjunction o) {
    int n = Math.min(constraints.length, o.constraints.length);
    for (int i = 0; i < n; i++) {
      int c = constraints[i].compareTo(o.constraints[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(constraints.length, o.constraints.length);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Conjunction c && Arrays.equals(constraints, c.constraints);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(constraints);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    appendTo(sb);
    return sb.toString();
  }

  void appendTo(StringBuilder sb) {
    if (constraints.length == 0) {
      sb.append("true");
    }
    for (int i = 0; i < constraints.length; i++) {
      if (i > 0) {
        sb.append(" && ");
      }
      constraints[i].appendTo(sb);
    }
  }
}
