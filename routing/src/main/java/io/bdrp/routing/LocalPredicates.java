package io.bdrp.routing;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.bloom.Filters;
import io.bdrp.encoding.match.ExactMatcher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.IntConsumer;

/**
 * LOCAL-PREDICATES: the exact predicate of each host attached to this router, the exact matcher
 * over them, and the router's aggregate — the encoded predicate of the disjunction of all its
 * hosts' predicates, which is what the router advertises.
 *
 * <p>The aggregate is kept incrementally. Every distinct filter of every host's encoding is counted
 * (hosts with equal conjunctions share a filter); the aggregate is the set of minimal distinct
 * filters, those that cover no other. Adding a filter checks it against the minimal set; removing
 * the last copy of a minimal filter re-examines only the filters that cover it. A host change
 * therefore costs about its own filters times the minimal set, not a rebuild over all hosts.
 *
 * <p>Owned by one thread (the router's control thread), which makes every call, including {@link
 * #match}.
 */
public final class LocalPredicates {
  /** A filter as a map key, ordered as encoded predicates order their filters. */
  private record Key(long[] bits) implements Comparable<Key> {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.equals(bits, k.bits);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bits);
    }

    @Override
    public int compareTo(Key o) {
      return Filters.compare(bits, o.bits);
    }

    @Override
    public String toString() {
      return Filters.toHex(bits);
    }
  }

  private final BloomParameters params;
  private final Encoder encoder;
  private final ExactMatcher matcher = new ExactMatcher();
  private final Map<Integer, EncodedPredicate> encoded = new HashMap<>();
  private final Map<Key, Integer> counts = new HashMap<>();
  private final TreeSet<Key> minimal = new TreeSet<>();
  private EncodedPredicate aggregate;

  public LocalPredicates(BloomParameters params) {
    this.params = params;
    this.encoder = new Encoder(params);
    this.aggregate = EncodedPredicate.empty(params);
  }

  /** The Bloom parameters of the aggregate. */
  public BloomParameters parameters() {
    return params;
  }

  /**
   * Sets the predicate of {@code host}; {@link Predicate#NONE} removes the host. Returns true when
   * the aggregate changed (the router must re-advertise).
   */
  public boolean set(int host, Predicate p) {
    if (p.equals(Predicate.NONE)) {
      return remove(host);
    }
    EncodedPredicate next = encoder.encode(p);
    matcher.put(host, p);
    EncodedPredicate prev = encoded.put(host, next);
    if (prev != null && prev.equals(next)) {
      return false;
    }
    boolean changed = false;
    for (long[] f : next.filters()) {
      changed |= add(new Key(f));
    }
    if (prev != null) {
      for (long[] f : prev.filters()) {
        changed |= drop(new Key(f));
      }
    }
    return refresh(changed);
  }

  /** Removes {@code host}. Returns true when the aggregate changed. */
  public boolean remove(int host) {
    matcher.remove(host);
    EncodedPredicate prev = encoded.remove(host);
    if (prev == null) {
      return false;
    }
    boolean changed = false;
    for (long[] f : prev.filters()) {
      changed |= drop(new Key(f));
    }
    return refresh(changed);
  }

  /** The predicate of {@code host}, or {@link Predicate#NONE}. */
  public Predicate predicate(int host) {
    return matcher.predicate(host);
  }

  /** The number of hosts with a predicate. */
  public int hostCount() {
    return encoded.size();
  }

  /** The aggregate: minimal encoded predicate of the disjunction of every host's predicate. */
  public EncodedPredicate aggregate() {
    return aggregate;
  }

  /** Calls {@code sink} with every host whose predicate {@code m} satisfies, each once. */
  public void match(Message m, IntConsumer sink) {
    matcher.match(m, sink);
  }

  private boolean refresh(boolean changed) {
    if (changed) {
      long[] flat = new long[minimal.size() * params.words()];
      int i = 0;
      for (Key k : minimal) {
        System.arraycopy(k.bits, 0, flat, i, k.bits.length);
        i += k.bits.length;
      }
      aggregate = EncodedPredicate.ofSortedFilters(params, flat);
    }
    return changed;
  }

  /** Counts one more copy of {@code k}; returns true when the minimal set changed. */
  private boolean add(Key k) {
    if (counts.merge(k, 1, Integer::sum) > 1) {
      return false;
    }
    for (Key m : minimal) {
      if (Filters.covers(k.bits, m.bits)) {
        return false; // k covers a minimal filter: redundant
      }
    }
    minimal.removeIf(m -> Filters.covers(m.bits, k.bits));
    minimal.add(k);
    return true;
  }

  /** Counts one copy of {@code k} fewer; returns true when the minimal set changed. */
  private boolean drop(Key k) {
    int n = counts.merge(k, -1, Integer::sum);
    if (n > 0) {
      return false;
    }
    counts.remove(k);
    if (!minimal.remove(k)) {
      return false;
    }
    // Filters that covered k may now be minimal; look at them fewest bits first, so that one
    // of them covering another is decided by the smaller one, already placed.
    List<Key> freed = new ArrayList<>();
    for (Key c : counts.keySet()) {
      if (Filters.covers(c.bits, k.bits)) {
        freed.add(c);
      }
    }
    freed.sort(
        (a, b) -> {
          int c = Integer.compare(Filters.bitCount(a.bits), Filters.bitCount(b.bits));
          return c != 0 ? c : a.compareTo(b);
        });
    for (Key c : freed) {
      boolean covered = false;
      for (Iterator<Key> it = minimal.iterator(); it.hasNext() && !covered; ) {
        covered = Filters.covers(c.bits, it.next().bits);
      }
      if (!covered) {
        minimal.add(c);
      }
    }
    return true;
  }
}
