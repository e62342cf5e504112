package io.bdrp.routing;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CoverIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A router's aggregate: the encoded predicate of the disjunction of all its hosts' predicates,
 * which is what the router advertises, kept incrementally from each host's encoding.
 *
 * <p>Every distinct filter of every host's encoding is counted (hosts with equal conjunctions share
 * a filter); the aggregate is the set of minimal distinct filters, those that cover no other.
 * Filters are held as their set-bit positions, and two {@link CoverIndex}es (one over the distinct
 * filters, one over the minimal ones) list, for every bit, the filters that set it. Adding a filter
 * asks the minimal index whether it covers a minimal filter (a counting pass over the lists of its
 * bits) and, if not, which minimal filters cover it (the list of its rarest bit); removing the last
 * copy of a minimal filter finds the distinct filters that cover it the same way and re-examines
 * only those. A host change therefore costs about its own filters' bits times the lists of those
 * bits, not the size of the set: for 1,024 conjunctions of three {@code exists} (27,648 filters of
 * 3 bits) a few tens of list steps a filter.
 *
 * <p>The worst case of a minimal set is quadratic in general (filters that share many bits make the
 * lists long), so the router must bound the filters one host may add (its per-host filter cap);
 * {@link #coverChecks()} counts the work done for a metric.
 *
 * <p>Owned by one thread. {@link LocalPredicates} keeps one beside its exact matcher; the router
 * keeps its own on its control thread, so that a host's change is not worked into the aggregate on
 * the event loop.
 */
public final class LocalAggregate {
  /** A distinct filter, as its set-bit positions, and what is known of it. */
  private static final class Filter implements Comparable<Filter> {
    final char[] bits;
    int copies;
    int distinctId = -1;
    int minimalId = -1; // its id in the minimal index, -1 when it is not minimal

    Filter(char[] bits) {
      this.bits = bits;
    }

    @Override
    public int compareTo(Filter o) {
      return EncodedPredicate.compare(bits, 0, bits.length, o.bits, 0, o.bits.length);
    }

    @Override
    public String toString() {
      return Arrays.toString(bits);
    }
  }

  /** A filter's positions as a map key. */
  private record Key(char[] bits) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.equals(bits, k.bits);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bits);
    }

    @Override
    public String toString() {
      return Arrays.toString(bits);
    }
  }

  private final BloomParameters params;
  private final Map<Integer, EncodedPredicate> encoded = new HashMap<>();
  private final Map<Key, Filter> filters = new HashMap<>();
  private final CoverIndex<Filter> distinct;
  private final CoverIndex<Filter> minimalIndex;
  private final TreeSet<Filter> minimal = new TreeSet<>(); // canonical order, for the aggregate
  private int minimalPositions; // set bits over the minimal filters
  private EncodedPredicate aggregate;

  public LocalAggregate(BloomParameters params) {
    this.params = params;
    this.aggregate = EncodedPredicate.empty(params);
    this.distinct = new CoverIndex<>(params.bits());
    this.minimalIndex = new CoverIndex<>(params.bits());
  }

  /**
   * Sets the encoding of {@code host}'s predicate (null removes the host). Returns true when the
   * aggregate changed.
   */
  public boolean set(int host, EncodedPredicate next) {
    if (next == null) {
      return remove(host);
    }
    if (!next.parameters().equals(params)) {
      throw new IllegalArgumentException(
          "an encoding with " + next.parameters() + " for a table of " + params);
    }
    EncodedPredicate prev = encoded.put(host, next);
    if (prev != null && prev.equals(next)) {
      return false;
    }
    boolean changed = false;
    for (int i = 0; i < next.size(); i++) {
      changed |= add(next.positions(i));
    }
    if (prev != null) {
      for (int i = 0; i < prev.size(); i++) {
        changed |= drop(prev.positions(i));
      }
    }
    return refresh(changed);
  }

  /** Removes {@code host}. Returns true when the aggregate changed. */
  public boolean remove(int host) {
    EncodedPredicate prev = encoded.remove(host);
    if (prev == null) {
      return false;
    }
    boolean changed = false;
    for (int i = 0; i < prev.size(); i++) {
      changed |= drop(prev.positions(i));
    }
    return refresh(changed);
  }

  /** The encoding held for {@code host}, or null. */
  public EncodedPredicate encoding(int host) {
    return encoded.get(host);
  }

  /** The number of hosts with a predicate. */
  public int hostCount() {
    return encoded.size();
  }

  /** The aggregate: minimal encoded predicate of the disjunction of every host's predicate. */
  public EncodedPredicate aggregate() {
    return aggregate;
  }

  /**
   * Steps taken so far to keep the minimal set (list entries visited and candidates checked by the
   * two indexes): the work host changes have cost, for tests and a metric.
   */
  public long coverChecks() {
    return distinct.checks() + minimalIndex.checks();
  }

  /** Number of distinct filters over all hosts. */
  public int distinctFilterCount() {
    return filters.size();
  }

  private boolean refresh(boolean changed) {
    if (changed) {
      EncodedPredicate.Builder b =
          new EncodedPredicate.Builder(params, minimal.size(), minimalPositions);
      for (Filter f : minimal) {
        if (!b.append(f.bits, 0, f.bits.length)) {
          throw new IllegalStateException("minimal filters out of order at " + f);
        }
      }
      aggregate = b.build();
    }
    return changed;
  }

  private void makeMinimal(Filter f) {
    f.minimalId = minimalIndex.add(f.bits, f);
    minimal.add(f);
    minimalPositions += f.bits.length;
  }

  private void unmakeMinimal(Filter f) {
    minimalIndex.remove(f.minimalId);
    f.minimalId = -1;
    minimal.remove(f);
    minimalPositions -= f.bits.length;
  }

  /** Counts one more copy of {@code bits}; returns true when the minimal set changed. */
  private boolean add(char[] bits) {
    Filter k = filters.computeIfAbsent(new Key(bits), x -> new Filter(x.bits()));
    if (++k.copies > 1) {
      return false;
    }
    k.distinctId = distinct.add(k.bits, k);
    if (minimalIndex.coversAny(k.bits, 0, k.bits.length)) {
      return false; // k covers a minimal filter: redundant
    }
    List<Filter> covering = new ArrayList<>();
    minimalIndex.supersetsOf(k.bits, 0, k.bits.length, covering);
    for (Filter m : covering) {
      unmakeMinimal(m);
    }
    makeMinimal(k);
    return true;
  }

  /** Counts one copy of {@code bits} fewer; returns true when the minimal set changed. */
  private boolean drop(char[] bits) {
    Key key = new Key(bits);
    Filter k = filters.get(key);
    if (--k.copies > 0) {
      return false;
    }
    filters.remove(key);
    distinct.remove(k.distinctId);
    if (k.minimalId < 0) {
      return false;
    }
    unmakeMinimal(k);
    // Filters that covered k may now be minimal; look at them fewest bits first, so that one
    // of them covering another is decided by the smaller one, already placed.
    List<Filter> freed = new ArrayList<>();
    distinct.supersetsOf(k.bits, 0, k.bits.length, freed);
    freed.sort(
        (a, b) -> {
          int c = Integer.compare(a.bits.length, b.bits.length);
          return c != 0 ? c : a.compareTo(b);
        });
    for (Filter c : freed) {
      if (!minimalIndex.coversAny(c.bits, 0, c.bits.length)) {
        makeMinimal(c);
      }
    }
    return true;
  }
}
