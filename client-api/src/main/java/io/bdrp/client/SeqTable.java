package io.bdrp.client;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Values by consecutive numbers, as a reliable publisher numbers its messages: added at the end,
 * one number after the other, and removed in any order. A ring of slots from the lowest number
 * still held to the next one to add; a removed value leaves an empty slot until the numbers below
 * it are gone too. Adding, finding and removing cost a few array accesses, where a sorted map costs
 * a tree walk and an entry per value: the table holds up to a publisher's whole window.
 *
 * <p>A value left alone far below the others (a message waiting for a router cut off while later
 * ones are confirmed) would stretch the ring over every number sent since: once the ring spans more
 * than {@link #MAX_GAP_SLOTS} slots and four times the values it holds, its lowest values move to a
 * sorted side map, so that memory follows what is held, not how far apart it is. Not thread-safe.
 *
 * @param <V> the values
 */
final class SeqTable<V> {
  /** The span beyond which the lowest values may move to {@link #stragglers}. */
  static final int MAX_GAP_SLOTS = 1 << 16;

  private Object[] ring = new Object[16];

  /** Values under numbers below {@link #base}, moved out of the ring. */
  private final java.util.TreeMap<Long, V> stragglers = new java.util.TreeMap<>();

  /** The number of the slot at {@link #head}: the lowest number held, when any is. */
  private long base;

  private int head;

  /** Slots from the head to the next number to add, empty ones included. */
  private int span;

  private int size;

  /** A table whose first number will be {@code first}. */
  SeqTable(long first) {
    this.base = first;
  }

  /** Values held. */
  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The number the next {@link #add} takes. */
  long next() {
    return base + span;
  }

  /** Holds {@code v} under {@link #next()}, and returns that number. */
  long add(V v) {
    if (span == ring.length) {
      if (span >= MAX_GAP_SLOTS && span > 4 * (size - stragglers.size())) {
        spill();
      } else {
        grow();
      }
    }
    ring[(head + span) & (ring.length - 1)] = v;
    span++;
    size++;
    return base + span - 1;
  }

  /** The lowest number held; only when not {@link #isEmpty}. */
  long first() {
    return stragglers.isEmpty() ? base : stragglers.firstKey();
  }

  /** The value under {@code seq}, or null. */
  @SuppressWarnings("unchecked")
  V get(long seq) {
    if (seq < base) {
      return stragglers.get(seq);
    }
    if (seq >= base + span) {
      return null;
    }
    return (V) ring[slot(seq)];
  }

  /** Removes and returns the value under {@code seq}, or null if none is held. */
  V remove(long seq) {
    if (seq < base) {
      V v = stragglers.remove(seq);
      size -= v != null ? 1 : 0;
      return v;
    }
    V v = get(seq);
    if (v == null) {
      return null;
    }
    ring[slot(seq)] = null;
    size--;
    while (span > 0 && ring[head] == null) { // the lowest number held moves up past gaps
      head = (head + 1) & (ring.length - 1);
      base++;
      span--;
    }
    if (span == 0) {
      head = 0;
    }
    return v;
  }

  /** How many values are held under numbers below {@code seq}. */
  int countBelow(long seq) {
    int n = stragglers.headMap(seq).size();
    for (long s = base, end = Math.min(seq, base + span); s < end; s++) {
      n += ring[slot(s)] != null ? 1 : 0;
    }
    return n;
  }

  /**
   * Calls {@code each} with the numbers of the values held from {@code from} on, in order, while it
   * answers true.
   */
  void forEachFrom(long from, SeqVisitor<V> each) {
    if (from < base) {
      for (var e : stragglers.tailMap(from, true).entrySet()) {
        if (!each.visit(e.getKey(), e.getValue())) {
          return;
        }
      }
    }
    for (long s = Math.max(from, base), end = base + span; s < end; s++) {
      @SuppressWarnings("unchecked")
      V v = (V) ring[slot(s)];
      if (v != null && !each.visit(s, v)) {
        return;
      }
    }
  }

  /** Removes every value held and gives each to {@code each}, in number order. */
  void drainAll(Consumer<V> each) {
    stragglers.values().forEach(each);
    stragglers.clear();
    for (long s = base, end = base + span; s < end; s++) {
      @SuppressWarnings("unchecked")
      V v = (V) ring[slot(s)];
      if (v != null) {
        each.accept(v);
      }
    }
    base += span;
    Arrays.fill(ring, null);
    head = 0;
    span = 0;
    size = 0;
  }

  /** The ring's slots now: what the table takes beside its values. */
  int slots() {
    return ring.length;
  }

  /** Visits one held value; answers whether to go on. */
  interface SeqVisitor<V> {
    boolean visit(long seq, V value);
  }

  private int slot(long seq) {
    return (int) ((head + (seq - base)) & (ring.length - 1));
  }

  /** Moves the lower half of the ring's numbers to the side map, values and gaps alike. */
  @SuppressWarnings("unchecked")
  private void spill() {
    int moved = span / 2;
    for (int i = 0; i < moved; i++) {
      int at = (head + i) & (ring.length - 1);
      if (ring[at] != null) {
        stragglers.put(base + i, (V) ring[at]);
        ring[at] = null;
      }
    }
    head = (head + moved) & (ring.length - 1);
    base += moved;
    span -= moved;
    while (span > 0 && ring[head] == null) {
      head = (head + 1) & (ring.length - 1);
      base++;
      span--;
    }
  }

  private void grow() {
    Object[] bigger = new Object[ring.length * 2];
    for (int i = 0; i < span; i++) {
      bigger[i] = ring[(head + i) & (ring.length - 1)];
    }
    ring = bigger;
    head = 0;
  }
}
