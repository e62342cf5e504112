package io.bdrp.router.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Rings over RDMA verbs ({@code sidecar/src/main/c/rdma.c} through {@link RdmaNative}) behind the
 * {@link RingBackend} seam: between routers on different hosts, the writer writes the reader's
 * registered ring with RDMA WRITE and its tail with WRITE WITH IMMEDIATE, whose completion wakes
 * the reader's event loop.
 *
 * <p>{@link #open} makes two verbs ends on the device: the reader's ring and the writer's shadow of
 * the neighbour's ring, each with a reliable-connection queue pair, before either knows the
 * neighbour's. The endpoint carries both, {@value #ENDPOINT_BYTES} bytes:
 *
 * <pre>
 *   | version u8 (1) | reader: RdmaNative endpoint (46) | writer: RdmaNative endpoint (46) |
 * </pre>
 *
 * (the writer's ring address and key are zero: nobody writes its shadow), and {@link
 * LinkEnd#connect} connects this reader's queue pair to the neighbour's writer and this writer's to
 * the neighbour's reader (whose ring address and key it writes to). Both rings have the same
 * capacity: a writer lays frames out in its shadow at the offsets they take in the remote ring, so
 * routers joined over rdma are configured with equal ring sizes, and a neighbour whose ring differs
 * is refused, naming both sizes.
 *
 * <p><b>What runs without a device, and what only a device can test.</b> Here (no device, or no
 * libibverbs) the library loads where it was built, and {@link #open} fails with an {@link
 * IOException} that says there is no RDMA device; the endpoint checks of {@link LinkEnd#connect}
 * are plain Java. Opening a device, the queue pairs' transitions in {@code connect}, RDMA WRITE and
 * READ in {@link Writer#writeBatch}, the completions that wake the reader ({@link Reader#wakeFd},
 * {@link Reader#rearm}) and the reader's view of what was written can only be tested on a host with
 * an RDMA device (a real NIC, or the kernel's software RoCE, rdma_rxe, on an Ethernet interface);
 * {@code RdmaBackendTest} runs those parts only there. {@link ShmRingBackend} stands in for this
 * backend in the end-to-end tests of the exchange.
 */
public final class VerbsRingBackend implements RingBackend {
  /** Bytes of this backend's endpoint. */
  public static final int ENDPOINT_BYTES = 1 + 2 * RdmaNative.ENDPOINT_BYTES;

  /** The endpoint layout's version. */
  static final int VERSION = 1;

  /** Largest ring this backend registers: 1 GiB. */
  static final int MAX_CAPACITY = 1 << 30;

  private final String device;

  /** Rings on the RDMA device named {@code device}, or on the first libibverbs lists if null. */
  public VerbsRingBackend(String device) {
    this.device = device;
  }

  @Override
  public String transport() {
    return "rdma";
  }

  @Override
  public LinkEnd open(int capacity, int watermark) throws IOException {
    Throwable why = RdmaNative.libraryUnavailable();
    if (why != null) {
      throw new IOException("the RDMA backend is not available: " + why.getMessage(), why);
    }
    if (capacity < 4096 || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1) {
      throw new IllegalArgumentException(
          "ring capacity " + capacity + " is not a power of two in 4096.." + MAX_CAPACITY);
    }
    long reader = RdmaNative.open(device, true, capacity, watermark);
    long writer;
    try {
      writer = RdmaNative.open(device, false, capacity, 0);
    } catch (IOException e) {
      RdmaNative.close(reader);
      throw e;
    }
    return new End(reader, writer, capacity);
  }

  /**
   * The neighbour's reader and writer endpoints, checked: length, version, their rings' capacity
   * against {@code capacity}, queue pair and packet sequence numbers within their 24 bits.
   *
   * @throws IOException naming what is wrong
   */
  static byte[][] parse(byte[] theirs, int capacity) throws IOException {
    if (theirs.length != ENDPOINT_BYTES) {
      throw refused(theirs.length + " bytes, not " + ENDPOINT_BYTES);
    }
    if ((theirs[0] & 0xff) != VERSION) {
      throw refused("version " + (theirs[0] & 0xff) + ", this router reads " + VERSION);
    }
    byte[] reader = Arrays.copyOfRange(theirs, 1, 1 + RdmaNative.ENDPOINT_BYTES);
    byte[] writer = Arrays.copyOfRange(theirs, 1 + RdmaNative.ENDPOINT_BYTES, ENDPOINT_BYTES);
    for (byte[] e : new byte[][] {reader, writer}) {
      String end = e == reader ? "reader" : "writer";
      ByteBuffer b = ByteBuffer.wrap(e); // big-endian, as the layout
      long cap = b.getLong(38);
      if (cap != capacity) {
        throw refused(
            "the neighbour's "
                + end
                + " has a ring of "
                + cap
                + " bytes, this router's is "
                + capacity
                + " (routers joined over rdma need equal ring sizes)");
      }
      int qpn = b.getInt(18);
      int psn = b.getInt(22);
      if ((qpn & 0xff000000) != 0 || (psn & 0xff000000) != 0) {
        throw refused("the " + end + "'s queue pair or sequence number is wider than 24 bits");
      }
    }
    return new byte[][] {reader, writer};
  }

  private static IOException refused(String why) {
    return new IOException("rdma endpoint from the neighbour refused: " + why);
  }

  /** One link's end: two verbs handles, the reader's ring and the writer's shadow. */
  private static final class End implements LinkEnd {
    private final int capacity;
    private final byte[] endpoint;
    private final VerbsReader reader;
    private long writer;
    private boolean connected;

    End(long reader, long writer, int capacity) {
      this.reader = new VerbsReader(reader);
      this.writer = writer;
      this.capacity = capacity;
      this.endpoint = new byte[ENDPOINT_BYTES];
      endpoint[0] = VERSION;
      System.arraycopy(RdmaNative.endpoint(reader), 0, endpoint, 1, RdmaNative.ENDPOINT_BYTES);
      byte[] w = RdmaNative.endpoint(writer);
      Arrays.fill(w, 26, 38, (byte) 0); // nobody writes the shadow: its address and key stay here
      System.arraycopy(w, 0, endpoint, 1 + RdmaNative.ENDPOINT_BYTES, RdmaNative.ENDPOINT_BYTES);
    }

    @Override
    public byte[] endpoint() {
      return endpoint.clone();
    }

    @Override
    public Reader reader() {
      return reader;
    }

    @Override
    public Writer connect(byte[] theirs) throws IOException {
      if (connected) {
        throw new IllegalStateException("this end is connected already");
      }
      byte[][] e = parse(theirs, capacity);
      RdmaNative.connect(reader.handle, e[1]); // our reader with their writer
      RdmaNative.connect(writer, e[0]); // our writer into their ring
      connected = true;
      return new VerbsWriter();
    }

    /** The writer into the neighbour's ring: unusable once this end is closed. */
    private final class VerbsWriter implements Writer {
      private long handle() {
        if (writer == 0) {
          throw new IllegalStateException("the RDMA link end is closed");
        }
        return writer;
      }

      @Override
      public int maxFrame() {
        return RdmaNative.maxFrame(handle());
      }

      @Override
      public int writeBatch(long address, int length) throws IOException {
        return result(RdmaNative.writeBatch(handle(), address, length), length);
      }

      @Override
      public int writeBatch(ByteBuffer direct, int offset, int length) throws IOException {
        return result(RdmaNative.writeBatchBuffer(handle(), direct, offset, length), length);
      }

      private int result(int rc, int length) {
        if (rc < 0) {
          throw new IllegalArgumentException(
              rc == -1
                  ? "a frame larger than the neighbour's RDMA ring takes"
                  : "a batch of " + length + " bytes that ends inside a frame");
        }
        return rc;
      }
    }

    @Override
    public void close() {
      if (writer != 0) {
        RdmaNative.close(writer);
        writer = 0;
      }
      reader.close();
    }
  }

  private static final class VerbsReader implements Reader {
    long handle;

    VerbsReader(long handle) {
      this.handle = handle;
    }

    private long live() {
      if (handle == 0) {
        throw new IllegalStateException("the RDMA link end is closed");
      }
      return handle;
    }

    @Override
    public int read(long address, int capacity) throws IOException {
      return RdmaNative.read(live(), address, capacity);
    }

    @Override
    public int read(ByteBuffer direct) throws IOException {
      return RdmaNative.readBuffer(live(), direct, direct.capacity());
    }

    @Override
    public boolean prepareSleep(int spin) {
      return RdmaNative.prepareSleep(live(), spin) == 1;
    }

    @Override
    public int wakeFd() {
      return RdmaNative.eventFd(live());
    }

    @Override
    public void rearm() throws IOException {
      RdmaNative.rearm(live());
    }

    @Override
    public boolean awaitWake(int timeoutMillis) throws IOException {
      if (SharedRing.unavailable() != null) {
        throw new IOException("waiting needs the ring library: " + SharedRing.unavailable());
      }
      return RingNative.awaitReadable(wakeFd(), timeoutMillis) == 1;
    }

    void close() {
      if (handle != 0) {
        RdmaNative.close(handle);
        handle = 0;
      }
    }
  }
}
