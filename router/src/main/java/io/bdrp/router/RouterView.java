package io.bdrp.router;

import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.ClientSessions;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.RouterLinks;
import io.bdrp.router.links.shm.ShmLinks;
import io.bdrp.router.ring.SharedRing;
import io.bdrp.routing.RoutingNode;
import io.netty.channel.EventLoop;
import java.util.Collection;
import java.util.concurrent.Callable;

/**
 * What a router holds now, for tools and tests: its routes, its predicates, the state of its links.
 * Every read runs on the router's event loop, which owns that state, and waits for it; none is for
 * a hot path.
 */
public final class RouterView {
  private final int router;
  private final EventLoop loop;
  private final RoutingNode node;
  private final RouterLinks links;
  private final ShmLinks shm;
  private final ClientSessions clients;

  RouterView(
      int router,
      EventLoop loop,
      RoutingNode node,
      RouterLinks links,
      ShmLinks shm,
      ClientSessions clients) {
    this.router = router;
    this.loop = loop;
    this.node = node;
    this.links = links;
    this.shm = shm;
    this.clients = clients;
  }

  private <T> T onLoop(Callable<T> read) {
    return loop.submit(read).syncUninterruptibly().getNow();
  }

  /** Routers this router has a route to. */
  public int[] reachable() {
    return onLoop(() -> node.unicast().reachable());
  }

  /** How many origins PREDICATES holds, this router included. */
  public int predicateOrigins() {
    return onLoop(() -> node.predicates().size());
  }

  /** Whether the session with neighbour {@code neighbour} is up now (its hellos exchanged). */
  public boolean linkUp(int neighbour) {
    return onLoop(
        () -> {
          Link l = links.get(neighbour);
          return l != null && l.session != null && l.session.isActive();
        });
  }

  /** Whether DATA to {@code neighbour} goes by UDP now. */
  public boolean dataOverUdp(int neighbour) {
    return onLoop(
        () -> {
          Link l = links.get(neighbour);
          return l != null && l.dataBy(RouterConfig.LinkTransport.UDP);
        });
  }

  /** How DATA to {@code neighbour} goes now: its path's transport, TCP when it has none. */
  public RouterConfig.LinkTransport dataBy(int neighbour) {
    return onLoop(
        () -> {
          Link l = links.get(neighbour);
          return l != null && l.path != null ? l.path.transport() : RouterConfig.LinkTransport.TCP;
        });
  }

  /**
   * The counters of the shared-memory ring DATA to {@code neighbour} goes into now, or null when it
   * goes by socket.
   */
  public SharedRing.Counters ringTo(int neighbour) {
    return onLoop(
        () -> {
          Link l = links.get(neighbour);
          return l != null && l.path instanceof ShmLinks.RingPath r ? r.ring.counters() : null;
        });
  }

  /**
   * The counters of the shared-memory ring this router reads from {@code neighbour}, or null when
   * there is none.
   */
  public SharedRing.Counters ringFrom(int neighbour) {
    return onLoop(() -> shm.inbound(neighbour));
  }

  /** The encoded predicate this router holds for {@code origin}, or null. */
  public EncodedPredicate predicateOf(int origin) {
    return onLoop(() -> node.predicates().get(origin));
  }

  /** Whether the index of D this router matches with is built from all it holds now. */
  public boolean indexReady() {
    return onLoop(() -> node.predicates().indexReady());
  }

  /** This router's own aggregate, the OR of its hosts' predicates, encoded, as it advertises it. */
  public EncodedPredicate aggregate() {
    return onLoop(() -> node.predicates().get(router));
  }

  /** Client connections in their HELLO now. */
  int clientHandshakesPending() {
    return onLoop(clients::handshakesPending);
  }

  /**
   * Whether every router of an in-process federation holds every other one's current aggregate and
   * has indexed it: predicates have propagated, and D computed anywhere is exact but for false
   * positives.
   */
  public static boolean predicatesAgree(Collection<Router> routers) {
    for (Router r : routers) {
      if (!r.view().indexReady()) {
        return false; // its index of D is still being built from what it holds
      }
    }
    for (Router origin : routers) {
      EncodedPredicate p = origin.view().aggregate();
      for (Router r : routers) {
        if (r != origin && !p.equals(r.view().predicateOf(origin.number()))) {
          return false;
        }
      }
    }
    return true;
  }
}
