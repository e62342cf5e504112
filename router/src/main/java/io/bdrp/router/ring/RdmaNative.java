package io.bdrp.router.ring;

import io.bdrp.router.sidecar.SidecarLibrary;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The RDMA backend of the ring ({@code sidecar/src/main/c/rdma.c}, built against libibverbs):
 * whether it can run here, and the JNI entry points of one end of a ring over verbs ({@link
 * VerbsRingBackend} uses them). It needs the library (built where libibverbs' headers were) and an
 * RDMA device ({@code /sys/class/infiniband}); without a device {@link #open} throws an {@link
 * IOException} saying so.
 *
 * <p>A handle is one end: a reader's ring, or a writer's shadow of the remote ring, in registered
 * memory, with its reliable-connection queue pair. Its endpoint ({@link #endpoint}) is {@value
 * #ENDPOINT_BYTES} bytes in network byte order:
 *
 * <pre>
 *   0      2                  18     22     26             34     38           46
 *   | lid  | gid (16 bytes)   | qpn  | psn  | ring address | rkey | capacity   |
 *   | u16  |                  | u32  | u32  | u64          | u32  | u64        |
 * </pre>
 *
 * The address and key are those of the reader's ring (a writer's are its shadow's, which the reader
 * does not use); the capacity is the ring's, or the shadow's, which must equal the ring's.
 *
 * <p>One thread per handle, as for {@link RingNative}.
 */
public final class RdmaNative {
  private static final Throwable LOAD_FAILURE =
      SidecarLibrary.load("libbdrp_rdma", "RDMA_UNAVAILABLE");

  /** Bytes of one end's endpoint. */
  static final int ENDPOINT_BYTES = 46;

  private RdmaNative() {}

  /**
   * Opens {@code device} (null: the first libibverbs lists) and makes a reader's ring, or a
   * writer's shadow, of {@code capacity} bytes with its queue pair.
   *
   * @throws IOException naming the device and why (no RDMA device, a verbs call refused)
   */
  static native long open(String device, boolean reader, long capacity, long watermark)
      throws IOException;

  /** This end's endpoint, {@value #ENDPOINT_BYTES} bytes (see the class comment). */
  static native byte[] endpoint(long handle);

  /**
   * Connects this end's queue pair to the other end's; a writer only to a ring of its shadow's
   * capacity.
   */
  static native void connect(long handle, byte[] remote) throws IOException;

  /**
   * Writer: the frames at native {@code address} (as {@link RingNative#writeBatch}) into the remote
   * ring while they fit: bytes written, -1 the first is too large, -3 the batch is cut short.
   *
   * @throws IOException when a write or its completion fails
   */
  static native int writeBatch(long handle, long address, int length) throws IOException;

  /** Writer: as {@link #writeBatch}, from {@code direct[offset, offset+length)}. */
  static native int writeBatchBuffer(long handle, ByteBuffer direct, int offset, int length)
      throws IOException;

  /** The largest frame the ring takes. */
  static native int maxFrame(long handle);

  /** Reader: the completion channel's descriptor, readable once a write arrived after a rearm. */
  static native int eventFd(long handle);

  /** Reader: after {@link #eventFd} was readable: takes the events, reposts receives, re-arms. */
  static native void rearm(long handle) throws IOException;

  /** Reader: as {@link RingNative#readAddress}. */
  static native int read(long handle, long address, int capacity) throws IOException;

  /** Reader: as {@link #read}, into {@code direct[0, capacity)}. */
  static native int readBuffer(long handle, ByteBuffer direct, int capacity) throws IOException;

  /** Reader: publishes its position (the writer reads it back): 1 a frame is there. */
  static native int prepareSleep(long handle, int spin);

  /** Releases the queue pair, the registration and the memory. */
  static native void close(long handle);

  /** The RDMA devices libibverbs lists, by name. */
  private static native String devices() throws IOException;

  /** Why the library did not load, or null when it did. */
  public static Throwable libraryUnavailable() {
    return LOAD_FAILURE;
  }

  /** The RDMA devices here, by name (empty: none); from libibverbs. */
  public static List<String> deviceNames() throws IOException {
    if (LOAD_FAILURE != null) {
      throw new IOException("the RDMA backend is not available: " + LOAD_FAILURE.getMessage());
    }
    String d = devices();
    return d.isEmpty() ? List.of() : Arrays.asList(d.split(","));
  }

  /**
   * The devices the kernel lists in {@code /sys/class/infiniband} (empty: none, or no such dir).
   */
  public static List<String> sysfsDevices() {
    Path dir = Path.of("/sys/class/infiniband");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /** Why RDMA links cannot run here, or null when a device and the library are both there. */
  public static String whyNot() {
    if (LOAD_FAILURE != null) {
      return LOAD_FAILURE.getMessage();
    }
    if (sysfsDevices().isEmpty()) {
      return "no RDMA device (/sys/class/infiniband is empty or missing)";
    }
    return null;
  }
}
