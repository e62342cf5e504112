package io.bdrp.routing;

/**
 * The broadcasts a router has taken, per source router: the highest message id seen and which of
 * the {@link #IDS} ids below it have come. Copies of a message with D cannot meet again (every
 * router of D is in exactly one copy), but a broadcast follows the tree of its source, and while
 * routes change a router can take one copy from its old parent and another from its new one; the
 * second is recognised here.
 *
 * <p>An id more than {@link #IDS} below the highest starts the window again at that id: the source
 * restarted (its ids begin anew), or the copy is so late that whether it came before cannot be
 * known; either way it is taken. Memory: one window per source that has broadcast, at most one per
 * router number. Owned by the data plane's thread.
 */
final class BroadcastWindow {
  /** Ids a window remembers below the highest. */
  static final int IDS = 4096;

  private static final class Window {
    long highest;
    final long[] seen = new long[IDS / 64];

    Window(long id) {
      highest = id;
      mark(id);
    }

    void mark(long id) {
      int bit = (int) (id & (IDS - 1));
      seen[bit >>> 6] |= 1L << bit;
    }

    boolean marked(long id) {
      int bit = (int) (id & (IDS - 1));
      return (seen[bit >>> 6] & (1L << bit)) != 0;
    }

    void clear(long id) {
      int bit = (int) (id & (IDS - 1));
      seen[bit >>> 6] &= ~(1L << bit);
    }

    void restart(long id) {
      java.util.Arrays.fill(seen, 0L);
      highest = id;
      mark(id);
    }
  }

  private final int maxRouters;

  /**
   * By source router number; made when the first broadcast arrives (most routers never see one).
   */
  private Window[] bySource;

  BroadcastWindow(int maxRouters) {
    this.maxRouters = maxRouters;
  }

  /** Whether broadcast {@code id} of {@code source} comes for the first time; records it. */
  boolean first(int source, long id) {
    if (source < 0 || source >= maxRouters) {
      return true;
    }
    if (bySource == null) {
      bySource = new Window[maxRouters];
    }
    Window w = bySource[source];
    if (w == null) {
      bySource[source] = new Window(id);
      return true;
    }
    if (id > w.highest) {
      if (id - w.highest >= IDS) {
        w.restart(id);
        return true;
      }
      for (long i = w.highest + 1; i < id; i++) {
        w.clear(i);
      }
      w.clear(id);
      w.mark(id);
      w.highest = id;
      return true;
    }
    if (w.highest - id >= IDS) {
      w.restart(id);
      return true;
    }
    if (w.marked(id)) {
      return false;
    }
    w.mark(id);
    return true;
  }
}
