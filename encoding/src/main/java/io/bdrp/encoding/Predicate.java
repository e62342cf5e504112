package io.bdrp.encoding;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A predicate: a disjunction of conjunctions of constraints, always in canonical form.
 *
 * <p>Canonical form: every conjunction is canonical ({@link Conjunction}), contradictory
 * conjunctions are removed, duplicates are removed, a conjunction that contains all the constraints
 * of another one is removed (absorption: {@code a || a && b} is {@code a}), and the rest are
 * sorted. Two predicates with the same canonical form are {@link #equals equal}.
 *
 * <p>The empty disjunction, {@link #NONE}, matches no message and is written {@code false}; the
 * disjunction of the empty conjunction, {@link #ALL}, matches every message and is written {@code
 * true}. {@link #toString()} prints the predicate language ({@code docs/predicate-language.md}).
 */
public final class Predicate {
  /** The predicate that matches nothing, written {@code false}. */
  public static final Predicate NONE = new Predicate(new Conjunction[0]);

  /**
   * The predicate that matches every message, written {@code true}: its one conjunction has no
   * constraints ({@link Conjunction#TRUE}), and absorbs every other.
   */
  public static final Predicate ALL = new Predicate(new Conjunction[] {Conjunction.TRUE});

  private final Conjunction[] conjunctions;

  private Predicate(Conjunction[] conjunctions) {
    this.conjunctions = conjunctions;
  }

  /**
   * The canonical disjunction of the given conjunctions (each a list of constraints). Fails if more
   * than {@link Limits#MAX_CONJUNCTIONS} remain.
   */
  public static Predicate of(Collection<? extends Collection<Constraint>> disjunction) {
    List<Conjunction> conjunctions = new ArrayList<>(disjunction.size());
    for (Collection<Constraint> c : disjunction) {
      Conjunction.of(c).ifPresent(conjunctions::add);
    }
    return ofConjunctions(conjunctions);
  }

  /** The canonical disjunction of canonical conjunctions. */
  public static Predicate ofConjunctions(Collection<Conjunction> conjunctions) {
    TreeSet<Conjunction> unique = new TreeSet<>(conjunctions);
    if (unique.size() > 4 * Limits.MAX_CONJUNCTIONS) {
      throw tooMany(unique.size());
    }
    Conjunction[] sorted = unique.toArray(new Conjunction[0]);
    // Absorption: drop a conjunction that is implied by a smaller one. Sort by size so that
    // a candidate is only compared with those that could absorb it.
    Conjunction[] bySize = sorted.clone();
    Arrays.sort(bySize, (a, b) -> Integer.compare(a.size(), b.size()));
    List<Conjunction> kept = new ArrayList<>(sorted.length);
    for (Conjunction c : bySize) {
      boolean absorbed = false;
      for (Conjunction k : kept) {
        if (k.size() < c.size() && k.isSubsetOf(c)) {
          absorbed = true;
          break;
        }
      }
      if (!absorbed) {
        kept.add(c);
      }
    }
    if (kept.size() > Limits.MAX_CONJUNCTIONS) {
      throw tooMany(kept.size());
    }
    kept.sort(null);
    return kept.isEmpty() ? NONE : new Predicate(kept.toArray(new Conjunction[0]));
  }

  private static IllegalArgumentException tooMany(int n) {
    return new IllegalArgumentException(
        "predicate has " + n + " conjunctions, more than the limit of " + Limits.MAX_CONJUNCTIONS);
  }

  /**
   * Parses the predicate language ({@link PredicateParser}).
   *
   * @throws PredicateSyntaxException naming the column and token of the first problem
   */
  public static Predicate parse(String text) {
    return PredicateParser.parse(text);
  }

  /** A predicate of a single conjunction; {@link #NONE} if the constraints contradict. */
  public static Predicate ofConstraints(Constraint... constraints) {
    return Conjunction.of(constraints).map(c -> ofConjunctions(List.of(c))).orElse(NONE);
  }

  /** The disjunction of this predicate and another one, in canonical form. */
  public Predicate or(Predicate other) {
    List<Conjunction> all = new ArrayList<>(conjunctions.length + other.conjunctions.length);
    all.addAll(Arrays.asList(conjunctions));
    all.addAll(Arrays.asList(other.conjunctions));
    return ofConjunctions(all);
  }

  /** The disjunction of several predicates. */
  public static Predicate or(Collection<Predicate> predicates) {
    List<Conjunction> all = new ArrayList<>();
    for (Predicate p : predicates) {
      all.addAll(Arrays.asList(p.conjunctions));
    }
    return ofConjunctions(all);
  }

  /** Number of conjunctions. */
  public int size() {
    return conjunctions.length;
  }

  /** True for {@link #NONE}. */
  public boolean isEmpty() {
    return conjunctions.length == 0;
  }

  /** True for {@link #ALL}, the predicate that matches every message. */
  public boolean isAll() {
    return conjunctions.length == 1 && conjunctions[0].size() == 0;
  }

  /** The i-th conjunction in canonical order. */
  public Conjunction get(int i) {
    return conjunctions[i];
  }

  /** The conjunctions in canonical order (an unmodifiable view). */
  public List<Conjunction> conjunctions() {
    return List.of(conjunctions);
  }

  /**
   * Reference evaluation: true when some conjunction holds on the message. This is the definition
   * that the indexed matchers are tested against.
   */
  public boolean matches(Message m) {
    for (Conjunction c : conjunctions) {
      if (c.matches(m)) {
        return true;
      }
    }
    return false;
  }

  /** The first conjunction that holds on the message, if any. */
  public Optional<Conjunction> firstMatch(Message m) {
    for (Conjunction c : conjunctions) {
      if (c.matches(m)) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Predicate p && Arrays.equals(conjunctions, p.conjunctions);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(conjunctions);
  }

  /** The predicate in the predicate language; parses back to an equal predicate. */
  @Override
  public String toString() {
    if (conjunctions.length == 0) {
      return "false";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < conjunctions.length; i++) {
      if (i > 0) {
        sb.append(" || ");
      }
      conjunctions[i].appendTo(sb);
    }
    return sb.toString();
  }
}
