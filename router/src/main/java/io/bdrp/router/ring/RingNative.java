package io.bdrp.router.ring;

import io.bdrp.router.sidecar.SidecarLibrary;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The JNI entry points of the shared ring ({@code sidecar/src/main/c/ring.c} and {@code
 * ring_jni.c}). A handle is one end of a ring; the reader's calls come from one thread, the
 * writer's from another (or the same), never two threads on one end.
 */
final class RingNative {
  static final Throwable LOAD_FAILURE = SidecarLibrary.load("libbdrp_ring", "RING_UNAVAILABLE");

  private RingNative() {}

  /** Makes a ring in a new file at {@code path}, as its reader. */
  static native long create(String path, long capacity, long watermark) throws IOException;

  /** Maps the ring in the file at {@code path}, as its writer. */
  static native long open(String path) throws IOException;

  /** Marks the ring closed and wakes both ends; it stays mapped. */
  static native void shutdown(long handle);

  /** Unmaps the ring and frees the handle. */
  static native void close(long handle);

  /** The largest frame the ring takes. */
  static native int maxFrame(long handle);

  /** Writer: 1 written, 0 full, -1 larger than {@link #maxFrame}. */
  static native int write(long handle, ByteBuffer direct, int offset, int length);

  /**
   * Writer: the frames at native {@code address} ({@code length} bytes, each a little-endian int
   * length and the frame) while they fit, the tail published once: bytes written, -1 the first is
   * too large, -3 the batch is cut short.
   */
  static native int writeBatch(long handle, long address, int length);

  /** Writer: as {@link #writeBatch}, from {@code direct[offset, offset+length)}. */
  static native int writeBatchBuffer(long handle, ByteBuffer direct, int offset, int length);

  /** Writer: as {@link #write}, from native memory at {@code address}. */
  static native int writeAddress(long handle, long address, int length);

  /**
   * Writer: as {@link #write}, waiting up to {@code timeoutNanos} (below 0: no limit); -2 closed.
   */
  static native int writeWait(
      long handle, ByteBuffer direct, int offset, int length, long timeoutNanos);

  /** Reader: frames as (little-endian int length, payload) into {@code direct}: bytes, 0 none. */
  static native int read(long handle, ByteBuffer direct, int capacity) throws IOException;

  /**
   * Reader: as {@link #read}, into native memory at {@code address}; when the next frame alone does
   * not fit, minus the bytes it needs.
   */
  static native int readAddress(long handle, long address, int capacity) throws IOException;

  /** Reader: 1 a frame is there, 0 timeout, -2 closed; polls for {@code spinNanos} first. */
  static native int await(long handle, long spinNanos, long timeoutNanos);

  /** Writer: wakes a sleeping reader by a datagram to the Unix socket at {@code path}. */
  static native void wakeBySocket(long handle, String path) throws IOException;

  /** Reader in an event loop: 1 a frame is there (read on), 0 it may wait for its wake socket. */
  static native int prepareSleep(long handle, int spin);

  /** This end's counters, then the shared tail and head (see {@link SharedRing.Counters}). */
  static native long[] counters(long handle);

  /** Binds a non-blocking Unix datagram socket at {@code path} (mode 0600): its descriptor. */
  static native int bindWake(String path) throws IOException;

  /** Takes every datagram waiting on the wake socket {@code fd}: their count. */
  static native int drainWake(int fd);

  /**
   * Waits up to {@code timeoutMillis} (below 0: no limit) for {@code fd} to be readable: 1 it is, 0
   * not.
   */
  static native int awaitReadable(int fd, int timeoutMillis) throws IOException;

  /** Closes a descriptor {@link #bindWake} returned. */
  static native void closeFd(int fd);
}
