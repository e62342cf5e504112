package io.bdrp.router.ring;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The shared-memory ring ({@link SharedRing}) behind the {@link RingBackend} seam: it stands in for
 * RDMA verbs on one host, so that the endpoint exchange and the data path can be tested end to end
 * where there is no RDMA device, with real rings. The writer finds the neighbour's ring only
 * through the endpoint bytes, never by a name both sides derive.
 *
 * <p>{@link #open} makes a ring in a new file of the configured directory, named at random ({@code
 * bdrp-xring-} and 16 hex digits), and binds a Unix datagram socket beside it ({@code ….wake}) that
 * a writer sends a datagram to when the reader has said it sleeps; the socket's descriptor is the
 * reader's {@link Reader#wakeFd}. The endpoint, at most {@value #MAX_ENDPOINT_BYTES} bytes:
 *
 * <pre>
 *   | version u8 (1) | ringLen u16 | ring path (UTF-8) | wakeLen u16 | wake path (UTF-8) |
 * </pre>
 *
 * <p>Endpoint bytes come from a neighbour: {@link LinkEnd#connect} maps a file only if the bytes
 * are well formed, name a ring file of this backend's pattern directly in the directory this
 * backend was configured with (the same on both routers: a host's shared-memory directory), with
 * its wake socket beside it, that is a regular file (not a link) owned by the user this router runs
 * as. Anything else is refused with an {@link IOException} that says why, before any file is
 * opened; and the ring library itself refuses a link or a file that is not a regular one of this
 * user when it opens it, so a file swapped in after the check is refused too.
 *
 * <p>Thread-safe only as {@link RingBackend} says: each end by one thread.
 */
public final class ShmRingBackend implements RingBackend {
  /** Largest endpoint this backend makes or accepts. */
  public static final int MAX_ENDPOINT_BYTES = 256;

  /** The endpoint layout's version. */
  static final int VERSION = 1;

  /** Longest path of a Unix socket (sun_path less its terminating NUL). */
  private static final int MAX_SOCKET_PATH_BYTES = 107;

  private static final Pattern NAME = Pattern.compile("bdrp-xring-[0-9a-f]{16}");

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path directory;

  /**
   * Rings in {@code directory} (on Linux, {@code /dev/shm}); a neighbour's endpoint is accepted
   * only if it names a ring there.
   */
  public ShmRingBackend(Path directory) {
    this.directory = directory.toAbsolutePath().normalize();
  }

  /** The directory of the rings. */
  public Path directory() {
    return directory;
  }

  @Override
  public String transport() {
    return "shm";
  }

  @Override
  public LinkEnd open(int capacity, int watermark) throws IOException {
    if (SharedRing.unavailable() != null) {
      throw new IOException(
          "shared-memory rings are not available: " + SharedRing.unavailable().getMessage(),
          SharedRing.unavailable());
    }
    Path ring = directory.resolve("bdrp-xring-" + HexFormat.of().toHexDigits(RANDOM.nextLong()));
    Path wake = wakePath(ring);
    if (utf8(ring).length + utf8(wake).length + 5 > MAX_ENDPOINT_BYTES
        || utf8(wake).length > MAX_SOCKET_PATH_BYTES) {
      throw new IOException(
          "ring directory " + directory + " is too long a path for an endpoint or a socket");
    }
    SharedRing reader = SharedRing.create(ring, capacity, watermark);
    int fd;
    try {
      fd = RingNative.bindWake(wake.toString());
    } catch (IOException e) {
      reader.close();
      Files.deleteIfExists(ring);
      throw e;
    }
    return new End(reader, wake, fd);
  }

  private static Path wakePath(Path ring) {
    return ring.resolveSibling(ring.getFileName() + ".wake");
  }

  private static byte[] utf8(Path p) {
    return p.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The endpoint of the ring at {@code ring} with its wake socket {@code wake}. */
  static byte[] encode(Path ring, Path wake) {
    byte[] r = utf8(ring);
    byte[] w = utf8(wake);
    ByteBuffer b = ByteBuffer.allocate(1 + 2 + r.length + 2 + w.length);
    b.put((byte) VERSION).putShort((short) r.length).put(r).putShort((short) w.length).put(w);
    return b.array();
  }

  /**
   * The ring file a neighbour's endpoint names, checked as the class comment says; it must belong
   * to {@code user}.
   *
   * @throws IOException naming what is wrong
   */
  Path ringOf(byte[] theirs, UserPrincipal user) throws IOException {
    if (theirs.length > MAX_ENDPOINT_BYTES) {
      throw refused(theirs.length + " bytes, more than " + MAX_ENDPOINT_BYTES);
    }
    ByteBuffer b = ByteBuffer.wrap(theirs);
    if (b.remaining() < 1) {
      throw refused("empty");
    }
    int version = b.get() & 0xff;
    if (version != VERSION) {
      throw refused("version " + version + ", this router reads " + VERSION);
    }
    Path ring = path(b, "ring path");
    Path wake = path(b, "wake socket path");
    if (b.hasRemaining()) {
      throw refused(b.remaining() + " bytes after the wake socket path");
    }
    if (!ring.isAbsolute() || !ring.normalize().equals(ring) || ring.getParent() == null) {
      throw refused("ring path " + ring + " is not an absolute, normalised path");
    }
    if (!ring.getParent().equals(directory)) {
      throw refused("ring " + ring + " is outside this router's ring directory " + directory);
    }
    if (!NAME.matcher(ring.getFileName().toString()).matches()) {
      throw refused("ring " + ring + " is not named as this transport names rings");
    }
    if (!wake.equals(wakePath(ring))) {
      throw refused("wake socket " + wake + " is not the ring's, " + wakePath(ring));
    }
    if (!Files.isRegularFile(ring, LinkOption.NOFOLLOW_LINKS)) {
      throw refused("ring " + ring + " is not a regular file (missing, or a link)");
    }
    UserPrincipal owner = Files.getOwner(ring, LinkOption.NOFOLLOW_LINKS);
    if (!owner.equals(user)) {
      throw refused(
          "ring " + ring + " belongs to " + owner.getName() + ", not to " + user.getName());
    }
    return ring;
  }

  /** A u16 length, at most what is left, then that many bytes of strict UTF-8, as a path. */
  private static Path path(ByteBuffer b, String what) throws IOException {
    if (b.remaining() < 2) {
      throw refused("cut short before the " + what + "'s length");
    }
    int n = b.getShort() & 0xffff;
    if (n == 0 || n > b.remaining()) {
      throw refused(what + " of " + n + " bytes, " + b.remaining() + " bytes left");
    }
    String s;
    try {
      s =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(b.slice(b.position(), n))
              .toString();
    } catch (CharacterCodingException e) {
      throw refused("malformed UTF-8 in the " + what);
    }
    b.position(b.position() + n);
    if (s.indexOf('\0') >= 0) {
      throw refused("a NUL in the " + what);
    }
    try {
      return Path.of(s);
    } catch (java.nio.file.InvalidPathException e) {
      throw refused("the " + what + " is not a path: " + e.getMessage());
    }
  }

  private static IOException refused(String why) {
    return new IOException("shm endpoint from the neighbour refused: " + why);
  }

  /** One link's end: this router's ring with its wake socket, and the writer into the other's. */
  private final class End implements LinkEnd {
    private final ShmReader reader;
    private final byte[] endpoint;
    private SharedRing writer;

    End(SharedRing ring, Path wake, int fd) {
      this.reader = new ShmReader(ring, wake, fd);
      this.endpoint = encode(ring.path(), wake);
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
      if (writer != null) {
        throw new IllegalStateException("this end is connected already");
      }
      Path ring = ringOf(theirs, Files.getOwner(reader.ring.path(), LinkOption.NOFOLLOW_LINKS));
      if (ring.equals(reader.ring.path())) {
        throw refused("it names this router's own ring " + ring);
      }
      SharedRing w = SharedRing.open(ring);
      try {
        w.wakeBySocket(wakePath(ring));
      } catch (IOException e) {
        w.close();
        throw e;
      }
      writer = w;
      return new ShmWriter(w);
    }

    @Override
    public void close() {
      if (writer != null) {
        writer.close();
        writer = null;
      }
      reader.close();
    }
  }

  private static final class ShmReader implements Reader {
    final SharedRing ring;
    final Path wake;
    int fd;

    ShmReader(SharedRing ring, Path wake, int fd) {
      this.ring = ring;
      this.wake = wake;
      this.fd = fd;
    }

    @Override
    public int read(long address, int capacity) throws IOException {
      return ring.read(address, capacity);
    }

    @Override
    public int read(ByteBuffer direct) throws IOException {
      return ring.read(direct);
    }

    @Override
    public boolean prepareSleep(int spin) {
      return ring.prepareSleep(spin);
    }

    private int live() {
      if (fd < 0) {
        throw new IllegalStateException("ring " + ring.path() + " is closed");
      }
      return fd;
    }

    @Override
    public int wakeFd() {
      return live();
    }

    @Override
    public void rearm() {
      RingNative.drainWake(live());
    }

    @Override
    public boolean awaitWake(int timeoutMillis) throws IOException {
      return RingNative.awaitReadable(live(), timeoutMillis) == 1;
    }

    void close() {
      if (fd < 0) {
        return;
      }
      RingNative.closeFd(fd);
      fd = -1;
      ring.shutdown();
      ring.close();
      try {
        Files.deleteIfExists(ring.path());
        Files.deleteIfExists(wake);
      } catch (IOException e) {
        // the files go with the directory's cleaning; nothing reads them any more
      }
    }
  }

  private record ShmWriter(SharedRing ring) implements Writer {
    @Override
    public int maxFrame() {
      return ring.maxFrame();
    }

    @Override
    public int writeBatch(long address, int length) {
      return ring.writeBatch(address, length);
    }

    @Override
    public int writeBatch(ByteBuffer direct, int offset, int length) {
      return ring.writeBatch(direct, offset, length);
    }
  }
}
