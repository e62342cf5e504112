package io.bdrp.router.links;

import io.bdrp.router.WarnEvery;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.udp.UdpLinks;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.Face;
import io.bdrp.transport.RouterFrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A configured neighbour: its TCP session, which carries control frames and (unless DATA goes by
 * UDP) DATA frames, and where its DATA datagrams go and come from once its hello has announced a
 * UDP port.
 *
 * <p><b>Control share.</b> Control frames and DATA share the session's output buffer. DATA is
 * written only while the buffer is below {@code limits.linkHighWaterBytes} (above it copies are
 * dropped and counted); control frames may occupy at most {@code limits.linkControlPercent} of that
 * mark in it, and wait here, in order, for the part of it they hold to reach the socket. On a link
 * that cannot keep up, control then keeps its share of the bytes the link carries (the buffer
 * drains in order) and DATA at least the rest; on a link with room either takes all of it. What
 * waits here is what the routing module sends while the link drains (paced and coalesced there); a
 * session that closes drops it, and the routing module sends everything again to the next.
 *
 * <p><b>Backlog.</b> Once a share's worth of control frames waits here, the link is {@linkplain
 * #backlogged() backlogged}: the routing module keeps what can wait (advertisements) until it has
 * drained, so a new neighbour's whole table (megabytes) comes a few frames at a time, as fast as
 * the neighbour reads.
 *
 * <p><b>A neighbour that does not read</b> (it may still send hellos, so the link stays alive) is
 * cut as a slow consumer (WARN, {@code
 * bdrp_connections_closed_total{port="routers",reason="slow_consumer"}}), as a client would be:
 * when control frames have waited {@code slowConsumerMs} without one of them reaching the socket
 * ({@link #stalled}, checked every hello interval), or at once when more than {@code
 * maxWaitingBytes} wait.
 *
 * <p><b>Large frames are encoded off the loop.</b> A frame of at least {@value #OFFLOAD_BYTES}
 * bytes (an advertisement of thousands of filters; a new neighbour is sent every one held,
 * megabytes in all) is encoded on the links' control thread as soon as it is queued and written as
 * bytes when its turn comes; the frames behind it wait for it, so the link's order holds.
 *
 * <p>Owned by the router's event loop.
 */
public final class Link implements Face {
  private static final Logger log = LoggerFactory.getLogger(Link.class);

  public final RouterConfig.Neighbour config;
  InetSocketAddress address; // where to dial it, or null to wait for it
  public Channel session; // after the hello exchange; set with attach()
  public long peerEpoch; // the epoch in the hello of the current session

  /**
   * The base URL of the neighbour's admin API as the hello of its live or last session told it (at
   * the address that session came from), or null when that hello told none.
   */
  public String advertisedAdmin;

  long lastReadNanos; // when something last arrived on the session
  boolean dialledByUs;

  /** When dialling it started to fail (System.nanoTime), or 0 while it is reachable. */
  long unreachableSince;

  /** When that was last reported in the log. */
  long unreachableReported;

  /** The neighbour's UDP socket, learnt from its hello: where it takes DATA, and sends it from. */
  public InetSocketAddress udpPeer;

  /**
   * The way DATA to the neighbour goes now besides the TCP session (null: TCP only), made by the
   * link's configured transport when the session came up.
   */
  public DataPath path;

  /**
   * This session's datagram protection (null while no datagrams can flow, or with {@code auth.udp:
   * none}): the keys each way, the sealer of datagrams to the neighbour and the opener of its
   * datagrams with their replay windows, and a number that changes with every session.
   */
  public UdpLinks.Session udp;

  final Metrics.Counter in;
  final Metrics.Counter out;
  final Metrics.Counter dropped;
  final Metrics.Counter controlIn;
  final Metrics.Counter controlOut;
  public final Metrics.Counter controlDeferred;
  final Metrics.Counter controlThrottled;
  final WarnEvery throttledLog = new WarnEvery(); // frames held for the neighbour's control rate

  /**
   * Bytes received from and sent to the neighbour: every byte of the TCP session as it crosses the
   * socket (control, DATA, reliable frames, TLS records; counted by {@link LinkBytes} once per read
   * and per write), plus the DATA frames of a {@link DataPath} (one add per frame). On the loop.
   */
  long bytesIn;

  long bytesOut;

  /**
   * Bytes written to the TCP sessions to the neighbour, all of them, as {@link LinkBytes} counts
   * them (no {@link DataPath} frame): a position in what this router sent the neighbour over TCP
   * that only grows, which {@link LinkOutput#written} and {@link LinkOutput#drained} compare with
   * the session's output queue. On the loop.
   */
  long sessionBytesOut;

  /**
   * Bytes of the DATA frames, of the RELIABLE_DATA frames and of the RELIABLE_ACK frames sent to
   * the neighbour, whole frames as {@link LinkOutput} writes them, whatever transport carries them
   * ({@code bdrp_link_data_bytes_out_total}, {@code bdrp_link_reliable_ack_bytes_out_total}): what
   * the acknowledgements cost against the copies they acknowledge. One add per frame. On the loop.
   */
  long dataBytesOut;

  long reliableDataBytesOut;
  long ackBytesOut;

  /** DATA copies to the neighbour dropped because its session was down. On the loop. */
  long droppedDown;

  /** DATA copies dropped because the session was above its high water mark. On the loop. */
  long droppedHighWater;

  /** DATA copies its {@link DataPath} refused for want of room (a full ring or buffer). */
  long droppedPathFull;

  /** What the last {@link #sample} read, and the rates per second it made of it. */
  private long sampledDataIn;

  private long sampledDataOut;
  private long sampledBytesIn;
  private long sampledBytesOut;
  private final long[] rates = new long[4];

  /** Most bytes of control frames in the session's output buffer at once (at least one frame). */
  private final long controlBudget;

  /** Frames at least this long are encoded on the links' control thread. */
  public static final int OFFLOAD_BYTES = 16 * 1024;

  /**
   * A control frame waiting for room in the control share, with its length; a large one with its
   * bytes once the control thread has encoded them (fields read and written on the loop only).
   */
  private static final class Pending {
    final ControlMessage message;
    final int bytes;
    final boolean offloaded;
    ByteBuf encoded; // an offloaded frame's bytes, once back on the loop
    boolean failed; // its encoding failed: skipped
    boolean dropped; // its session ended first: the bytes are released when they arrive

    Pending(ControlMessage message, int bytes, boolean offloaded) {
      this.message = message;
      this.bytes = bytes;
      this.offloaded = offloaded;
    }

    /** Whether it can be written: not offloaded, or back (encoded or failed). */
    boolean ready() {
      return !offloaded || encoded != null || failed;
    }
  }

  private final Executor encoder; // the links' control thread

  /** Control frames waiting for room in the control share of the session, in order. */
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();

  private long controlInBuffer; // bytes of control frames written to the session, not yet sent
  private long waitingBytes; // bytes of the frames in waiting
  private final long maxWaitingBytes;
  private final Metrics.Counter slowConsumers;
  private boolean drainScheduled;
  private long progressNanos; // when a control frame last reached the socket, or started to wait

  /**
   * @param controlBudget most bytes of control frames in the session's output buffer at once
   * @param maxWaitingBytes most bytes of control frames waiting for the share; more close the
   *     session
   * @param encoder where frames of {@value #OFFLOAD_BYTES} bytes or more are encoded
   */
  public Link(
      RouterConfig.Neighbour config,
      RouterMetrics metrics,
      long controlBudget,
      long maxWaitingBytes,
      Executor encoder) {
    this.config = config;
    this.encoder = encoder;
    this.controlBudget = controlBudget;
    this.maxWaitingBytes = maxWaitingBytes;
    this.slowConsumers = metrics.connectionsClosed("routers", "slow_consumer");
    this.address = config.address();
    String n = Integer.toString(config.router());
    this.in = metrics.linkIn(n);
    this.out = metrics.linkOut(n);
    this.dropped = metrics.linkDropped(n);
    this.controlIn = metrics.linkControl("received", n);
    this.controlOut = metrics.linkControl("sent", n);
    this.controlDeferred = metrics.linkControlDeferred(n);
    this.controlThrottled = metrics.linkControlThrottled(n);
    metrics.linkDataBytes(n, "data", () -> dataBytesOut);
    metrics.linkDataBytes(n, "reliable_data", () -> reliableDataBytesOut);
    metrics.linkAckBytes(n, () -> ackBytesOut);
  }

  @Override
  public int neighbour() {
    return config.router();
  }

  /** Where the router dials the neighbour (configured or given later), or null to wait for it. */
  public InetSocketAddress dialAddress() {
    return address;
  }

  /** DATA frames received from the neighbour ({@code bdrp_link_data_in_total}). */
  public long dataIn() {
    return in.get();
  }

  /** DATA frames sent to the neighbour ({@code bdrp_link_data_out_total}). */
  public long dataOut() {
    return out.get();
  }

  /** DATA frames to the neighbour dropped ({@code bdrp_link_data_dropped_total}). */
  public long dataDropped() {
    return dropped.get();
  }

  /** Control messages received from the neighbour ({@code bdrp_link_control_received_total}). */
  public long controlReceived() {
    return controlIn.get();
  }

  /** Control messages sent to the neighbour ({@code bdrp_link_control_sent_total}). */
  public long controlSent() {
    return controlOut.get();
  }

  /** Bytes received from the neighbour (see {@link #bytesIn}). On the loop. */
  public long bytesIn() {
    return bytesIn;
  }

  /** Bytes sent to the neighbour. On the loop. */
  public long bytesOut() {
    return bytesOut;
  }

  /** Bytes of the DATA frames sent to the neighbour (see {@link #dataBytesOut}). On the loop. */
  public long dataBytesOut() {
    return dataBytesOut;
  }

  /** Bytes of the RELIABLE_DATA frames sent to the neighbour. On the loop. */
  public long reliableDataBytesOut() {
    return reliableDataBytesOut;
  }

  /** Bytes of the RELIABLE_ACK frames sent to the neighbour. On the loop. */
  public long ackBytesOut() {
    return ackBytesOut;
  }

  /** DATA copies dropped because the link was down. On the loop. */
  public long droppedDown() {
    return droppedDown;
  }

  /** DATA copies dropped above the session's high water mark. On the loop. */
  public long droppedHighWater() {
    return droppedHighWater;
  }

  /** DATA copies the link's DATA transport refused for want of room. On the loop. */
  public long droppedPathFull() {
    return droppedPathFull;
  }

  /** Where in {@link #rates()} each rate is: DATA frames in, out, bytes in, out. */
  public static final int RATE_DATA_IN = 0;

  public static final int RATE_DATA_OUT = 1;
  public static final int RATE_BYTES_IN = 2;
  public static final int RATE_BYTES_OUT = 3;

  /**
   * The rates per second of DATA frames and bytes each way ({@link #RATE_DATA_IN}, ...) over the
   * last complete {@link #sample} period, 0 before the first. On the loop; the caller copies them.
   */
  public long[] rates() {
    return rates;
  }

  /**
   * Reads the link's counters and keeps their rates per second since the last call, {@code
   * elapsedNanos} ago (the router calls it once a second on the loop).
   */
  public void sample(long elapsedNanos) {
    long dIn = in.get();
    long dOut = out.get();
    rates[RATE_DATA_IN] = perSecond(dIn - sampledDataIn, elapsedNanos);
    rates[RATE_DATA_OUT] = perSecond(dOut - sampledDataOut, elapsedNanos);
    rates[RATE_BYTES_IN] = perSecond(bytesIn - sampledBytesIn, elapsedNanos);
    rates[RATE_BYTES_OUT] = perSecond(bytesOut - sampledBytesOut, elapsedNanos);
    sampledDataIn = dIn;
    sampledDataOut = dOut;
    sampledBytesIn = bytesIn;
    sampledBytesOut = bytesOut;
  }

  /** {@code delta} over {@code elapsedNanos}, per second, rounded. */
  public static long perSecond(long delta, long elapsedNanos) {
    return elapsedNanos <= 0 ? 0 : Math.round(delta * 1e9 / elapsedNanos);
  }

  /** Whether DATA to the neighbour goes by {@code t} now. */
  public boolean dataBy(RouterConfig.LinkTransport t) {
    return path != null && path.transport() == t;
  }

  /**
   * Sets the session (null: none). What waited for the share of the previous one is dropped: the
   * routing module sends everything again to a neighbour whose adjacency comes up.
   */
  public void attach(Channel c) {
    session = c;
    LinkBytes counter = c == null ? null : c.pipeline().get(LinkBytes.class);
    if (counter != null) {
      counter.link = this;
    }
    dropWaiting();
    controlInBuffer = 0;
    drainScheduled = false; // a drain scheduled for the previous session finds it gone
  }

  @Override
  public void send(ControlMessage message) {
    Channel c = session;
    if (c == null || !c.isActive()) {
      return;
    }
    if (log.isDebugEnabled()) {
      log.debug("to router {}: {}", neighbour(), message);
    }
    if (waiting.isEmpty() && controlInBuffer == 0) {
      progressNanos = System.nanoTime(); // nothing was in flight: the wait starts now
    }
    int bytes = RouterFrameCodec.encodedLength(message);
    Pending p = new Pending(message, bytes, bytes >= OFFLOAD_BYTES);
    if (!waiting.isEmpty() || !fits(p) || p.offloaded) {
      controlDeferred.inc();
    }
    waiting.add(p);
    waitingBytes += p.bytes;
    if (p.offloaded) {
      encodeAway(c, p);
    }
    if (!drainScheduled) {
      drain(c); // else a drain on a later turn of the loop writes it, in order
    }
    if (waitingBytes > maxWaitingBytes) {
      cut(
          c,
          String.format(
              "left %d bytes of control frames unread beyond its share of the link (more than %d)",
              waitingBytes, maxWaitingBytes));
    }
  }

  /**
   * Whether the link has as much control waiting as it may hold in the session's buffer (its
   * control share): what the routing module can hold back, it does then.
   */
  @Override
  public boolean backlogged() {
    return waitingBytes >= controlBudget;
  }

  /**
   * Cuts the session if control frames have waited {@code slowNanos} without one reaching the
   * socket (the neighbour reads nothing, or far too slowly); returns whether it did.
   */
  public boolean stalled(long now, long slowNanos) {
    Channel c = session;
    if (c == null
        || !c.isActive()
        || (waiting.isEmpty() && controlInBuffer == 0)
        || now - progressNanos < slowNanos) {
      return false;
    }
    cut(
        c,
        String.format(
            "left %d bytes of control frames unread for %d ms",
            waitingBytes + controlInBuffer, TimeUnit.NANOSECONDS.toMillis(now - progressNanos)));
    return true;
  }

  private void cut(Channel c, String why) {
    slowConsumers.inc();
    log.warn("router {} {}: disconnected as a slow consumer", neighbour(), why);
    dropWaiting();
    c.close();
  }

  /** Encodes {@code p} on the links' control thread; its bytes come back to the loop. */
  private void encodeAway(Channel c, Pending p) {
    try {
      encoder.execute(
          () -> {
            ByteBuf b = null;
            try {
              b = RouterFrameCodec.encode(c.alloc(), p.message);
            } catch (RuntimeException e) {
              log.warn(
                  "router {}: cannot encode a {} frame: {}",
                  neighbour(),
                  p.message.getClass().getSimpleName(),
                  e.toString());
            }
            ByteBuf encoded = b;
            try {
              c.eventLoop().execute(() -> arrived(c, p, encoded));
            } catch (RejectedExecutionException e) { // the router is stopping
              if (encoded != null) {
                encoded.release();
              }
            }
          });
    } catch (RejectedExecutionException e) { // the router is stopping
      p.failed = true;
    }
  }

  /** Back on the loop: {@code p}'s bytes (null: its encoding failed). */
  private void arrived(Channel c, Pending p, ByteBuf encoded) {
    if (p.dropped) {
      if (encoded != null) {
        encoded.release();
      }
      return;
    }
    p.encoded = encoded;
    p.failed = encoded == null;
    if (session == c && c.isActive() && waiting.peek() == p) {
      drain(c);
    }
  }

  /** Forgets every frame waiting; offloaded bytes are released (now, or when they arrive). */
  private void dropWaiting() {
    for (Pending p : waiting) {
      p.dropped = true;
      if (p.encoded != null) {
        p.encoded.release();
        p.encoded = null;
      }
    }
    waiting.clear();
    waitingBytes = 0;
  }

  /** Sessions of this link closed for not reading, for tests. */
  public long slowConsumersClosed() {
    return slowConsumers.get();
  }

  /** Bytes of control frames waiting for the share, for tests. */
  public long controlWaitingBytes() {
    return waitingBytes;
  }

  /** Whether a frame fits the control share now: it does when no control frame is in the buffer. */
  private boolean fits(Pending p) {
    return controlInBuffer == 0 || controlInBuffer + p.bytes <= controlBudget;
  }

  /** Control frames waiting for the share, for tests and metrics. */
  public int controlWaiting() {
    return waiting.size();
  }

  /** Bytes of control frames in the session's output buffer, for tests. */
  public long controlInBuffer() {
    return controlInBuffer;
  }

  /**
   * Bytes of control frames one turn of the event loop writes to a link: a new neighbour is sent
   * every advertisement held (megabytes; the large frames encoded on the control thread, the small
   * ones as they are written), a few frames a turn with the loop's other work between them.
   */
  static final long DRAIN_TURN_BYTES = 512 * 1024;

  /** Drains {@code c} on a later turn of its loop, unless that is arranged already. */
  private void drainLater(Channel c) {
    if (drainScheduled) {
      return;
    }
    drainScheduled = true;
    c.eventLoop()
        .execute(
            () -> {
              drainScheduled = false;
              if (session == c && c.isActive()) {
                drain(c);
              }
            });
  }

  /** Writes waiting control frames while they fit in the control share of the output buffer. */
  private void drain(Channel c) {
    boolean wrote = false;
    long turn = 0;
    while (!waiting.isEmpty() && fits(waiting.peek()) && waiting.peek().ready()) {
      if (turn >= DRAIN_TURN_BYTES) {
        drainLater(c); // once the loop has run what waits behind this turn
        break;
      }
      Pending p = waiting.poll();
      int bytes = p.bytes;
      waitingBytes -= bytes;
      if (p.failed) {
        continue; // logged where it failed
      }
      turn += bytes;
      controlInBuffer += bytes;
      controlOut.inc();
      wrote = true;
      Object frame = p.offloaded ? p.encoded : p.message;
      p.encoded = null; // the write owns the bytes now
      c.write(frame)
          .addListener(
              f -> {
                if (session == c) {
                  controlInBuffer -= bytes;
                  if (f.isSuccess()) {
                    progressNanos = System.nanoTime();
                  }
                  if (f.isSuccess() && !waiting.isEmpty()) {
                    // Not from inside the flush that completed this write: a write and flush made
                    // there can be left unflushed. Run once that flush has returned.
                    drainLater(c);
                  }
                }
              });
    }
    if (wrote) {
      c.flush();
    }
  }
}
