package io.bdrp.router.links.shm;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.links.DataPath;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.ring.SharedRing;
import io.bdrp.transport.DataHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollDomainDatagramChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DATA through shared memory, for neighbours on the same host whose link is {@code transport: shm}:
 * each router makes, at start, one ring per such neighbour in {@code /dev/shm}, named by its own
 * number and epoch and the neighbour's number ({@code bdrp-ring-R-EPOCH-from-N}), with a Unix
 * datagram socket beside it ({@code ….wake}) that its event loop listens on. The neighbour, once
 * their TCP session is up and its hello has given this router's epoch, maps that file, writes its
 * DATA frames into it, and sends one datagram to the socket when the reader has said it sleeps.
 * Nothing goes on the wire to set it up, so a neighbour that is elsewhere, or not configured for
 * shm, does not find the file (WARN; its DATA goes over TCP).
 *
 * <p>The reader is the router's event loop itself, as for a socket: woken by the datagram, it reads
 * the ring in batches and hands each DATA frame to the data plane; when the ring runs empty it
 * looks once more after the loop's other work (its flushes among them), polls briefly, then
 * publishes its position and says it sleeps. No thread of its own, no hand-over. A batch is a
 * pooled buffer, released once delivered (forwarded copies that keep a slice of it keep it); a ring
 * with more to read yields to the other channels between batches.
 *
 * <p>Each ring frame is one DATA frame laid out as on TCP. A full ring drops the copy and counts it
 * like a full TCP output buffer does; a frame larger than a quarter of the ring goes over TCP.
 * Control stays on TCP, and so does the link's life: DATA read from a ring is taken only while the
 * neighbour's session is up, and a neighbour whose process ends loses its session (and the link) as
 * over TCP.
 *
 * <p>Owned by the router's event loop, but for {@link #start} and {@link #close}.
 */
public final class ShmLinks implements DataTransport {
  private static final Logger log = LoggerFactory.getLogger(ShmLinks.class);

  /** Where rings are made: shared memory on Linux. */
  static final Path DIRECTORY = Path.of("/dev/shm");

  private final RouterCore core;
  private final RouterConfig config;
  private final List<ShmReader> readers = new ArrayList<>();
  private boolean available;

  private final DataTransport.Receiver receiver;

  /** Where a DATA frame for a ring is laid out before it is copied into the ring. */
  private ByteBuf staging;

  private final java.util.function.IntFunction<Link> links;

  public ShmLinks(
      RouterCore core,
      java.util.function.IntFunction<Link> links,
      DataTransport.Receiver receiver) {
    this.core = core;
    this.links = links;
    this.receiver = receiver;
    this.config = core.config();
  }

  /**
   * The file of the ring that router {@code reader} (of {@code epoch}) reads from {@code writer}.
   */
  static Path path(int reader, long epoch, int writer) {
    return DIRECTORY.resolve("bdrp-ring-" + reader + "-" + epoch + "-from-" + writer);
  }

  /** The reader's wake socket beside the ring file {@code ring}. */
  static Path wakePath(Path ring) {
    return ring.resolveSibling(ring.getFileName() + ".wake");
  }

  /**
   * Makes the rings of this router's shm neighbours and binds their wake sockets; before the router
   * port opens, so that a neighbour finds them once their session is up. Rings left by an earlier
   * run of this router number (another epoch, a process that was killed) are removed.
   */
  @Override
  public String name() {
    return "shm";
  }

  @Override
  public void start() throws InterruptedException {
    if (!config.usesShm()) {
      return;
    }
    Throwable why = SharedRing.unavailable();
    if (why == null && !core.epoll()) {
      why = new UnsupportedOperationException("the router runs without epoll (Linux)");
    }
    if (why != null) {
      log.warn(
          "router {}: neighbours with transport shm get their DATA over TCP: {}",
          config.router(),
          why.getMessage());
      return;
    }
    removeStale();
    RouterLimits limits = config.limits();
    for (RouterConfig.Neighbour n : config.neighbours()) {
      if (n.transport() != RouterConfig.LinkTransport.SHM) {
        continue;
      }
      Path p = path(config.router(), config.epoch(), n.router());
      try {
        Files.deleteIfExists(p);
        Files.deleteIfExists(wakePath(p));
        SharedRing ring = SharedRing.create(p, limits.ringBytes(), limits.ringWatermarkBytes());
        ShmReader r = new ShmReader(n.router(), ring, core, links, receiver);
        readers.add(r);
        var f =
            new Bootstrap()
                .group(core.loop())
                .channel(EpollDomainDatagramChannel.class)
                .handler(r)
                .bind(new DomainSocketAddress(wakePath(p).toFile()))
                .await();
        if (!f.isSuccess()) {
          throw new IOException("cannot bind " + wakePath(p) + ": " + f.cause().getMessage());
        }
        r.wake = f.channel();
        core.track(r.wake);
        core.loop().execute(r::drain); // reads what is there, then says it sleeps
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
        if (!name.startsWith(mine) && name.matches("bdrp-ring-\\d+-\\d+-from-\\d+(\\.wake)?")) {
          Files.deleteIfExists(p);
          log.info("router {}: removed {}, left by an earlier run", config.router(), p);
        }
      }
    } catch (IOException e) {
      log.debug("router {}: cannot list {}: {}", config.router(), DIRECTORY, e.toString());
    }
  }

