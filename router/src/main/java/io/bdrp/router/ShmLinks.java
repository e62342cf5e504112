package io.bdrp.router;

import io.bdrp.router.ring.SharedRing;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DATA through shared memory, for neighbours on the same host whose link is {@code transport: shm}:
 * each router makes, at start, one ring per such neighbour in {@code /dev/shm}, named by its own
 * number and epoch and the neighbour's number ({@code bdrp-ring-R-EPOCH-from-N}), and reads it with
 * a thread of its own; the neighbour, once their TCP session is up and its hello has given this
 * router's epoch, maps that file and writes its DATA frames into it. Nothing goes on the wire to
 * set it up, so a neighbour that is elsewhere, or not configured for shm, simply does not find the
 * file (WARN; its DATA goes over TCP).
 *
 * <p>Each ring frame is one DATA frame laid out as on TCP. A full ring drops the copy and counts it
 * like a full TCP output buffer does; a frame larger than a quarter of the ring goes over TCP.
 * Control stays on TCP, and so does the link's life: DATA read from a ring is taken only while the
 * neighbour's session is up, and a neighbour whose process ends loses its session (and the link) as
 * over TCP. The reader hands what it reads to the router's event loop at most two batches ahead, so
 * a loop that falls behind stops the reader, the ring fills, and the writer drops: memory stays
 * bounded.
 *
 * <p>{@link #linkUp}, {@link #linkDown} and {@link #send} run on the router's event loop.
 */
final class ShmLinks {
  private static final Logger log = LoggerFactory.getLogger(ShmLinks.class);

  /** Where rings are made: shared memory on Linux. */
  static final Path DIRECTORY = Path.of("/dev/shm");

  /** Polls of an empty ring before its reader sleeps (a few microseconds). */
  static final int SPIN = 4_000;

  /** How long a sleeping reader waits before it looks whether the router stops. */
  private static final long SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final Router router;
  private final RouterConfig config;
  private final List<Reader> readers = new ArrayList<>();
  private boolean available;

  ShmLinks(Router router) {
    this.router = router;
    this.config = router.config();
  }

  /**
   * The file of the ring that router {@code reader} (of {@code epoch}) reads from {@code writer}.
   */
  static Path path(int reader, long epoch, int writer) {
    return DIRECTORY.resolve("bdrp-ring-" + reader + "-" + epoch + "-from-" + writer);
  }

  /**
   * Makes the rings of this router's shm neighbours and starts their readers; before the router
   * port opens, so that a neighbour finds them once their session is up. Rings left by an earlier
   * run of this router number (another epoch, a process that was killed) are removed.
   */
  void start() {
    if (!config.usesShm()) {
      return;
    }
    Throwable why = SharedRing.unavailable();
    if (why != null) {
      log.warn(
          "router {}: neighbours with transport shm get their DATA over TCP: {}",
          config.router(),
          why.getMessage());
      return;
    }
    removeStale();
    RouterConfig.Limits limits = config.limits();
    for (RouterConfig.Neighbour n : config.neighbours()) {
      if (n.transport() != RouterConfig.LinkTransport.SHM) {
        continue;
      }
      Path p = path(config.router(), config.epoch(), n.router());
      try {
        Files.deleteIfExists(p);
        SharedRing ring = SharedRing.create(p, limits.ringBytes(), limits.ringWatermarkBytes());
        Reader r = new Reader(n.router(), ring);
        readers.add(r);
        r.thread.start();
      } catch (IOException e) {
        throw new IllegalStateException(
            "cannot make the shared-memory ring " + p + " for router " + n.router() + ": " + e, e);
      }
    }
    available = true;
  }

  /** Removes ring files of this router number from other epochs: no process reads them. */
  private void removeStale() {
    String prefix = "bdrp-ring-" + config.router() + "-";
    String mine = prefix + config.epoch() + "-";
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(DIRECTORY, prefix + "*")) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        if (!name.startsWith(mine) && name.matches("bdrp-ring-\\d+-\\d+-from-\\d+")) {
          Files.deleteIfExists(p);
          log.info("router {}: removed {}, left by an earlier run", config.router(), p);
        }
      }
    } catch (IOException e) {
      log.debug("router {}: cannot list {}: {}", config.router(), DIRECTORY, e.toString());
    }
  }

  /** The session of {@code l} is up: its DATA goes into its ring if configured so and found. */
  void linkUp(Link l) {
    linkDown(l);
    if (l.config.transport() != RouterConfig.LinkTransport.SHM || !available) {
      return;
    }
    Path p = path(l.neighbour(), l.peerEpoch, config.router());
    try {
      l.ringOut = SharedRing.open(p);
    } catch (IOException e) {
      log.warn(
          "router {}: link to router {} is configured for shm, but its ring cannot be opened ({});"
              + " DATA goes over TCP (shm needs the neighbour on this host, with transport shm for"
              + " this router)",
          config.router(),
          l.neighbour(),
          e.getMessage());
    }
  }

  /** The session of {@code l} is gone: no more DATA into its ring until it is back. */
  void linkDown(Link l) {
    if (l.ringOut != null) {
      l.ringOut.close();
      l.ringOut = null;
    }
  }

  /** Writes one DATA frame (as on TCP) into {@code l}'s ring: whether it fit. */
  boolean send(Link l, ByteBuf frame) {
    if (frame.hasMemoryAddress()) {
      return l.ringOut.writeAddress(
          frame.memoryAddress() + frame.readerIndex(), frame.readableBytes());
    }
    ByteBuffer nio = frame.nioBuffer();
    return l.ringOut.write(nio, nio.position(), nio.remaining());
  }

  /** Stops the readers, closes the rings and removes their files. */
  void close() {
    for (Reader r : readers) {
      r.stop = true;
      r.ring.shutdown();
    }
    for (Reader r : readers) {
      try {
        r.thread.join(TimeUnit.SECONDS.toMillis(2));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!r.thread.isAlive()) {
        r.ring.close();
      }
      try {
        Files.deleteIfExists(r.ring.path());
      } catch (IOException e) {
        log.debug("router {}: cannot remove {}: {}", config.router(), r.ring.path(), e.toString());
      }
    }
    readers.clear();
  }

  /** The counters of the ring read from neighbour {@code n}, or null if there is none. */
  SharedRing.Counters inbound(int n) {
    for (Reader r : readers) {
      if (r.neighbour == n && !r.stop) {
        return r.counters;
      }
    }
    return null;
  }

  /** Reads one ring and hands its frames to the router's event loop. */
  private final class Reader implements Runnable {
    final int neighbour;
    final SharedRing ring;
    final Thread thread;
    final int capacity;
    final Semaphore ahead = new Semaphore(2);
    volatile boolean stop;
    volatile SharedRing.Counters counters;

    Reader(int neighbour, SharedRing ring) {
      this.neighbour = neighbour;
      this.ring = ring;
      this.capacity = Math.max(256 << 10, ring.maxFrame() + 4);
      this.thread = new Thread(this, "bdrp-ring-" + config.router() + "-from-" + neighbour);
      thread.setDaemon(true);
    }

    @Override
    public void run() {
      try {
        ByteBuf batch = null;
        while (!stop) {
          if (batch == null) {
            batch = PooledByteBufAllocator.DEFAULT.directBuffer(capacity, capacity);
          }
          int n =
              batch.hasMemoryAddress()
                  ? ring.read(batch.memoryAddress(), capacity)
                  : ring.read(batch.internalNioBuffer(0, capacity));
          if (n == 0) {
            counters = ring.counters();
            ring.await(SPIN, SLEEP_NANOS);
            continue;
          }
          counters = ring.counters();
          batch.writerIndex(n);
          ByteBuf full = batch;
          batch = null;
          while (!ahead.tryAcquire(50, TimeUnit.MILLISECONDS)) {
            if (stop) {
              full.release();
              return;
            }
          }
          router
              .loop()
              .execute(
                  () -> {
                    try {
                      deliver(full);
                    } finally {
                      full.release();
                      ahead.release();
                    }
                  });
        }
      } catch (IOException e) {
        log.warn(
            "router {}: the ring from router {} holds what its writer cannot have written ({});"
                + " its DATA is no longer read",
            config.router(),
            neighbour,
            e.getMessage());
        router.loop().execute(() -> router.metrics().malformedData("shm").inc());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        if (!stop) {
          log.warn("router {}: reader of the ring from {} failed", config.router(), neighbour, e);
        }
      }
    }

    /** On the loop: every frame of a batch, while the neighbour's session is up. */
    private void deliver(ByteBuf batch) {
      Link link = router.links().get(neighbour);
      boolean up = link != null && link.session != null && link.session.isActive();
      while (batch.readableBytes() >= 4) {
        int len = batch.readIntLE();
        ByteBuf frame = batch.readSlice(len);
        if (up) {
          router.receiveData(link, frame, "shm");
        } else {
          router.metrics().ringDropped("no_session").inc();
        }
      }
    }
  }
}
