package io.bdrp.testbed.chaos;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every message of a campaign, as the oracle saw it before it was sent and as the clients received
 * it: when it was sent, by which client, which clients' predicates it satisfies, whether the send
 * failed (the sender had no session), and which clients received it and how often.
 *
 * <p>Messages are numbered from 0 by one sender thread; receivers (any thread) only set bits and
 * count duplicates atomically, so nothing they do depends on reading what the sender wrote. After
 * {@link #close()} deliveries are counted as late and change nothing; the accounting reads the
 * ledger once every client has stopped.
 */
public final class Ledger {
  private static final int CHUNK_BITS = 14;
  private static final int CHUNK = 1 << CHUNK_BITS;
  private static final int MAX_CHUNKS = 1 << 16;

  private final int clients;
  private final int words;
  private final AtomicReferenceArray<Chunk> chunks = new AtomicReferenceArray<>(MAX_CHUNKS);
  private volatile int count;
  private volatile boolean closed;
  private final LongAdder received = new LongAdder();
  private final LongAdder late = new LongAdder();

  /** Deliveries of messages that are not in the ledger (no or unknown number), by second. */
  private final AtomicLongArray strays = new AtomicLongArray(24 * 3600);

  private final long origin;

  /**
   * For each receiver and sender, the highest message number the receiver has had from that sender
   * (-1: none): a lower number arriving later is out of its sender's order.
   */
  private final AtomicIntegerArray lastFrom;

  /** Every duplicate delivery: message, client, arrival (nanoseconds from the origin). */
  private final java.util.concurrent.ConcurrentLinkedQueue<long[]> duplicateLog =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private static final class Chunk {
    final long[] sentAt = new long[CHUNK];
    final int[] from = new int[CHUNK];
    final long[] expected;
    final AtomicLongArray got;
    final AtomicIntegerArray duplicates = new AtomicIntegerArray(CHUNK);
    final AtomicIntegerArray failed = new AtomicIntegerArray(CHUNK);
    final AtomicLongArray lastAt = new AtomicLongArray(CHUNK);
    final AtomicLongArray firstAt = new AtomicLongArray(CHUNK);
    final AtomicLongArray confirmedAt = new AtomicLongArray(CHUNK);
    final AtomicIntegerArray unreached = new AtomicIntegerArray(CHUNK);
    final AtomicIntegerArray outOfOrder = new AtomicIntegerArray(CHUNK);

    Chunk(int words) {
      expected = new long[CHUNK * words];
      got = new AtomicLongArray(CHUNK * words);
    }
  }

  /** A ledger for {@code clients} clients; times are nanoseconds from {@code origin}. */
  public Ledger(int clients, long origin) {
    this.clients = clients;
    this.words = (clients + 63) >>> 6;
    this.origin = origin;
    this.lastFrom = new AtomicIntegerArray(clients * clients);
    for (int i = 0; i < clients * clients; i++) {
      lastFrom.set(i, -1);
    }
  }

  /** The number of clients. */
  public int clients() {
    return clients;
  }

  /** Words of a receiver set. */
  public int words() {
    return words;
  }

  /** The time origin, as {@link System#nanoTime()}. */
  public long origin() {
    return origin;
  }

  /**
   * Enters a message about to be sent: its sender, the clients that must receive it (bit c of
   * {@code receivers}) and its send time. Returns its number. Called by one thread only.
   */
  public int add(int from, long[] receivers, long sentAtNanos) {
    int id = count;
    int c = id >>> CHUNK_BITS;
    if (c >= MAX_CHUNKS) {
      throw new IllegalStateException("more than " + ((long) MAX_CHUNKS * CHUNK) + " messages");
    }
    Chunk k = chunks.get(c);
    if (k == null) {
      k = new Chunk(words);
      chunks.set(c, k);
    }
    int i = id & (CHUNK - 1);
    k.sentAt[i] = sentAtNanos;
    k.from[i] = from;
    System.arraycopy(receivers, 0, k.expected, i * words, words);
    count = id + 1;
    return id;
  }

  /** Marks message {@code id} as never sent: its sender had no session (any thread). */
  public void failed(int id) {
    chunk(id).failed.set(id & (CHUNK - 1), 1);
  }

  private Chunk chunk(int id) {
    return chunks.get(id >>> CHUNK_BITS);
  }

  /** Client {@code client} received message {@code id} (any thread). */
  public void received(long id, int client) {
    if (closed) {
      late.increment();
      return;
    }
    received.increment();
    Chunk k = id >= 0 && id < count ? chunk((int) id) : null;
    if (k == null) {
      stray();
      return;
    }
    int i = (int) (id & (CHUNK - 1));
    long at = System.nanoTime() - origin;
    k.lastAt.accumulateAndGet(i, at, Math::max);
    k.firstAt.compareAndSet(i, 0, at);
    int w = i * words + (client >>> 6);
    long bit = 1L << (client & 63);
    long old;
    do {
      old = k.got.get(w);
      if ((old & bit) != 0) {
        k.duplicates.incrementAndGet(i);
        duplicateLog.add(new long[] {id, client, at});
        return;
      }
    } while (!k.got.compareAndSet(w, old, old | bit));
    int pair = client * clients + k.from[i];
    int before = lastFrom.getAndAccumulate(pair, (int) id, Math::max);
    if (before > id) {
      k.outOfOrder.incrementAndGet(i);
    }
  }

  /**
   * Message {@code id}'s publisher was told that every router of its destinations has it (any
   * thread), at {@code atNanos} from the origin.
   */
  public void confirmed(int id, long atNanos) {
    chunk(id).confirmedAt.compareAndSet(id & (CHUNK - 1), 0, Math.max(1, atNanos));
  }

  /**
   * Message {@code id}'s publisher was told that some routers of its destinations were not reached.
   */
  public void unreached(int id) {
    chunk(id).unreached.set(id & (CHUNK - 1), 1);
  }

  /** When message {@code i} was confirmed, nanoseconds from the origin (0: it was not). */
  public long confirmedAt(int i) {
    return chunk(i).confirmedAt.get(i & (CHUNK - 1));
  }

  /** Whether message {@code i}'s publisher was told that some destinations were not reached. */
  public boolean isUnreached(int i) {
    return chunk(i).unreached.get(i & (CHUNK - 1)) != 0;
  }

  /**
   * Receivers that got message {@code i} after a later message of the same sender (first deliveries
   * only; duplicates are counted apart).
   */
  public int outOfOrder(int i) {
    return chunk(i).outOfOrder.get(i & (CHUNK - 1));
  }

  /** A client received a message that is not in the ledger: spurious, counted by second. */
  public void stray() {
    if (closed) {
      late.increment();
      return;
    }
    received.increment();
    int s = (int) Math.min(strays.length() - 1, Math.max(0, (System.nanoTime() - origin) / 1e9));
    strays.incrementAndGet(s);
  }

  /** Stops counting: what arrives later is late. */
  public void close() {
    closed = true;
  }

  /** Deliveries so far (duplicates and spurious included). */
  public long receivedSoFar() {
    return received.sum();
  }

  /** Deliveries that arrived after {@link #close()}. */
  public long late() {
    return late.sum();
  }

  /** Messages entered. */
  public int count() {
    return count;
  }

  /** When message {@code i} was sent, in nanoseconds from the origin. */
  public long sentAt(int i) {
    return chunk(i).sentAt[i & (CHUNK - 1)];
  }

  /** Who sent message {@code i}. */
  public int from(int i) {
    return chunk(i).from[i & (CHUNK - 1)];
  }

  /** Whether message {@code i}'s send failed. */
  public boolean isFailed(int i) {
    return chunk(i).failed.get(i & (CHUNK - 1)) != 0;
  }

  /** Word {@code w} of the clients that must receive message {@code i}. */
  public long expected(int i, int w) {
    return chunk(i).expected[(i & (CHUNK - 1)) * words + w];
  }

  /** Word {@code w} of the clients that received message {@code i}. */
  public long got(int i, int w) {
    return chunk(i).got.get((i & (CHUNK - 1)) * words + w);
  }

  /** Deliveries of message {@code i} beyond each receiver's first. */
  public int duplicates(int i) {
    return chunk(i).duplicates.get(i & (CHUNK - 1));
  }

  /**
   * When the last delivery of message {@code i} arrived, in nanoseconds from the origin (0: none
   * arrived).
   */
  public long lastDeliveryAt(int i) {
    return chunk(i).lastAt.get(i & (CHUNK - 1));
  }

  /**
   * When the first delivery of message {@code i} (to any client) arrived, in nanoseconds from the
   * origin (0: none arrived).
   */
  public long firstDeliveryAt(int i) {
    return chunk(i).firstAt.get(i & (CHUNK - 1));
  }

  /** Every duplicate delivery so far: {message, client, arrival in nanoseconds from the origin}. */
  public java.util.List<long[]> duplicateLog() {
    return java.util.List.copyOf(duplicateLog);
  }

  /** Deliveries not in the ledger that arrived in second {@code s} from the origin. */
  public long strays(int s) {
    return s >= 0 && s < strays.length() ? strays.get(s) : 0;
  }
}
