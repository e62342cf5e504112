package io.bdrp.routing;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.match.ExactMatcher;
import java.util.function.IntConsumer;

/**
 * LOCAL-PREDICATES: the exact predicate of each host attached to this router, the exact matcher
 * over them, and the router's aggregate ({@link LocalAggregate}) — the encoded predicate of the
 * disjunction of all its hosts' predicates, which is what the router advertises.
 *
 * <p>The matcher and the aggregate may be kept apart: {@link #setMatch} changes only the matcher,
 * for a router that keeps the aggregate on another thread (its own {@link LocalAggregate}) and
 * advertises what that gives.
 *
 * <p>Owned by one thread (the router's event loop), which makes every call, including {@link
 * #match}.
 */
public final class LocalPredicates {
  private final BloomParameters params;
  private final Encoder encoder;
  private final ExactMatcher matcher = new ExactMatcher();
  private final LocalAggregate aggregate;

  public LocalPredicates(BloomParameters params) {
    this.params = params;
    this.encoder = new Encoder(params);
    this.aggregate = new LocalAggregate(params);
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
    return set(host, p, p.equals(Predicate.NONE) ? null : encoder.encode(p));
  }

  /**
   * Sets the predicate of {@code host} as {@link #set(int, Predicate)} does, with its encoding made
   * beforehand (by an {@link Encoder} of the same parameters, on any thread), so that the thread
   * that owns this table does not encode.
   */
  public boolean set(int host, Predicate p, EncodedPredicate next) {
    if (p.equals(Predicate.NONE)) {
      return remove(host);
    }
    matcher.put(host, p);
    return aggregate.set(host, next);
  }

  /**
   * Sets the predicate {@code host} is matched with ({@link Predicate#NONE} removes it), leaving
   * the aggregate alone: for a router that keeps its aggregate elsewhere.
   */
  public void setMatch(int host, Predicate p) {
    if (p.equals(Predicate.NONE)) {
      matcher.remove(host);
    } else {
      matcher.put(host, p);
    }
  }

  /** Removes {@code host}. Returns true when the aggregate changed. */
  public boolean remove(int host) {
    matcher.remove(host);
    return aggregate.remove(host);
  }

  /** The predicate of {@code host}, or {@link Predicate#NONE}. */
  public Predicate predicate(int host) {
    return matcher.predicate(host);
  }

  /** The number of hosts with a predicate. */
  public int hostCount() {
    return matcher.hostCount();
  }

  /** The aggregate: minimal encoded predicate of the disjunction of every host's predicate. */
  public EncodedPredicate aggregate() {
    return aggregate.aggregate();
  }

  /** Calls {@code sink} with every host whose predicate {@code m} satisfies, each once. */
  public void match(io.bdrp.encoding.Attributes m, IntConsumer sink) {
    matcher.match(m, sink);
  }

  /**
   * Steps taken so far to keep the minimal set: the work host changes have cost, for tests and a
   * metric ({@link LocalAggregate#coverChecks()}).
   */
  public long coverChecks() {
    return aggregate.coverChecks();
  }

  /** Number of distinct filters over all hosts. */
  public int distinctFilterCount() {
    return aggregate.distinctFilterCount();
  }
}
