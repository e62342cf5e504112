package io.bdrp.router.links.rdma;

import io.bdrp.router.MessageBytes;
import io.bdrp.router.RouterCore;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.DataPath;
import io.bdrp.router.links.DataTransport;
import io.bdrp.router.links.Link;
import io.bdrp.router.ring.RdmaNative;
import io.bdrp.router.ring.RingBackend;
import io.bdrp.router.ring.ShmRingBackend;
import io.bdrp.router.ring.VerbsRingBackend;
import io.bdrp.transport.DataHeader;
import io.bdrp.transport.TransportEndpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DATA written with RDMA into a ring in the neighbour's memory, for links configured {@code
 * transport: rdma}: the endpoints of the rings (queue pairs, addresses, keys) are exchanged in the
 * two routers' hellos ({@link #endpoint}), each router reads its own ring and writes into the
 * neighbour's ({@link RingBackend}).
 *
 * <p>For each rdma neighbour the transport keeps one open end ({@link RingBackend.LinkEnd}), made
 * at start and after every session on the links' control thread: its endpoint goes in the hello
 * this router sends on the link's next session; when the session is up, the end is connected with
 * the neighbour's endpoint from its hello, on the control thread too, and the link's DATA goes into
 * the neighbour's ring from then on (over TCP until then, and for good when the neighbour gave no
 * endpoint or the connection failed: WARN). A reader thread per end waits on the ring's wake
 * descriptor and hands batches of frames to the loop. Nothing on the loop touches a device or a
 * file.
 *
 * <p>The backend is RDMA verbs ({@link VerbsRingBackend}), which needs an RDMA device; the
 * shared-memory ring stands in for it on one host when the JVM runs with {@code
 * -Dbdrp.rdma.backend=shm} ({@link ShmRingBackend}): the same exchange and data path, so that a
 * federation's rdma links can be tried where there is no device. Both ends of a link need the same
 * backend; the endpoint goes in the hello under the backend's name ({@code rdma}, {@code shm}).
 *
 * <p>Owned by the router's event loop, but for {@link #start}, {@link #close} and the reader
 * threads.
 */
public final class RdmaLinks implements DataTransport {
  private static final Logger log = LoggerFactory.getLogger(RdmaLinks.class);

  /** The system property that chooses the backend: {@code verbs} (the default) or {@code shm}. */
  public static final String BACKEND_PROPERTY = "bdrp.rdma.backend";

  private final RouterCore core;
  private final RouterConfig config;
  private final DataTransport.Receiver receiver;
  private final java.util.function.IntFunction<Link> links;
  private final RingBackend backend;
  private final String unavailable; // why rdma links cannot run here, or null

  /** The end each rdma neighbour's next session uses, by neighbour (on the loop). */
  private final Map<Integer, RdmaEnd> next = new HashMap<>();

  /** The end in use by each neighbour's current session (on the loop). */
  private final Map<Integer, RdmaEnd> current = new HashMap<>();

  /** Where a DATA frame is laid out, length first, before it is written. */
  private ByteBuf staging;

  public RdmaLinks(
      RouterCore core,
      java.util.function.IntFunction<Link> links,
      DataTransport.Receiver receiver) {
    this.core = core;
    this.config = core.config();
    this.links = links;
    this.receiver = receiver;
    String choice = System.getProperty(BACKEND_PROPERTY, "verbs");
    if (choice.equals("shm")) {
      this.backend = new ShmRingBackend(Path.of("/dev/shm"));
      this.unavailable =
          io.bdrp.router.ring.SharedRing.unavailable() == null
              ? null
              : io.bdrp.router.ring.SharedRing.unavailable().getMessage();
    } else {
      this.backend = new VerbsRingBackend(null);
      this.unavailable =
          choice.equals("verbs")
              ? RdmaNative.whyNot()
              : BACKEND_PROPERTY + " is '" + choice + "'; it may be verbs or shm";
    }
  }

