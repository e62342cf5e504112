package io.bdrp.encoding.codec;

import java.util.Arrays;

/**
 * Attribute names decoded before, by their UTF-8 bytes: a network carries few distinct names, so
 * most names on the wire are found here and need neither decoding nor a new string.
 *
 * <p>A fixed table of immutable entries, shared by every thread without locks: a slot is replaced
 * whole, a reader sees either the old entry or the new one (final fields), and a miss only costs a
 * decode. Bounded by its size whatever the input.
 */
final class NameCache {
  private static final int SLOTS = 1024; // a power of two

  private record Entry(byte[] bytes, String name) {}

  private static final Entry[] TABLE = new Entry[SLOTS];

  private NameCache() {}

  private static int slot(byte[] b, int n) {
    int h = n;
    for (int i = 0; i < n; i++) {
      h = 31 * h + b[i];
    }
    return (h ^ (h >>> 16)) & (SLOTS - 1);
  }

  /** The name whose UTF-8 is {@code b[0..n)}, if cached. */
  static String get(byte[] b, int n) {
    Entry e = TABLE[slot(b, n)];
    if (e != null && e.bytes.length == n && Arrays.equals(e.bytes, 0, n, b, 0, n)) {
      return e.name;
    }
    return null;
  }

  /** Remembers a name that decoded correctly from {@code b[0..n)}. */
  static void put(byte[] b, int n, String name) {
    TABLE[slot(b, n)] = new Entry(Arrays.copyOf(b, n), name);
  }
}
