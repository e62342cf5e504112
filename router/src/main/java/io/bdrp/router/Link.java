package io.bdrp.router;

import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.Face;
import io.bdrp.transport.RouterFrameCodec;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
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
 * <p><b>A neighbour that does not read</b> (it may still send hellos, so the link stays alive)
 * would make this queue grow without end: once more than {@code maxWaitingBytes} of control frames
 * wait, the session is closed as a slow consumer (WARN, {@code
 * bdrp_connections_closed_total{port="routers",reason="slow_consumer"}}), as a client's would be.
 *
 * <p>Owned by the router's event loop.
 */
final class Link implements Face {
  private static final Logger log = LoggerFactory.getLogger(Link.class);

  final RouterConfig.Neighbour config;
  InetSocketAddress address; // where to dial it, or null to wait for it
  Channel session; // after the hello exchange; set with attach()
  long peerEpoch; // the epoch in the hello of the current session
  long lastReadNanos; // when something last arrived on the session
  boolean dialledByUs;

  /** When dialling it started to fail (System.nanoTime), or 0 while it is reachable. */
  long unreachableSince;

  /** When that was last reported in the log. */
  long unreachableReported;

  /** The neighbour's UDP socket, learnt from its hello: where it takes DATA, and sends it from. */
  InetSocketAddress udpPeer;

  /** Whether DATA to the neighbour goes by UDP now: configured so, and the neighbour has a port. */
  boolean udpOut;

  /**
   * This session's datagram protection (null while no datagrams can flow, or with {@code auth.udp:
   * none}): the keys each way, the sealer of datagrams to the neighbour and the opener of its
   * datagrams with their replay windows, and a number that changes with every session.
   */
  UdpLinks.Session udp;

  /** The neighbour's shared-memory ring this router writes DATA into, or null (see ShmLinks). */
  io.bdrp.router.ring.SharedRing ringOut;

  final Metrics.Counter in;
  final Metrics.Counter out;
  final Metrics.Counter dropped;
  final Metrics.Counter controlIn;
  final Metrics.Counter controlOut;
  final Metrics.Counter controlDeferred;

  /** Most bytes of control frames in the session's output buffer at once (at least one frame). */
  private final long controlBudget;

  /** A control frame waiting for room in the control share, with its length. */
  private record Pending(ControlMessage message, int bytes) {}

  /** Control frames waiting for room in the control share of the session, in order. */
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();

  private long controlInBuffer; // bytes of control frames written to the session, not yet sent
  private long waitingBytes; // bytes of the frames in waiting
  private final long maxWaitingBytes;
  private final Metrics.Counter slowConsumers;
  private boolean drainScheduled;

  /**
   * @param controlBudget most bytes of control frames in the session's output buffer at once
   * @param maxWaitingBytes most bytes of control frames waiting for the share; more close the
   *     session
   */
  Link(
      RouterConfig.Neighbour config,
      RouterMetrics metrics,
      long controlBudget,
      long maxWaitingBytes) {
    this.config = config;
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
  }

  @Override
  public int neighbour() {
    return config.router();
  }

  /**
   * Sets the session (null: none). What waited for the share of the previous one is dropped: the
   * routing module sends everything again to a neighbour whose adjacency comes up.
   */
  void attach(Channel c) {
    session = c;
    waiting.clear();
    waitingBytes = 0;
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
    Pending p = new Pending(message, RouterFrameCodec.encodedLength(message));
    if (!waiting.isEmpty() || !fits(p)) {
      controlDeferred.inc();
    }
    waiting.add(p);
    waitingBytes += p.bytes;
    if (!drainScheduled) {
      drain(c); // else a drain on a later turn of the loop writes it, in order
    }
    if (waitingBytes > maxWaitingBytes) {
      slowConsumers.inc();
      log.warn(
          "router {} left {} bytes of control frames unread beyond its share of the link (more than"
              + " {}): disconnected as a slow consumer",
          neighbour(),
          waitingBytes,
          maxWaitingBytes);
      waiting.clear();
      waitingBytes = 0;
      c.close();
    }
  }

  /** Sessions of this link closed for not reading, for tests. */
  long slowConsumersClosed() {
    return slowConsumers.get();
  }

  /** Bytes of control frames waiting for the share, for tests. */
  long controlWaitingBytes() {
    return waitingBytes;
  }

  /** Whether a frame fits the control share now: it does when no control frame is in the buffer. */
  private boolean fits(Pending p) {
    return controlInBuffer == 0 || controlInBuffer + p.bytes <= controlBudget;
  }

  /** Control frames waiting for the share, for tests and metrics. */
  int controlWaiting() {
    return waiting.size();
  }

  /** Bytes of control frames in the session's output buffer, for tests. */
  long controlInBuffer() {
    return controlInBuffer;
  }

  /**
   * Bytes of control frames one turn of the event loop encodes for a link: a new neighbour is sent
   * every advertisement held (megabytes, each frame encoded as it is written), a few frames a turn
   * with the loop's other work between them.
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
    while (!waiting.isEmpty() && fits(waiting.peek())) {
      if (turn >= DRAIN_TURN_BYTES) {
        drainLater(c); // once the loop has run what waits behind this turn
        break;
      }
      Pending p = waiting.poll();
      int bytes = p.bytes;
      turn += bytes;
      waitingBytes -= bytes;
      controlInBuffer += bytes;
      controlOut.inc();
      wrote = true;
      c.write(p.message)
          .addListener(
              f -> {
                if (session == c) {
                  controlInBuffer -= bytes;
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
