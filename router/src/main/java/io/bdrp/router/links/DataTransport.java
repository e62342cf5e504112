package io.bdrp.router.links;

import io.bdrp.transport.RouterHello;
import io.bdrp.transport.TransportEndpoint;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;

/**
 * A transport for DATA between neighbours besides their TCP sessions (UDP, shared memory): one
 * instance per router and kind, made by the router and told of every link's session, up and down.
 * It owns its sockets or rings, its per-link state and its counters; it hands what it receives to
 * the {@link Receiver} it was made with and, for links configured for it, gives each session a
 * {@link DataPath}. Control frames and the link's life stay on TCP.
 *
 * <p>A new transport is a new implementation and one line where the router makes its transports.
 *
 * <p>Owned by the router's event loop, but for {@link #start} and {@link #close}.
 */
public interface DataTransport {
  /**
   * Where a link's DATA frames go, from whatever transport (named in logs and metrics: {@code tcp},
   * {@code udp}, {@code shm}); the caller still owns the frame.
   */
  @FunctionalInterface
  public interface Receiver {
    void receive(Link from, ByteBuf frame, String transport);
  }

  /**
   * What a link's session knows of its neighbour when it comes up: the address of its TCP session,
   * its hello, and the nonce of this router's own hello on that session.
   */
  record Peer(InetSocketAddress remote, RouterHello hello, byte[] ownNonce) {}

  /** The name in logs and metric labels ({@code udp}, {@code shm}). */
  String name();

  /**
   * This transport's part of the hello this router sends on {@code l}'s session, or null for none:
   * the endpoint the neighbour needs to reach {@code l}'s ring or socket, when it cannot be
   * derived. Called on the loop before each hello to a known neighbour; must not block.
   */
  default TransportEndpoint endpoint(Link l) {
    return null;
  }

  /** Binds its sockets or makes its rings; before the router port is bound. */
  void start() throws InterruptedException;

  /**
   * {@code l}'s session is up: the transport takes the neighbour's DATA from now on where it can,
   * and returns the link's path for DATA if the link is configured for this transport and it can
   * carry it (null otherwise: DATA goes over TCP, with a WARN if it was configured so).
   */
  DataPath linkUp(Link l, Peer peer);

  /** {@code l}'s session is gone: no more DATA this way, either way, until it is back. */
  void linkDown(Link l);

  /** Releases sockets, rings and files. */
  void close();
}
