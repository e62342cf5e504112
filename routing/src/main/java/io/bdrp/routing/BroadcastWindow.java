package io.bdrp.routing;

/**
 * The broadcasts a router has taken recently, of all sources together. Copies of a message with D
 * cannot meet again (every router of D is in exactly one copy), but a broadcast follows the tree of
 * its source, and while routes change a router can take one copy from its old parent and another
 * from its new one; the second is recognised here.
 *
 * <p><b>Why not a window per source.</b> Message ids are not ordered ({@link MessageIds}: a keyed
 * permutation, so that no router can predict another's next ids), so there is no "highest id" to
 * slide a window of bits along. An older design that did, with ids growing per source, let a
 * neighbour pre-mark a source's next ids with forged copies (and one forged id far above the
 * highest cleared the whole window).
 *
 * <p><b>How.</b> A set-associative table of 64-bit fingerprints: {@code fp = SipHash_k(source, id)}
 * under a key k of this router's own (secret, from its {@link MessageIds}' key; never 0, which
 * marks an empty way), bucket {@code fp mod buckets}, {@link #WAYS} ways per bucket replaced in
 * first-in first-out order. A broadcast is taken again only if its exact fingerprint is in its
 * bucket. So:
 *
 * <ul>
 *   <li>A forged id marks only its own fingerprint: it pre-marks a genuine broadcast only if it is
 *       the genuine (source, id) itself, which takes guessing a 64-bit id drawn by a keyed
 *       permutation the forger does not know (2^-64 a try), or two fingerprints colliding (2^-61 a
 *       look-up, and not aimable without k).
 *   <li>A forged id evicts nothing it chooses: where it lands depends on k. Each forged copy can at
 *       most push one entry out of a random bucket, like any broadcast; a flood of forged copies
 *       shortens how long genuine ids are remembered, which can only let the second copy of a
 *       broadcast through while routes change (a duplicate delivery), never suppress a first one.
 *       (Forged broadcasts reach this table only from the neighbour that is this router's parent on
 *       the named source's tree: the tree check comes first.)
 * </ul>
 *
 * <p><b>Memory.</b> Allocated at the first broadcast, {@link #INITIAL} entries (32 KiB), doubled
 * each time as many broadcasts have been taken since the last size as the table holds, up to {@link
 * #MAX} entries (512 KiB): a router that sees few broadcasts keeps a small table, and one that sees
 * many remembers about its last {@link #MAX} (an entry lives until {@link #WAYS} later broadcasts
 * land in its bucket, about MAX broadcasts on average). Growing allocates; nothing else does. Owned
 * by the data plane's thread.
 */
final class BroadcastWindow {
  /** Ways per bucket. */
  static final int WAYS = 8;

  /** Entries of a new table. */
  static final int INITIAL = 4096;

  /** Entries at most. */
  static final int MAX = 65_536;

  private final int maxRouters;
  private final long k0;
  private final long k1;
  private long[] fps; // buckets * WAYS fingerprints, 0: empty; null until the first broadcast
  private byte[] nextWay; // per bucket: the way the next insert replaces
  private int bucketMask;
  private long takenSinceGrowth;

  /**
   * A window for sources {@code 0..maxRouters-1} keyed with (k0, k1), which must be secret from
   * other routers.
   */
  BroadcastWindow(int maxRouters, long k0, long k1) {
    this.maxRouters = maxRouters;
    this.k0 = k0;
    this.k1 = k1;
  }

  /** Whether broadcast {@code id} of {@code source} comes for the first time; records it. */
  boolean first(int source, long id) {
    if (source < 0 || source >= maxRouters) {
      return true;
    }
    if (fps == null) {
      allocate(INITIAL);
    }
    long fp = fingerprint(source, id);
    int base = (int) (fp & bucketMask) * WAYS;
    for (int w = 0; w < WAYS; w++) {
      if (fps[base + w] == fp) {
        return false;
      }
    }
    insert(fp);
    if (++takenSinceGrowth >= fps.length && fps.length < MAX) {
      grow();
    }
    return true;
  }

  /** Entries the table holds now (for tests). */
  int capacity() {
    return fps == null ? 0 : fps.length;
  }

  private long fingerprint(int source, long id) {
    // Two words of input in one: the id, then the source mixed into the key's second half.
    long fp = MessageIds.sip13(k0, k1 ^ ((long) source * 0x9E37_79B9_7F4A_7C15L), id);
    return fp == 0 ? 1 : fp;
  }

  private void insert(long fp) {
    int bucket = (int) (fp & bucketMask);
    int way = nextWay[bucket];
    fps[bucket * WAYS + way] = fp;
    nextWay[bucket] = (byte) ((way + 1) & (WAYS - 1));
  }

  private void allocate(int entries) {
    fps = new long[entries];
    nextWay = new byte[entries / WAYS];
    bucketMask = entries / WAYS - 1;
    takenSinceGrowth = 0;
  }

  /** Doubles the table, keeping every entry (each bucket splits in two by one more bit of fp). */
  private void grow() {
    long[] old = fps;
    byte[] oldNext = nextWay;
    allocate(old.length * 2);
    int buckets = oldNext.length;
    for (int b = 0; b < buckets; b++) {
      // Oldest first, so that each new bucket keeps the first-in first-out order.
      for (int i = 0; i < WAYS; i++) {
        long fp = old[b * WAYS + ((oldNext[b] + i) & (WAYS - 1))];
        if (fp != 0) {
          insert(fp);
        }
      }
    }
  }
}