  @Override
  public String name() {
    return "rdma";
  }

  /** Opens an end for each rdma neighbour: before the router port opens. */
  @Override
  public void start() {
    for (RouterConfig.Neighbour n : config.neighbours()) {
      if (n.transport() != RouterConfig.LinkTransport.RDMA) {
        continue;
      }
      if (unavailable != null) {
        log.warn(
            "router {}: link to router {} is configured for rdma; DATA goes over TCP: {}",
            config.router(),
            n.router(),
            unavailable);
        continue;
      }
      RdmaEnd end = open(n.router());
      if (end != null) {
        next.put(n.router(), end);
      }
    }
  }

  /** A new end for neighbour {@code n}'s next session, or null (WARN) if none can be made. */
  private RdmaEnd open(int n) {
    try {
      RingBackend.LinkEnd end =
          backend.open(config.limits().ringBytes(), config.limits().ringWatermarkBytes());
      RdmaEnd e = new RdmaEnd(n, end);
      e.startReading();
      return e;
    } catch (IOException | RuntimeException e) {
      log.warn(
          "router {}: cannot open an {} ring for router {}; its DATA goes over TCP: {}",
          config.router(),
          backend.transport(),
          n,
          e.getMessage());
      return null;
    }
  }

  @Override
  public TransportEndpoint endpoint(Link l) {
    RdmaEnd e = next.get(l.neighbour());
    return e == null ? null : new TransportEndpoint(backend.transport(), e.end.endpoint());
  }

  /**
   * {@code l}'s session is up: the end whose endpoint this router sent is connected with the
   * neighbour's on the control thread; DATA goes over TCP until it is.
   */
  @Override
  public DataPath linkUp(Link l, Peer peer) {
    linkDown(l);
    RdmaEnd e = next.remove(l.neighbour());
    if (e == null) {
      if (l.config.transport() == RouterConfig.LinkTransport.RDMA && unavailable == null) {
        // Its end is still being made after the previous session (sessions that replaced each
        // other quickly): this session's hello went without an endpoint.
        log.warn(
            "router {}: no rdma ring was ready for this session with router {}; its DATA goes over"
                + " TCP until the next session",
            config.router(),
            l.neighbour());
      }
      return null;
    }
    current.put(l.neighbour(), e);
    byte[] theirs = peer.hello().endpoint(backend.transport());
    if (theirs == null) {
      log.warn(
          "router {}: link to router {} is configured for rdma, but its hello has no {} endpoint"
              + " (is it configured for rdma, with the same backend?); DATA goes over TCP",
          config.router(),
          l.neighbour(),
          backend.transport());
      return null;
    }
    Channel session = l.session;
    try {
      core.linkControl()
          .execute(
              () -> {
                RingBackend.Writer w;
                try {
                  w = e.end.connect(theirs);
                } catch (IOException | RuntimeException x) {
                  log.warn(
                      "router {}: cannot connect the rdma ring of router {}; DATA goes over TCP:"
                          + " {}",
                      config.router(),
                      l.neighbour(),
                      x.getMessage());
                  return;
                }
                onLoop(
                    () -> {
                      if (l.session == session && current.get(l.neighbour()) == e) {
                        l.path = new RdmaPath(w);
                        log.info(
                            "router {}: DATA to router {} over {}",
                            config.router(),
                            l.neighbour(),
                            l.path.describe());
                      }
                    });
              });
    } catch (RejectedExecutionException stopping) {
      // The router is stopping.
    }
    return null;
  }

  /** {@code l}'s session is gone: its end is closed and a new one opened for the next session. */
  @Override
  public void linkDown(Link l) {
    RdmaEnd e = current.remove(l.neighbour());
    if (e == null) {
      return;
    }
    int n = l.neighbour();
    try {
      core.linkControl()
          .execute(
              () -> {
                e.close();
                RdmaEnd fresh = core.closed() ? null : open(n);
                if (fresh != null) {
                  onLoop(
                      () -> {
                        if (core.closed() || next.putIfAbsent(n, fresh) != null) {
                          fresh.close();
                        }
                      });
                }
              });
    } catch (RejectedExecutionException stopping) {
      e.close();
    }
  }

