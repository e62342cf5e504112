package io.bdrp.encoding.bloom;

import java.util.HashMap;
import java.util.Map;

/**
 * The PREDICATES table's matcher: routers' encoded predicates, kept up to date by the control path,
 * and an immutable {@link EncodedIndex} snapshot of them for the forwarding path.
 *
 * <p>Owned by the control thread: {@link #put} and {@link #remove} must be called from one thread.
 * {@link #snapshot()} rebuilds the index only when something changed since the last call, and the
 * returned index is immutable, so it can be handed to forwarding threads.
 */
public final class EncodedMatcher {
  private final BloomParameters params;
  private final Map<Integer, EncodedPredicate> routers = new HashMap<>();
  private EncodedIndex snapshot;
  private long version;

  public EncodedMatcher(BloomParameters params) {
    this.params = params;
  }

  public BloomParameters parameters() {
    return params;
  }

  /**
   * Sets the encoded predicate of a router. Returns true when it differs from the one held, i.e.
   * when the table changed.
   */
  public boolean put(int router, EncodedPredicate p) {
    if (!p.parameters().equals(params)) {
      throw new IllegalArgumentException(
          "router "
              + router
              + " sent filters of "
              + p.parameters()
              + ", this network uses "
              + params);
    }
    EncodedPredicate old = routers.put(router, p);
    if (p.equals(old)) {
      return false;
    }
    changed();
    return true;
  }

  /** Forgets a router's predicate. Returns true when it had one. */
  public boolean remove(int router) {
    if (routers.remove(router) == null) {
      return false;
    }
    changed();
    return true;
  }

  /** The predicate held for a router, or {@code null}. */
  public EncodedPredicate get(int router) {
    return routers.get(router);
  }

  /** Number of routers with a predicate. */
  public int size() {
    return routers.size();
  }

  /** Incremented on every change. */
  public long version() {
    return version;
  }

  private void changed() {
    version++;
    snapshot = null;
  }

  /** Whether the index of the current predicates is built (the next {@link #snapshot} is free). */
  public boolean hasSnapshot() {
    return snapshot != null;
  }

  /** An index of the current predicates, rebuilt only after a change. */
  public EncodedIndex snapshot() {
    EncodedIndex s = snapshot;
    if (s == null) {
      s = EncodedIndex.build(params, routers);
      snapshot = s;
    }
    return s;
  }
}
