package io.bdrp.router.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared ring through JNI, as the router uses it: a reader's end made in a file in /dev/shm and
 * a writer's end mapping it. The C property test ({@code sidecar/src/test/c/ring_test.c}, run
 * first) covers the ring's edges exhaustively; here the same properties hold across the JNI glue.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SharedRingTest {
  private Path file;

  @BeforeEach
  void file() {
    assertNull(
        SharedRing.unavailable(),
        () -> "the ring library must be built here: " + SharedRing.unavailable());
    file =
        Path.of(
            "/dev/shm",
            "bdrp-ring-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
  }

  @AfterEach
  void remove() throws IOException {
    Files.deleteIfExists(file);
  }

  /** The C property tests of the ring, built with the sidecar: every property line and exit 0. */
  @Test
  void theRingsCPropertyTestsPass() throws Exception {
    Path binary = Path.of("../sidecar/target/native-build/ring_test");
    assertTrue(Files.isExecutable(binary), binary + " is built with the sidecar");
    Process p = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(100, TimeUnit.SECONDS), "ring_test finished");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("all ring properties hold"), out);
  }

  private static ByteBuffer frame(long seq, int len) {
    ByteBuffer b = ByteBuffer.allocateDirect(Math.max(len, 1));
    for (int i = 0; i < len; i++) {
      b.put(i, (byte) (seq * 31 + i));
    }
    return b;
  }

  private static void check(ByteBuffer read, int at, long seq, int len) {
    int got = read.order(ByteOrder.LITTLE_ENDIAN).getInt(at);
    assertEquals(len, got, "length of frame " + seq);
    for (int i = 0; i < len; i++) {
      if (read.get(at + 4 + i) != (byte) (seq * 31 + i)) {
        throw new AssertionError("frame " + seq + ": byte " + i + " differs");
      }
    }
  }

  @Test
  void framesOfRandomSizesArriveInOrderAndAFullRingRefusesWithoutOverwriting() throws Exception {
    try (SharedRing reader = SharedRing.create(file, 1 << 14, 1 << 11);
        SharedRing writer = SharedRing.open(file)) {
      SplittableRandom rnd = new SplittableRandom(5);
      ByteBuffer in = ByteBuffer.allocateDirect(1 << 14);
      ArrayDeque<long[]> queued = new ArrayDeque<>(); // seq, length
      long seq = 0;
      int refused = 0;
      int max = writer.maxFrame();
      assertEquals((1 << 14) / 4 - 8, max);
      for (int step = 0; step < 20_000; step++) {
        if (rnd.nextInt(3) > 0) {
          int len = rnd.nextInt(4) == 0 ? max - rnd.nextInt(8) : rnd.nextInt(600);
          if (writer.write(frame(seq, len), 0, len)) {
            queued.add(new long[] {seq, len});
            seq++;
          } else {
            refused++;
          }
        } else {
          int n = reader.read(in);
          int at = 0;
          while (at < n) {
            long[] want = queued.poll();
            assertTrue(want != null, "a frame nobody wrote");
            check(in, at, want[0], (int) want[1]);
            at += 4 + (int) want[1];
          }
        }
      }
      int n;
      while ((n = reader.read(in)) > 0) {
        int at = 0;
        while (at < n) {
          long[] want = queued.poll();
          check(in, at, want[0], (int) want[1]);
          at += 4 + (int) want[1];
        }
      }
      assertTrue(queued.isEmpty(), queued.size() + " frames never read");
      assertTrue(refused > 0, "the ring filled up at some point");
      assertEquals(refused, writer.counters().full(), "every refusal counted");
      assertEquals(seq, reader.counters().frames(), "frames read");
      ByteBuffer big = ByteBuffer.allocateDirect(max + 1);
      assertThrows(IllegalArgumentException.class, () -> writer.write(big, 0, max + 1));
    }
  }

  @Test
  void aSleepingReaderIsWokenByTheWriterAndShutdownReleasesIt() throws Exception {
    try (SharedRing reader = SharedRing.create(file, 1 << 12, 0);
        SharedRing writer = SharedRing.open(file)) {
      AtomicReference<Boolean> woke = new AtomicReference<>();
      Thread t = new Thread(() -> woke.set(reader.await(0, TimeUnit.SECONDS.toNanos(30))));
      t.start();
      // Write once the reader says it sleeps: the write must wake it.
      while (!writer.counters().readerSleeping()) {
        Thread.onSpinWait();
      }
      ByteBuffer one = ByteBuffer.allocateDirect(8);
      assertTrue(writer.write(one, 0, 8));
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertEquals(Boolean.TRUE, woke.get(), "the write woke the reader");
      assertEquals(1, writer.counters().wakes(), "the writer woke the sleeping reader");
      assertEquals(12, reader.read(ByteBuffer.allocateDirect(64)), "one 8-byte frame");

      Thread u = new Thread(() -> woke.set(reader.await(0, TimeUnit.SECONDS.toNanos(30))));
      u.start();
      while (!writer.counters().readerSleeping()) {
        Thread.onSpinWait();
      }
      reader.shutdown();
      u.join(TimeUnit.SECONDS.toMillis(30));
      assertFalse(u.isAlive(), "shutdown released the waiting reader");
      assertEquals(Boolean.FALSE, woke.get(), "nothing was there");
      // A writer waiting for room in a ring its reader closed is told so.
      ByteBuffer big = ByteBuffer.allocateDirect(writer.maxFrame());
      while (writer.write(big, 0, big.capacity())) {}
      assertThrows(IOException.class, () -> writer.writeWait(big, 0, big.capacity(), -1), "closed");
    }
  }

  @Test
  void aWriterInAnotherThreadStreamsThroughASmallRingIntact() throws Exception {
    try (SharedRing reader = SharedRing.create(file, 1 << 12, 256);
        SharedRing writer = SharedRing.open(file)) {
      int frames = 100_000;
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread w =
          new Thread(
              () -> {
                try {
                  SplittableRandom rnd = new SplittableRandom(9);
                  for (long s = 0; s < frames; s++) {
                    int len = rnd.nextInt(300);
                    ByteBuffer b = frame(s, len);
                    assertTrue(writer.writeWait(b, 0, len, TimeUnit.SECONDS.toNanos(30)));
                  }
                } catch (Throwable e) {
                  failed.set(e);
                }
              });
      w.start();
      SplittableRandom rnd = new SplittableRandom(9);
      ByteBuffer in = ByteBuffer.allocateDirect(1 << 12);
      long s = 0;
      while (s < frames) {
        int n = reader.read(in);
        if (n == 0) {
          assertTrue(
              reader.await(TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.SECONDS.toNanos(30)),
              "stalled at " + s);
          continue;
        }
        for (int at = 0; at < n; s++) {
          int len = rnd.nextInt(300);
          check(in, at, s, len);
          at += 4 + len;
        }
      }
      w.join();
      assertNull(failed.get());
      assertEquals(0, reader.read(in), "nothing more than was written");
    }
  }

  /**
   * A writer maps only a ring file its reader made: not a link to one, not another kind of file.
   */
  @Test
  void aWriterRefusesALinkOrAFileThatIsNotARegularOne() throws Exception {
    Path link = Path.of(file + ".link");
    try (SharedRing reader = SharedRing.create(file, 1 << 14, 1 << 11)) {
      assertTrue(reader.reader());
      Files.createSymbolicLink(link, file);
      IOException e = assertThrows(IOException.class, () -> SharedRing.open(link));
      assertTrue(e.getMessage().contains("opening ring " + link), e.getMessage());
      assertThrows(IOException.class, () -> SharedRing.open(Path.of("/dev/zero")));
    } finally {
      Files.deleteIfExists(link);
    }
  }
}
