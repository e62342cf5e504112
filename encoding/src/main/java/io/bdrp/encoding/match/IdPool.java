package io.bdrp.encoding.match;

import java.util.Arrays;

/**
 * Hands out small non-negative int ids and takes them back, reusing freed ids before new ones so
 * that the arrays indexed by id stay as small as the peak number of live ids. Owned by the thread
 * that owns the {@link ExactMatcher} holding it.
 */
final class IdPool {
  private int[] free = new int[8];
  private int freeCount;
  private int limit;

  /** A free id: the most recently released one, or the next never-used one. */
  int allocate() {
    return freeCount > 0 ? free[--freeCount] : limit++;
  }

  /** Returns an id to the pool; the caller must not use it again until it is allocated. */
  void release(int id) {
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, free.length * 2);
    }
    free[freeCount++] = id;
  }

  /** One more than the largest id ever handed out: the size every id-indexed array needs. */
  int limit() {
    return limit;
  }

  /** Number of ids currently handed out. */
  int live() {
    return limit - freeCount;
  }
}
