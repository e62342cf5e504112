package io.bdrp.encoding.match;

import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.ValueType;
import java.util.Map;
import java.util.TreeMap;

/**
 * The operands of the constraints of one attribute name, one operator and one type family (numbers
 * or strings), sorted so that the operands a message value satisfies form one or two contiguous
 * ranges found by binary search.
 *
 * <p>Changes go to a tree map (O(log n) each); the sorted arrays are rebuilt from it by {@link
 * #flatten()} at the first match after a change, so a batch of changes costs one rebuild. The match
 * loop searches them only for a name without an {@link IntervalTable} (one too large); otherwise
 * they are what that table is built from. Operands are canonical ({@link Value#canonical()}), so no
 * two are numerically equal and {@link Value#compareTo} orders them strictly: numbers numerically
 * and exactly, strings by code point. Owned by the thread that owns the {@link ExactMatcher}.
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

  /**
   * Search keys beside {@link #keys}, so that a binary search reads primitives instead of following
   * a pointer per step: for numbers each operand as a double (exact ties are settled by {@link
   * Value#compareTo}), for strings the String itself.
   */
  private double[] approx = new double[0];

  private String[] strings = new String[0];

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
      approx = new double[n];
      strings = new String[n];
    }
    int i = 0;
    for (Map.Entry<Value, Integer> e : pending.entrySet()) {
      Value k = e.getKey();
      keys[i] = k;
      ids[i] = e.getValue();
      if (k.type() == ValueType.STRING) {
        strings[i] = k.asString();
      } else if (k.type().isNumeric()) {
        approx[i] = k.toDouble();
      }
      i++;
    }
    for (int j = n; j < size && j < keys.length; j++) {
      keys[j] = null; // let removed operands be collected
      strings[j] = null;
    }
    size = n;
    dirty = false;
  }

  /** 2^53: below it in magnitude every long is exactly a double. */
  private static final double EXACT = 9.007199254740992E15;

  /**
   * Order of operand i (approximated by k) and number x (approximated by xd). Rounding to double
   * keeps order, so unequal doubles decide. Equal doubles below 2^53 in magnitude are equal
   * numbers; above, they may hide a difference in the low bits of a long, which the exact
   * comparison settles.
   */
  private int compareApprox(double k, int i, double xd, Value x) {
    if (k < xd) {
      return -1;
    }
    if (k > xd) {
      return 1;
    }
    return Math.abs(xd) < EXACT ? 0 : keys[i].compareTo(x);
  }

  /** True when operand i equals x (x of this instance's type family). */
  boolean equalAt(int i, Value x) {
    ValueType t = x.type();
    if (t == ValueType.STRING) {
      return strings[i].equals(x.asString());
    }
    if (t.isNumeric()) {
      return compareApprox(approx[i], i, x.toDouble(), x) == 0;
    }
    return keys[i].compareTo(x) == 0;
  }

  /** Index of the first operand {@code >= x}, or {@link #size}. */
  int lowerBound(Value x) {
    return bound(x, false);
  }

  /** Index of the first operand {@code > x}, or {@link #size}. */
  int upperBound(Value x) {
    return bound(x, true);
  }

  /**
   * Binary search for the first operand greater than x ({@code strict}) or not less than x. All
   * operands of one instance have the type family of x (callers keep one instance per family).
   */
  private int bound(Value x, boolean strict) {
    int lo = 0;
    int hi = size;
    ValueType t = x.type();
    if (t == ValueType.STRING) {
      String xs = x.asString();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        int c = Strings.compareCodePoints(strings[mid], xs);
        if (c < 0 || (strict && c == 0)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
    } else if (t.isNumeric()) {
      double xd = x.toDouble();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        double k = approx[mid];
        int c = compareApprox(k, mid, xd, x);
        if (c < 0 || (strict && c == 0)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
    } else {
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        int c = keys[mid].compareTo(x);
        if (c < 0 || (strict && c == 0)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
    }
    return lo;
  }
}
