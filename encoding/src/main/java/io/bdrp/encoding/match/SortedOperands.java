package io.bdrp.encoding.match;

import io.bdrp.encoding.Value;
import java.util.Map;
import java.util.TreeMap;

/**
 * The operands of the constraints of one attribute name, one operator and one type family (numbers
 * or strings), sorted so that the operands a message value satisfies form one or two contiguous
 * ranges found by binary search.
 *
 * <p>Changes go to a tree map (O(log n) each); the sorted arrays read by the match loop are rebuilt
 * from it by {@link #flatten()} at the first match after a change, so a batch of changes costs one
 * rebuild. Operands are canonical ({@link Value#canonical()}), so no two are numerically equal and
 * {@link Value#compareTo} orders them strictly: numbers numerically and exactly, strings by code
 * point. Owned by the thread that owns the {@link ExactMatcher}.
 */
final class SortedOperands {
  private static final Value[] NO_VALUES = new Value[0];
  private static final int[] NO_IDS = new int[0];

  private final TreeMap<Value, Integer> pending = new TreeMap<>();

  /** Operands in ascending order; valid in {@code [0, size)} after {@link #flatten()}. */
  Value[] keys = NO_VALUES;

  /** {@code ids[i]} is the constraint id whose operand is {@code keys[i]}. */
  int[] ids = NO_IDS;

  int size;

  /** True when the arrays lag behind the tree map. */
  boolean dirty;

  void add(Value operand, int id) {
    pending.put(operand, id);
    dirty = true;
  }

  void remove(Value operand) {
    pending.remove(operand);
    dirty = true;
  }

  boolean isEmpty() {
    return pending.isEmpty();
  }

  /** Rebuilds the sorted arrays from the tree map. */
  void flatten() {
    int n = pending.size();
    if (keys.length < n || keys.length > 4 * n + 16) {
      keys = new Value[n];
      ids = new int[n];
    }
    int i = 0;
    for (Map.Entry<Value, Integer> e : pending.entrySet()) {
      keys[i] = e.getKey();
      ids[i] = e.getValue();
      i++;
    }
    for (int j = n; j < size && j < keys.length; j++) {
      keys[j] = null; // let removed operands be collected
    }
    size = n;
    dirty = false;
  }

  /** Index of the first operand {@code >= x}, or {@link #size}. */
  int lowerBound(Value x) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (keys[mid].compareTo(x) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Index of the first operand {@code > x}, or {@link #size}. */
  int upperBound(Value x) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (keys[mid].compareTo(x) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
