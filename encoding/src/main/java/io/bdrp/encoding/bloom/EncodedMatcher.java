package io.bdrp.encoding.bloom;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The PREDICATES table's matcher: routers' encoded predicates, kept up to date by the control path,
 * and an immutable {@link EncodedIndex} snapshot of them for the forwarding path.
 *
 * <p>Router numbers are small non-negative integers, and the predicates are kept in an array
 * indexed by them: a map would cost a node and a boxed key per router, in every router, which at
 * 10,000 routers is several times the array.
 *
 * <p>Owned by the control thread: {@link #put} and {@link #remove} must be called from one thread.
 * {@link #snapshot()} rebuilds the index only when something changed since the last call, and the
 * returned index is immutable, so it can be handed to forwarding threads.
 */
public final class EncodedMatcher {
  private final BloomParameters params;
  private EncodedPredicate[] routers; // by router number; null where none is held
  private int size;
  private EncodedIndex snapshot;
  private EncodedIndex latest; // the last built, maybe of an earlier version
  private long version;

  public EncodedMatcher(BloomParameters params) {
    this(params, 16);
  }

  /**
   * A matcher sized for router numbers below {@code maxRouters}; larger numbers still fit, the
   * array grows for them.
   */
  public EncodedMatcher(BloomParameters params, int maxRouters) {
    this.params = params;
    this.routers = new EncodedPredicate[Math.max(1, maxRouters)];
  }

  public BloomParameters parameters() {
    return params;
  }

  /**
   * Sets the encoded predicate of a router. Returns true when it differs from the one held, i.e.
   * when the table changed.
   *
   * @throws IllegalArgumentException if the router number is negative or the predicate's Bloom
   *     parameters are not this matcher's
   */
  public boolean put(int router, EncodedPredicate p) {
    if (router < 0) {
      throw new IllegalArgumentException("router numbers are non-negative, got " + router);
    }
    if (!p.parameters().equals(params)) {
      throw new IllegalArgumentException(
          "router "
              + router
              + " sent filters of "
              + p.parameters()
              + ", this network uses "
              + params);
    }
    if (router >= routers.length) {
      routers = Arrays.copyOf(routers, Math.max(router + 1, 2 * routers.length));
    }
    EncodedPredicate old = routers[router];
    routers[router] = p;
    if (old == null) {
      size++;
    }
    if (p.equals(old)) {
      return false;
    }
    changed();
    return true;
  }

  /** Forgets a router's predicate. Returns true when it had one. */
  public boolean remove(int router) {
    if (router < 0 || router >= routers.length || routers[router] == null) {
      return false;
    }
    routers[router] = null;
    size--;
    changed();
    return true;
  }

  /** The predicate held for a router, or {@code null}. */
  public EncodedPredicate get(int router) {
    return router < 0 || router >= routers.length ? null : routers[router];
  }

  /** Number of routers with a predicate. */
  public int size() {
    return size;
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

  /**
   * An index of the current predicates, rebuilt only after a change. The build is handed the
   * routers in ascending order of number (a map made for it and dropped after).
   */
  public EncodedIndex snapshot() {
    EncodedIndex s = snapshot;
    if (s == null) {
      s = EncodedIndex.build(params, held());
      snapshot = s;
      latest = s;
    }
    return s;
  }

  /**
   * The predicates held now, by router number in ascending order: a copy (of references to
   * immutable predicates) from which another thread may build the index of this {@link #version()}
   * with {@link EncodedIndex#build}, to {@link #install} it.
   */
  public Map<Integer, EncodedPredicate> held() {
    Map<Integer, EncodedPredicate> held = LinkedHashMap.newLinkedHashMap(size);
    for (int r = 0; r < routers.length; r++) {
      if (routers[r] != null) {
        held.put(r, routers[r]);
      }
    }
    return held;
  }

  /**
   * Takes an index built elsewhere from {@link #held()} at {@code version}: it becomes the snapshot
   * if nothing changed since; either way it is the {@link #latest()}. Returns whether it is
   * current.
   */
  public boolean install(long version, EncodedIndex index) {
    latest = index;
    if (version != this.version) {
      return false;
    }
    snapshot = index;
    return true;
  }

  /** The index built last, current or not; null before the first. */
  public EncodedIndex latest() {
    return latest;
  }
}
