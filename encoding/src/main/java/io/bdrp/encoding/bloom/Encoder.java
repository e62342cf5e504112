package io.bdrp.encoding.bloom;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes messages and predicates as Bloom filters (paper §3).
 *
 * <p>A message is encoded as one filter holding, for every attribute, its existence and its
 * equality category. A conjunction is encoded as one filter holding one category per constraint:
 * the equality category for {@code =}, the typed existence category otherwise. So when a message
 * satisfies a conjunction, the message's categories include the conjunction's, and its filter
 * covers the conjunction's filter: no false negatives.
 *
 * <p>{@code exists(name)} says nothing about the type, while existence categories are typed. A
 * conjunction with an {@code exists} constraint therefore becomes one filter per type (string,
 * number, boolean) of that name; with several, the product of those, up to {@value
 * #MAX_EXPANDED_EXISTS} of them; further {@code exists} constraints are left out of the filter,
 * which only widens it (a smaller set of categories is covered by more messages) and so keeps the
 * no-false-negative guarantee.
 *
 * <p>Immutable and thread-safe; {@link #encodeInto} allocates nothing.
 */
public final class Encoder {
  /** Most {@code exists} constraints of a conjunction that are expanded over the types. */
  public static final int MAX_EXPANDED_EXISTS = 3;

  private static final char[] TYPE_TAGS = {
    ValueType.STRING.categoryTag(), ValueType.INTEGER.categoryTag(), ValueType.BOOLEAN.categoryTag()
  };

  private final BloomParameters params;

  public Encoder(BloomParameters params) {
    this.params = params;
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
  public void encodeInto(Message m, long[] dst) {
    java.util.Arrays.fill(dst, 0L);
    for (int i = 0; i < m.size(); i++) {
      String name = m.name(i);
      Value v = m.value(i);
      Categories.add(dst, Categories.existence(v.type().categoryTag(), name), params);
      Categories.add(dst, Categories.equality(name, v), params);
    }
  }

  /** The minimal filter set of a predicate. */
  public EncodedPredicate encode(Predicate p) {
    List<long[]> filters = new ArrayList<>(p.size());
    for (Conjunction c : p.conjunctions()) {
      addConjunction(c, filters);
    }
    return EncodedPredicate.ofFilters(params, filters);
  }

  /** The filters of one conjunction (one, or several when it has {@code exists} constraints). */
  public List<long[]> encode(Conjunction c) {
    List<long[]> out = new ArrayList<>(1);
    addConjunction(c, out);
    return out;
  }

  private void addConjunction(Conjunction c, List<long[]> out) {
    long[] base = params.newFilter();
    List<String> exists = new ArrayList<>(0);
    for (int i = 0; i < c.size(); i++) {
      Constraint k = c.get(i);
      if (k.op() == Op.EXISTS) {
        if (exists.size() < MAX_EXPANDED_EXISTS) {
          exists.add(k.name());
        }
      } else if (k.op() == Op.EQ) {
        Categories.add(base, Categories.equality(k.name(), k.value()), params);
      } else {
        Categories.add(
            base, Categories.existence(k.value().type().categoryTag(), k.name()), params);
      }
    }
    expand(base, exists, 0, out);
  }

  private void expand(long[] filter, List<String> exists, int i, List<long[]> out) {
    if (i == exists.size()) {
      out.add(filter);
      return;
    }
    for (char tag : TYPE_TAGS) {
      long[] f = filter.clone();
      Categories.add(f, Categories.existence(tag, exists.get(i)), params);
      expand(f, exists, i + 1, out);
    }
  }
}
