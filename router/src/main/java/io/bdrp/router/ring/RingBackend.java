package io.bdrp.router.ring;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Rings between two routers whose ends find each other only through endpoint bytes exchanged in
 * their router-link hellos ({@code RouterHello} transport endpoints), not through a path or name
 * both sides derive: the seam a link transport uses, whatever carries the ring.
 *
 * <p>The exchange, for one link: each router {@linkplain #open opens} its end before it sends its
 * hello and puts that end's {@link LinkEnd#endpoint} in it under {@link #transport}; when the
 * neighbour's hello arrives, it {@linkplain LinkEnd#connect connects} its end with the neighbour's
 * bytes, which gives the {@link Writer} into the neighbour's ring. Each router reads its own ring
 * ({@link LinkEnd#reader}) and writes into the neighbour's. The endpoint carries what the other end
 * needs for both directions (over verbs, a reliable connection needs both queue pairs to know each
 * other), which is why one {@link LinkEnd} holds both.
 *
 * <p>Two implementations: {@link VerbsRingBackend}, RDMA verbs between hosts ({@code rdma.c}), and
 * {@link ShmRingBackend}, the shared-memory ring on one host, which stands in for verbs where there
 * is no RDMA device so that the exchange and the data path can be tested end to end.
 *
 * <p>Endpoint bytes from a neighbour are untrusted: {@link LinkEnd#connect} checks their length,
 * version and every field it uses before it acts on them, and refuses with an {@link IOException}
 * that says what is wrong.
 */
public interface RingBackend {
  /** The transport name under which the endpoint goes in the hello: {@code rdma}, {@code shm}. */
  String transport();

  /**
   * Makes this router's end of a link: a ring of {@code capacity} bytes (a power of two from 4096)
   * that the neighbour will write, whose reader publishes its position after consuming {@code
   * watermark} bytes, and what is needed to write into the neighbour's ring.
   *
   * @throws IOException when the ring or its resources cannot be made (no device, no memory)
   */
  LinkEnd open(int capacity, int watermark) throws IOException;

  /**
   * This router's end of one link. Made and connected by the router's control path; then {@link
   * #reader} belongs to the thread that reads the ring and the writer to the one that writes.
   */
  interface LinkEnd extends AutoCloseable {
    /** The bytes the neighbour needs, to send in the hello (at most 256). */
    byte[] endpoint();

    /** The ring the neighbour writes into, once connected. */
    Reader reader();

    /**
     * Connects with the neighbour's endpoint bytes, from its hello: the writer into its ring. Once
     * per end. Bytes that are refused leave the end as it was (they are checked before anything is
     * done with them); a failure of the transport itself (a verbs call) leaves it unusable: close
     * it. The writer is unusable once the end is closed ({@link IllegalStateException}).
     *
     * @throws IOException if the bytes are malformed, name what this backend does not accept, or
     *     the connection fails; the message says which
     */
    Writer connect(byte[] theirs) throws IOException;

    /** Releases both directions: the ring, the writer, and what they hold (files, queue pairs). */
    @Override
    void close();
  }

  /**
   * Reads the frames the neighbour writes, in order, as {@link SharedRing#read(long, int)} does.
   * Event-driven: the owner waits for {@link #wakeFd} to be readable, calls {@link #rearm}, reads
   * until nothing is left, then {@link #prepareSleep}s, and waits again unless a frame arrived
   * meanwhile. One thread.
   */
  interface Reader {
    /**
     * Copies whole frames into {@code capacity} bytes of native memory at {@code address}, each a
     * little-endian int length and the frame, and consumes them: the bytes copied, 0 for none; when
     * the next frame alone does not fit, minus the bytes it needs.
     */
    int read(long address, int capacity) throws IOException;

    /** As {@link #read(long, int)}, into {@code direct} from its position 0 to its capacity. */
    int read(ByteBuffer direct) throws IOException;

    /**
     * Having read everything: polls {@code spin} times, publishes the position (the writer's room)
     * and says it sleeps: whether a frame arrived meanwhile (then read on, do not wait).
     */
    boolean prepareSleep(int spin);

    /** A descriptor that becomes readable when the writer has woken this reader. */
    int wakeFd();

    /**
     * After {@link #wakeFd} was readable: takes the wake-ups, so that the next write wakes it.
     * Never blocks: with nothing to take it only re-arms.
     */
    void rearm() throws IOException;

    /**
     * Waits up to {@code timeoutMillis} (below 0: no limit) for {@link #wakeFd} to be readable:
     * whether it is. For a reader with a thread of its own; an event loop polls the descriptor.
     */
    boolean awaitWake(int timeoutMillis) throws IOException;
  }

  /** Writes frames into the neighbour's ring; never blocks. One thread. */
  interface Writer {
    /** The largest frame the neighbour's ring takes. */
    int maxFrame();

    /**
     * Appends, in order and while they fit, the frames at native {@code address} ({@code length}
     * bytes, each a little-endian int length and the frame, as {@link Reader#read} gives them) and
     * publishes them at once: the bytes written, whole frames only (0: the first did not fit).
     *
     * @throws IllegalArgumentException if the first frame is larger than {@link #maxFrame} or the
     *     batch ends inside a frame
     * @throws IOException when the transport fails (a verbs write or its completion)
     */
    int writeBatch(long address, int length) throws IOException;

    /** As {@link #writeBatch(long, int)}, from {@code direct[offset, offset+length)}. */
    int writeBatch(ByteBuffer direct, int offset, int length) throws IOException;
  }
}
