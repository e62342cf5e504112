package io.bdrp.router;

import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.Face;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * A configured neighbour: its TCP session, which carries control frames and (unless DATA goes by
 * UDP) DATA frames, and where its DATA datagrams go and come from once its hello has announced a
 * UDP port.
 *
 * <p>Owned by the router's event loop.
 */
final class Link implements Face {
  final RouterConfig.Neighbour config;
  InetSocketAddress address; // where to dial it, or null to wait for it
  Channel session; // after the hello exchange
  long peerEpoch; // the epoch in the hello of the current session
  long lastReadNanos; // when something last arrived on the session
  boolean dialledByUs;

  /** The neighbour's UDP socket, learnt from its hello: where it takes DATA, and sends it from. */
  InetSocketAddress udpPeer;

  /** Whether DATA to the neighbour goes by UDP now: configured so, and the neighbour has a port. */
  boolean udpOut;

  final Metrics.Counter in;
  final Metrics.Counter out;
  final Metrics.Counter dropped;
  final Metrics.Counter controlIn;
  final Metrics.Counter controlOut;

  Link(RouterConfig.Neighbour config, RouterMetrics metrics) {
    this.config = config;
    this.address = config.address();
    String n = Integer.toString(config.router());
    this.in = metrics.linkIn(n);
    this.out = metrics.linkOut(n);
    this.dropped = metrics.linkDropped(n);
    this.controlIn = metrics.linkControl("received", n);
    this.controlOut = metrics.linkControl("sent", n);
  }

  @Override
  public int neighbour() {
    return config.router();
  }

  @Override
  public void send(ControlMessage message) {
    Channel c = session;
    if (c != null && c.isActive()) {
      controlOut.inc();
      c.writeAndFlush(message, c.voidPromise());
    }
  }
}
