package io.bdrp.router.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * One end of a ring of frames in shared memory (the sidecar's {@code ring.c}): the reader makes it
 * in a file, the writer maps that file and writes frames into it, the reader takes them in order. A
 * write never blocks: a full ring refuses the frame. An idle reader sleeps in {@link #await}
 * without using CPU; a write wakes it.
 *
 * <p>Not thread-safe: one thread uses each end, except {@link #shutdown}, which any thread may call
 * to make a waiting reader return.
 */
public final class SharedRing implements AutoCloseable {
  private final Path path;
  private final boolean reader;
  private long handle;

  private SharedRing(Path path, boolean reader, long handle) {
    this.path = path;
    this.reader = reader;
    this.handle = handle;
  }

  /** Why rings are not available here (the library did not load), or null when they are. */
  public static Throwable unavailable() {
    return RingNative.LOAD_FAILURE;
  }

  private static void check() throws IOException {
    if (RingNative.LOAD_FAILURE != null) {
      throw new IOException(
          "shared-memory rings are not available: " + RingNative.LOAD_FAILURE.getMessage(),
          RingNative.LOAD_FAILURE);
    }
  }

  /**
   * Makes a ring of {@code capacity} bytes (a power of two from 4096) in a new file at {@code
   * path}, as its reader; the reader publishes its position after consuming {@code watermark}
   * bytes.
   */
  public static SharedRing create(Path path, int capacity, int watermark) throws IOException {
    check();
    return new SharedRing(path, true, RingNative.create(path.toString(), capacity, watermark));
  }

  /** Maps the ring in the file at {@code path}, as its writer. */
  public static SharedRing open(Path path) throws IOException {
    check();
    return new SharedRing(path, false, RingNative.open(path.toString()));
  }

  /** The ring's file. */
  public Path path() {
    return path;
  }

  /** The largest frame the ring takes: a quarter of its capacity, less an 8-byte header. */
  public int maxFrame() {
    return RingNative.maxFrame(live());
  }

  private long live() {
    if (handle == 0) {
      throw new IllegalStateException("ring " + path + " is closed");
    }
    return handle;
  }

  /** Writer: appends the frame in {@code direct[offset, offset+length)}: whether it fit. */
  public boolean write(ByteBuffer direct, int offset, int length) {
    return result(RingNative.write(live(), direct, offset, length), length);
  }

  /** Writer: appends the frame at native {@code address}: whether it fit. */
  public boolean writeAddress(long address, int length) {
    return result(RingNative.writeAddress(live(), address, length), length);
  }

  /**
   * Writer: appends, in order and while they fit, the frames at native {@code address} ({@code
   * length} bytes, each a little-endian int length and the frame, as {@link #read} gives them), and
   * publishes them at once: the bytes written, whole frames only (0: the first did not fit).
   *
   * @throws IllegalArgumentException if the first frame is larger than {@link #maxFrame} or the
   *     batch ends inside a frame
   */
  public int writeBatch(long address, int length) {
    return batchResult(RingNative.writeBatch(live(), address, length), length);
  }

  /** Writer: as {@link #writeBatch(long, int)}, from {@code direct[offset, offset+length)}. */
  public int writeBatch(ByteBuffer direct, int offset, int length) {
    return batchResult(RingNative.writeBatchBuffer(live(), direct, offset, length), length);
  }

  private int batchResult(int rc, int length) {
    if (rc < 0) {
      throw new IllegalArgumentException(
          rc == -1
              ? "a frame larger than ring " + path + " takes"
              : "a batch of " + length + " bytes that ends inside a frame");
    }
    return rc;
  }

  /**
   * Writer: as {@link #write}, waiting up to {@code timeoutNanos} for room (below 0: no limit).
   *
   * @throws IOException if the reader closed the ring
   */
  public boolean writeWait(ByteBuffer direct, int offset, int length, long timeoutNanos)
      throws IOException {
    int rc = RingNative.writeWait(live(), direct, offset, length, timeoutNanos);
    if (rc == -2) {
      throw new IOException("ring " + path + " was closed by its reader");
    }
    return result(rc, length);
  }

  private boolean result(int rc, int length) {
    if (rc < 0) {
      throw new IllegalArgumentException(
          "a frame of " + length + " bytes is larger than ring " + path + " takes");
    }
    return rc == 1;
  }

  /**
   * Reader: copies whole frames into {@code direct} from its position 0, each as a little-endian
   * int length and the frame, and consumes them: the bytes copied, 0 when there is none.
   *
   * @throws IOException if the ring holds something its writer cannot have written
   */
  public int read(ByteBuffer direct) throws IOException {
    return RingNative.read(live(), direct, direct.capacity());
  }

  /**
   * Reader: as {@link #read(ByteBuffer)}, into {@code capacity} bytes of native memory at {@code
   * address} (a direct buffer's, which the caller keeps alive); when the next frame alone does not
   * fit, nothing is read and the result is minus the bytes it needs.
   */
  public int read(long address, int capacity) throws IOException {
    return RingNative.readAddress(live(), address, capacity);
  }

  /**
   * Reader: waits until a frame is there, polling for {@code spinNanos} before it sleeps for at
   * most {@code timeoutNanos} (below 0: no limit): whether a frame is there (false on timeout or
   * once shut down).
   */
  public boolean await(long spinNanos, long timeoutNanos) {
    return RingNative.await(live(), spinNanos, timeoutNanos) == 1;
  }

  /**
   * Writer: wakes a sleeping reader with a datagram to the Unix socket at {@code path}, which the
   * reader's event loop listens on, instead of the futex.
   */
  public void wakeBySocket(Path path) throws IOException {
    RingNative.wakeBySocket(live(), path.toString());
  }

  /**
   * Reader in an event loop, when it has read everything: polls {@code spin} times, then publishes
   * its position and says it sleeps, so that the next write wakes it through its socket. Whether a
   * frame arrived meanwhile (then it does not sleep: read on).
   */
  public boolean prepareSleep(int spin) {
    return RingNative.prepareSleep(live(), spin) == 1;
  }

  /** Marks the ring closed and wakes a waiting reader or writer; the ring stays usable to close. */
  public void shutdown() {
    if (handle != 0) {
      RingNative.shutdown(handle);
    }
  }

  /**
   * This end's counters.
   *
   * @param frames frames written (writer) or read (reader)
   * @param bytes their bytes
   * @param full writes refused for want of room
   * @param headPublications positions the reader published
   * @param headReads published positions the writer read back
   * @param sleeps times this end slept
   * @param wakes times this end woke the other
   * @param tail the shared write position
   * @param head the shared (published) read position
   * @param readerSleeping whether the reader says it sleeps (or is about to)
   */
  public record Counters(
      long frames,
      long bytes,
      long full,
      long headPublications,
      long headReads,
      long sleeps,
      long wakes,
      long tail,
      long head,
      boolean readerSleeping) {}

  /** This end's counters now. */
  public Counters counters() {
    long[] c = RingNative.counters(live());
    return new Counters(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9] != 0);
  }

  /** Whether this is the reader's end. */
  public boolean reader() {
    return reader;
  }

  /** Unmaps this end (a reader's caller deletes the file when it is done with it). */
  @Override
  public void close() {
    if (handle != 0) {
      RingNative.close(handle);
      handle = 0;
    }
  }
}
