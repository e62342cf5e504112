package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.ControlMessage;
import io.bdrp.topologies.Bundled;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.bdrp.transport.TransportEndpoint;
import io.bdrp.transport.UdpProtection;
import io.netty.buffer.ByteBuf;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Routers that say so in their hellos send each other periodic full updates as digests, and keep
 * their routes on them past the route expiry: real routers on loopback, with the test timers (full
 * updates every second, routes expiring after four).
 */
class RouteDigestsTest {

  private static <T> T on(Router r, Callable<T> read) throws Exception {
    return r.loop().submit(read).get();
  }

  @Test
  void routersKeepTheirRoutesOnDigestsPastTheRouteExpiry() throws Exception {
    try (Federation f = new Federation(Bundled.load("routers-4"))) {
      f.awaitRoutes();
      Router r0 = f.routers.get(0);
      // Six digests from each neighbour of router 0 take longer than the four-second expiry.
      Federation.await(
          "digests agreed at router 0",
          () -> {
            try {
              return on(r0, () -> r0.node().unicast().digestsAgreed()) >= 12;
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      for (Router r : f.routers) {
        int self = f.routers.indexOf(r);
        for (int d = 0; d < f.routers.size(); d++) {
          int dest = d;
          assertTrue(
              on(r, () -> r.node().unicast().nextHop(dest)) >= 0,
              "router " + self + " still has its route to " + dest);
        }
        assertTrue(on(r, () -> r.node().unicast().digestsSent()) > 0, "router " + self);
        assertEquals(0L, on(r, () -> r.node().unicast().digestsDisagreed()), "router " + self);
      }
      String metrics = r0.metricsText();
      assertTrue(
          metrics.matches("(?s).*\nbdrp_unicast_digests_total\\{outcome=\"agreed\"\\} [1-9].*"),
          "the counter is exported");
    }
  }

  /**
   * A raw peer plays router 1 towards a real router 0: with {@code route-digest} in its hello it
   * gets periodic updates as digests, and the full table again when it asks; without (a router that
   * predates digests) it gets full tables only.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void digestsGoOnlyToNeighboursWhoseHelloTakesThem(boolean takesDigests) throws Exception {
    try (Router router = Router.start(Federation.routerWithNeighbourOne());
        Socket peer = new Socket("127.0.0.1", router.routerAddress().getPort())) {
      peer.setSoTimeout(Math.toIntExact(Federation.FAST.helloIntervalMs()));
      RouterHello hello =
          new RouterHello(
              1,
              5,
              Federation.FAST.maxRouters(),
              BloomParameters.DEFAULT,
              0,
              "secret".getBytes(),
              UdpProtection.NONE,
              new byte[0]);
      if (takesDigests) {
        hello =
            hello.withEndpoints(
                List.of(new TransportEndpoint(RouterHello.ROUTE_DIGESTS, new byte[0])));
      }
      OutputStream out = peer.getOutputStream();
      out.write(RawFrames.router(hello));
      out.flush();
      ByteBuf first = RawFrames.readFrame(peer.getInputStream());
      RouterHello theirs = (RouterHello) RouterFrameCodec.decode(first);
      first.release();
      assertTrue(theirs.takesRouteDigests(), "every router of this release says it takes them");
      long epoch0 = RawFrames.becomeReachable(peer, 1, 5);

      int updates = 0;
      int digests = 0;
      boolean asked = false;
      int updatesWhenAsked = -1;
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (takesDigests ? digests < 3 || !asked || updates <= updatesWhenAsked : updates < 5) {
        assertTrue(System.nanoTime() < deadline, updates + " updates, " + digests + " digests");
        ByteBuf f;
        try {
          f = RawFrames.readFrame(peer.getInputStream());
        } catch (SocketTimeoutException quiet) {
          f = null;
        }
        if (f != null) {
          Object m = RouterFrameCodec.decode(f);
          f.release();
          if (m instanceof ControlMessage.RouteUpdate) {
            updates++;
          } else if (m instanceof ControlMessage.RouteDigest g) {
            digests++;
            assertEquals(2, g.count(), "its route to itself and, poisoned, the one through us");
            if (digests == 2 && !asked) {
              out.write(RawFrames.router(new ControlMessage.TableRequest(1)));
              asked = true;
              updatesWhenAsked = updates;
            }
          }
        }
        out.write(RawFrames.router(new ControlMessage.Hello(1, 5, epoch0)));
        out.flush();
      }
      if (!takesDigests) {
        assertEquals(0, digests, "no digest to a router that did not say it takes them");
      }
      long sent = on(router, () -> router.node().unicast().digestsSent());
      assertEquals(takesDigests, sent > 0);
      assertEquals(
          takesDigests ? 1L : 0L, on(router, () -> router.node().unicast().tablesRequested()));
    }
  }
}
