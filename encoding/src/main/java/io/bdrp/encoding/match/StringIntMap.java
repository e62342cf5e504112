package io.bdrp.encoding.match;

import java.util.Arrays;
import java.util.function.ObjIntConsumer;

/**
 * A map from strings to non-negative ints with open addressing and linear probing, for the lookups
 * of the matching loop: the probe compares cached hash codes in an int array before it looks at a
 * key, and the value is a plain int, so a lookup follows no node or boxed value. Deletion shifts
 * the following entries back, so there are no tombstones. Owned by the thread that owns the {@link
 * ExactMatcher}.
 */
final class StringIntMap {
  private String[] keys = new String[8];
  private int[] hashes = new int[8];
  private int[] values = new int[8];
  private int size;

  int size() {
    return size;
  }

  /** The value of {@code key}, or -1. Allocates nothing. */
  int get(String key) {
    int h = key.hashCode();
    int mask = keys.length - 1;
    for (int i = spread(h) & mask; ; i = (i + 1) & mask) {
      String k = keys[i];
      if (k == null) {
        return -1;
      }
      if (hashes[i] == h && k.equals(key)) {
        return values[i];
      }
    }
  }

  /** Sets the value of {@code key} (a non-negative int). */
  void put(String key, int value) {
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    int h = key.hashCode();
    int mask = keys.length - 1;
    int i = spread(h) & mask;
    while (keys[i] != null) {
      if (hashes[i] == h && keys[i].equals(key)) {
        values[i] = value;
        return;
      }
      i = (i + 1) & mask;
    }
    keys[i] = key;
    hashes[i] = h;
    values[i] = value;
    size++;
  }

  /** Calls {@code action} with each key and its value, in no particular order. */
  void forEach(ObjIntConsumer<String> action) {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != null) {
        action.accept(keys[i], values[i]);
      }
    }
  }

  /** Removes {@code key} if present. */
  void remove(String key) {
    int h = key.hashCode();
    int mask = keys.length - 1;
    int i = spread(h) & mask;
    while (true) {
      if (keys[i] == null) {
        return;
      }
      if (hashes[i] == h && keys[i].equals(key)) {
        break;
      }
      i = (i + 1) & mask;
    }
    size--;
    // Shift back every following entry of the run that the gap would cut off from its home slot.
    int gap = i;
    for (int j = (gap + 1) & mask; keys[j] != null; j = (j + 1) & mask) {
      int home = spread(hashes[j]) & mask;
      // Move j into the gap unless its home lies cyclically in (gap, j].
      boolean homeAfterGap = gap <= j ? (home > gap && home <= j) : (home > gap || home <= j);
      if (!homeAfterGap) {
        keys[gap] = keys[j];
        hashes[gap] = hashes[j];
        values[gap] = values[j];
        gap = j;
      }
    }
    keys[gap] = null;
  }

  private void grow() {
    String[] oldKeys = keys;
    int[] oldHashes = hashes;
    int[] oldValues = values;
    keys = new String[oldKeys.length * 2];
    hashes = new int[keys.length];
    values = new int[keys.length];
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != null) {
        put(oldKeys[i], oldValues[i]);
      }
    }
    Arrays.fill(oldKeys, null);
  }

  /** Spreads the hash code's high bits into the low ones that select a slot. */
  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B1;
  }
}