  /**
   * The session of {@code l} is up: its DATA goes into its ring if configured so and found. The
   * ring's file is mapped on the links' control thread (file I/O stays off the loop); DATA goes
   * over TCP until it is.
   */
  @Override
  public DataPath linkUp(Link l, DataTransport.Peer peer) {
    linkDown(l);
    if (l.config.transport() != RouterConfig.LinkTransport.SHM || !available) {
      return null;
    }
    Path p = path(l.neighbour(), l.peerEpoch, config.router());
    Channel session = l.session;
    try {
      core.linkControl().execute(() -> map(l, session, p));
    } catch (java.util.concurrent.RejectedExecutionException stopping) {
      // The router is stopping.
    }
    return null;
  }

  /** Maps {@code l}'s ring (on the links' control thread), then makes it the link's path. */
  private void map(Link l, Channel session, Path p) {
    SharedRing opened = null;
    try {
      opened = SharedRing.open(p);
      opened.wakeBySocket(wakePath(p));
    } catch (IOException e) {
      if (opened != null) {
        opened.close();
      }
      log.warn(
          "router {}: link to router {} is configured for shm, but its ring cannot be used ({});"
              + " DATA goes over TCP (shm needs the neighbour on this host, with transport shm for"
              + " this router)",
          config.router(),
          l.neighbour(),
          e.getMessage());
      return;
    }
    SharedRing ring = opened;
    try {
      core.loop()
          .execute(
              () -> {
                if (l.session == session && session != null && session.isActive()) {
                  l.path = new RingPath(ring);
                  log.info(
                      "router {}: DATA to router {} over {}",
                      config.router(),
                      l.neighbour(),
                      l.path.describe());
                } else {
                  ring.close(); // the session ended meanwhile
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException stopping) {
      ring.close();
    }
  }

  /** The session of {@code l} is gone: no more DATA into its ring until it is back. */
  @Override
  public void linkDown(Link l) {
    if (l.path instanceof RingPath r) {
      r.ring.close();
    }
  }

  /** A link's DATA written into the ring its neighbour reads. */
  public final class RingPath implements DataPath {
    public final SharedRing ring;

    RingPath(SharedRing ring) {
      this.ring = ring;
    }

    @Override
    public Outcome send(
        int hopLimit, int source, long messageId, long[] d, int layout, MessageBytes message) {
      int max = ring.maxFrame();
      if (DataHeader.frameLength(layout, 0) + message.length > max) {
        return Outcome.TOO_LARGE;
      }
      if (staging == null || staging.capacity() < max) {
        staging = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(max));
      }
      ByteBuf b = staging.clear();
      DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, layout, message.length);
      message.writeTo(b);
      boolean fit;
      if (b.hasMemoryAddress()) {
        fit = ring.writeAddress(b.memoryAddress() + b.readerIndex(), b.readableBytes());
      } else {
        ByteBuffer nio = b.nioBuffer();
        fit = ring.write(nio, nio.position(), nio.remaining());
      }
      return fit ? Outcome.SENT : Outcome.FULL;
    }

    @Override
    public RouterConfig.LinkTransport transport() {
      return RouterConfig.LinkTransport.SHM;
    }

    @Override
    public String describe() {
      return "a shared-memory ring";
    }
  }

  /** Closes the wake sockets and the rings and removes their files. */
  @Override
  public void close() {
    if (readers.isEmpty()) {
      return;
    }
    Runnable closing =
        () -> {
          for (ShmReader r : readers) {
            r.closed = true;
            if (r.wake != null) {
              r.wake.close();
            }
            r.ring.shutdown();
            r.ring.close();
            try {
              Files.deleteIfExists(r.ring.path());
              Files.deleteIfExists(wakePath(r.ring.path()));
            } catch (IOException e) {
              log.debug("router {}: cannot remove {}: {}", config.router(), r.ring.path(), e);
            }
          }
          readers.clear();
        };
    if (core.loop().inEventLoop()) {
      closing.run();
    } else if (!core.loop().isShuttingDown()) {
      core.loop().submit(closing).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }

  /**
   * The counters of the ring read from neighbour {@code n}, or null if there is none (on the
   * router's loop, which owns the reader).
   */
  public SharedRing.Counters inbound(int n) {
    for (ShmReader r : readers) {
      if (r.neighbour == n && !r.closed) {
        return r.ring.counters();
      }
    }
    return null;
  }
}
