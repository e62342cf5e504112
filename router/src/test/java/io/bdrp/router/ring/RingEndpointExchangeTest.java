package io.bdrp.router.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.TransportEndpoint;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two routers' ends of a link find each other's rings only through endpoint bytes carried in their
 * ROUTER_HELLOs, with the shared-memory ring standing in for RDMA verbs: real rings in a directory
 * of /dev/shm, real wake sockets. Endpoint bytes are a neighbour's input: malformed or foreign ones
 * are refused, naming why, before any file is opened.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RingEndpointExchangeTest {
  private static final int CAPACITY = 1 << 14;

  /** How long a test waits for a wake-up that must come; a hang fails at the deadline. */
  private static final int WAKE_DEADLINE_MS = 20_000;

  private Path dir;
  private Path elsewhere;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void dirs() throws IOException {
    assertNull(
        SharedRing.unavailable(),
        () -> "the ring library must be built here: " + SharedRing.unavailable());
    String tag = ProcessHandle.current().pid() + "-" + System.nanoTime();
    dir = Files.createDirectory(Path.of("/dev/shm", "bdrp-xtest-" + tag));
    elsewhere = Files.createDirectory(Path.of("/dev/shm", "bdrp-xtest-other-" + tag));
  }

  @AfterEach
  void remove() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
    for (Path d : List.of(dir, elsewhere)) {
      try (Stream<Path> s = Files.list(d)) {
        for (Path p : s.toList()) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(d);
    }
  }

  private RingBackend.LinkEnd end(RingBackend b) throws IOException {
    RingBackend.LinkEnd e = b.open(CAPACITY, CAPACITY / 8);
    open.add(e);
    return e;
  }

  /** {@code end}'s endpoint as the neighbour reads it: in a hello, encoded and decoded. */
  private static byte[] throughAHello(RingBackend b, RingBackend.LinkEnd end) {
    RouterHello h =
        new RouterHello(
                1, 5, 64, BloomParameters.DEFAULT, 0, new byte[0], UdpProtection.NONE, new byte[0])
            .withEndpoints(List.of(new TransportEndpoint(b.transport(), end.endpoint())));
    ByteBuf wire = RouterFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, h);
    try {
      return ((RouterHello) RouterFrameCodec.decode(wire)).endpoint(b.transport());
    } finally {
      wire.release();
    }
  }

  /** Frames {@code from..to} as a batch: each a little-endian length and its bytes. */
  private static ByteBuffer batch(int from, int to) {
    ByteBuffer b = ByteBuffer.allocateDirect(1 << 14).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = from; i < to; i++) {
      byte[] f = ("frame " + i + " " + "x".repeat(i % 97)).getBytes(StandardCharsets.UTF_8);
      b.putInt(f.length).put(f);
    }
    return b.flip();
  }

  private static List<String> frames(ByteBuffer read, int n) {
    List<String> out = new ArrayList<>();
    ByteBuffer b = read.duplicate().order(ByteOrder.LITTLE_ENDIAN).limit(n);
    while (b.hasRemaining()) {
      byte[] f = new byte[b.getInt()];
      b.get(f);
      out.add(new String(f, StandardCharsets.UTF_8));
    }
    return out;
  }

  /** Waits for the writer's wake-up, takes it, and reads everything there. */
  private static List<String> wakeAndRead(RingBackend.Reader r) throws IOException {
    assertTrue(r.awaitWake(WAKE_DEADLINE_MS), "the write woke the sleeping reader");
    r.rearm();
    ByteBuffer in = ByteBuffer.allocateDirect(CAPACITY);
    List<String> got = new ArrayList<>();
    int n;
    while ((n = r.read(in)) > 0) {
      got.addAll(frames(in, n));
    }
    assertEquals(0, n);
    return got;
  }

  @Test
  void endpointsExchangedInHellosCarryFramesBothWaysAndWakeTheSleepingReader() throws Exception {
    ShmRingBackend a = new ShmRingBackend(dir);
    ShmRingBackend b = new ShmRingBackend(dir);
    RingBackend.LinkEnd endA = end(a);
    RingBackend.LinkEnd endB = end(b);
    RingBackend.Writer toB = endA.connect(throughAHello(b, endB));
    RingBackend.Writer toA = endB.connect(throughAHello(a, endA));
    assertEquals(CAPACITY / 4 - 8, toB.maxFrame());

    // Each reader has read everything and sleeps; a write wakes it through its descriptor.
    assertFalse(endB.reader().prepareSleep(0));
    assertFalse(endA.reader().prepareSleep(0));
    int seq = 0;
    List<String> sentToB = new ArrayList<>();
    for (int round = 0; round < 50; round++) {
      ByteBuffer out = batch(seq, seq + 20);
      int written = toB.writeBatch(out, 0, out.remaining());
      assertEquals(out.remaining(), written, "a batch smaller than the ring fits whole");
      sentToB.addAll(frames(out, written));
      seq += 20;
      List<String> got = wakeAndRead(endB.reader());
      assertEquals(sentToB, got);
      sentToB.clear();
      assertFalse(endB.reader().prepareSleep(0), "nothing more came: the reader sleeps again");
    }
    ByteBuffer back = batch(1000, 1003);
    assertEquals(back.remaining(), toA.writeBatch(back, 0, back.remaining()));
    assertEquals(List.of(frames(back, back.remaining()).toArray()), wakeAndRead(endA.reader()));
  }

  @Test
  void aFullRingRefusesAndOverwritesNothing() throws Exception {
    ShmRingBackend a = new ShmRingBackend(dir);
    RingBackend.LinkEnd reader = end(a);
    RingBackend.LinkEnd writer = end(a);
    RingBackend.Writer w = writer.connect(reader.endpoint());
    ByteBuffer one = batch(7, 8);
    int fitted = 0;
    while (w.writeBatch(one, 0, one.remaining()) > 0) {
      fitted++;
    }
    assertTrue(fitted > 0 && fitted * one.remaining() <= CAPACITY, fitted + " frames fitted");
    ByteBuffer in = ByteBuffer.allocateDirect(CAPACITY);
    int total = 0;
    int n;
    while ((n = reader.reader().read(in)) > 0) {
      for (String f : frames(in, n)) {
        assertEquals(frames(one, one.remaining()).get(0), f);
        total++;
      }
    }
    assertEquals(fitted, total);
  }

  private static IOException refusedBy(RingBackend.LinkEnd e, byte[] theirs) {
    return assertThrows(IOException.class, () -> e.connect(theirs));
  }

  private static void refusedNaming(RingBackend.LinkEnd e, byte[] theirs, String why) {
    IOException x = refusedBy(e, theirs);
    assertTrue(
        x.getMessage().contains("endpoint from the neighbour refused")
            && x.getMessage().contains(why),
        () -> "\"" + x.getMessage() + "\" does not say " + why);
  }

  @Test
  void malformedOrForeignShmEndpointsAreRefusedNamingWhy() throws Exception {
    ShmRingBackend a = new ShmRingBackend(dir);
    RingBackend.LinkEnd mine = end(a);
    RingBackend.LinkEnd theirs = end(a);
    Path ring = dir.resolve(ringName(theirs.endpoint()));
    Path wake = ring.resolveSibling(ring.getFileName() + ".wake");

    refusedNaming(mine, new byte[0], "empty");
    refusedNaming(mine, new byte[257], "more than 256");
    byte[] good = theirs.endpoint();
    byte[] v2 = good.clone();
    v2[0] = 2;
    refusedNaming(mine, v2, "version 2");
    refusedNaming(mine, java.util.Arrays.copyOf(good, good.length - 3), "bytes left");
    refusedNaming(mine, java.util.Arrays.copyOf(good, good.length + 1), "after the wake");
    refusedNaming(mine, new byte[] {1, 0, 2, (byte) 0xc3, 0x28, 0, 1, 0x41}, "malformed UTF-8");

    // Paths: only a ring of this backend's naming, directly in its directory, with its own socket.
    refusedNaming(
        mine,
        ShmRingBackend.encode(Path.of("/etc/passwd"), Path.of("/etc/passwd.wake")),
        "outside this router's ring directory");
    refusedNaming(
        mine,
        ShmRingBackend.encode(dir.resolve("../x/" + ring.getFileName()), wake),
        "not an absolute, normalised path");
    refusedNaming(
        mine,
        ShmRingBackend.encode(Path.of(ring.getFileName().toString()), wake),
        "not an absolute, normalised path");
    Path other = elsewhere.resolve(ring.getFileName());
    Files.copy(ring, other);
    refusedNaming(
        mine,
        ShmRingBackend.encode(other, other.resolveSibling(other.getFileName() + ".wake")),
        "outside this router's ring directory");
    Path misnamed = dir.resolve("bdrp-ring-1-2-from-3");
    Files.copy(ring, misnamed);
    refusedNaming(
        mine,
        ShmRingBackend.encode(misnamed, misnamed.resolveSibling("bdrp-ring-1-2-from-3.wake")),
        "not named as this transport names rings");
    refusedNaming(
        mine, ShmRingBackend.encode(ring, dir.resolve("elsewhere.wake")), "is not the ring's");
    Path link = dir.resolve("bdrp-xring-00000000000000aa");
    Files.createSymbolicLink(link, ring);
    refusedNaming(
        mine,
        ShmRingBackend.encode(link, link.resolveSibling(link.getFileName() + ".wake")),
        "not a regular file");
    Path missing = dir.resolve("bdrp-xring-00000000000000bb");
    refusedNaming(
        mine,
        ShmRingBackend.encode(missing, missing.resolveSibling(missing.getFileName() + ".wake")),
        "not a regular file");
    refusedNaming(mine, mine.endpoint(), "this router's own ring");

    // After every refusal the end still connects with good bytes.
    RingBackend.Writer w = mine.connect(good);
    ByteBuffer out = batch(1, 2);
    assertEquals(out.remaining(), w.writeBatch(out, 0, out.remaining()));
    assertThrows(IllegalStateException.class, () -> mine.connect(good));
  }

  @Test
  void aRingInAnotherDirectoryIsRefusedThoughWellFormed() throws Exception {
    RingBackend.LinkEnd there = end(new ShmRingBackend(elsewhere));
    RingBackend.LinkEnd here = end(new ShmRingBackend(dir));
    refusedNaming(here, there.endpoint(), "outside this router's ring directory " + dir);
  }

  /** The ring file's name in an shm endpoint. */
  private static String ringName(byte[] endpoint) {
    ByteBuffer b = ByteBuffer.wrap(endpoint);
    b.get();
    byte[] p = new byte[b.getShort()];
    b.get(p);
    return Path.of(new String(p, StandardCharsets.UTF_8)).getFileName().toString();
  }

  @Test
  void aClosedEndIsRefusedNotDereferenced() throws Exception {
    ShmRingBackend a = new ShmRingBackend(dir);
    RingBackend.LinkEnd r = a.open(CAPACITY, CAPACITY / 8);
    RingBackend.LinkEnd w = end(a);
    RingBackend.Writer out = w.connect(r.endpoint());
    Path ring = dir.resolve(ringName(r.endpoint()));
    r.close();
    assertFalse(Files.exists(ring), "closing the reader's end removes its ring");
    assertThrows(IllegalStateException.class, () -> r.reader().wakeFd());
    w.close();
    ByteBuffer b = batch(1, 2);
    assertThrows(IllegalStateException.class, () -> out.writeBatch(b, 0, b.remaining()));
  }
}