  private void onLoop(Runnable task) {
    try {
      core.loop().execute(task);
    } catch (RejectedExecutionException stopping) {
      // The router has stopped.
    }
  }

  @Override
  public void close() {
    Runnable closing =
        () -> {
          next.values().forEach(RdmaEnd::close);
          current.values().forEach(RdmaEnd::close);
          next.clear();
          current.clear();
        };
    if (core.loop().inEventLoop()) {
      closing.run();
    } else if (!core.loop().isShuttingDown()) {
      core.loop().submit(closing).awaitUninterruptibly(5, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  /** A link's DATA written into the neighbour's ring. */
  private final class RdmaPath implements DataPath {
    private final RingBackend.Writer writer;

    RdmaPath(RingBackend.Writer writer) {
      this.writer = writer;
    }

    @Override
    public Outcome send(
        int hopLimit, int source, long messageId, long[] d, int layout, MessageBytes message) {
      int length = DataHeader.frameLength(layout, 0) + message.length;
      if (length > writer.maxFrame()) {
        return Outcome.TOO_LARGE;
      }
      if (staging == null || staging.capacity() < 4 + length) {
        staging = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(4 + writer.maxFrame()));
      }
      ByteBuf b = staging.clear();
      b.writeIntLE(length);
      DataHeader.writeHeader(b, hopLimit, d == null, source, messageId, d, layout, message.length);
      message.writeTo(b);
      try {
        int written =
            b.hasMemoryAddress()
                ? writer.writeBatch(b.memoryAddress(), b.readableBytes())
                : writer.writeBatch(b.nioBuffer(0, b.capacity()), 0, b.readableBytes());
        if (written == 0) {
          return Outcome.FULL;
        }
        core.metrics().rdmaFrames("sent").inc();
        return Outcome.SENT;
      } catch (IOException | IllegalStateException e) {
        core.metrics().rdmaFrames("failed").inc();
        return Outcome.FULL;
      }
    }

    @Override
    public RouterConfig.LinkTransport transport() {
      return RouterConfig.LinkTransport.RDMA;
    }

    @Override
    public String describe() {
      return "an RDMA ring (" + backend.transport() + ")";
    }
  }

  /** One end and the thread that reads its ring. */
  private final class RdmaEnd {
    final int neighbour;
    final RingBackend.LinkEnd end;
    private final RingReader reader;

    RdmaEnd(int neighbour, RingBackend.LinkEnd end) {
      this.neighbour = neighbour;
      this.end = end;
      this.reader =
          new RingReader(
              end.reader(),
              "bdrp-rdma-" + config.router() + "-from-" + neighbour,
              core.loop(),
              this::deliver,
              e -> {
                core.metrics().malformedData("rdma").inc();
                log.warn(
                    "router {}: the rdma ring from router {} cannot be read ({}); its DATA is no"
                        + " longer read",
                    config.router(),
                    neighbour,
                    e.getMessage());
              });
    }

    void startReading() {
      reader.start();
    }

    /** Every frame of a batch, while the neighbour's session is up (on the loop). */
    private void deliver(ByteBuf batch) {
      Link link = links.apply(neighbour);
      boolean up =
          link != null
              && link.session != null
              && link.session.isActive()
              && current.get(neighbour) == this;
      while (batch.readableBytes() >= 4) {
        ByteBuf frame = batch.readSlice(batch.readIntLE());
        if (up) {
          core.metrics().rdmaFrames("received").inc();
          receiver.receive(link, frame, "rdma");
        } else {
          core.metrics().ringDropped("no_session").inc();
        }
      }
    }

    void close() {
      reader.stop();
      end.close();
    }
  }
}
