package io.bdrp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.Router;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.routing.RoutingConfig;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shared-memory link between a router here and a {@code bdrp router} process on the same host:
 * DATA goes through the rings both ways; the process killed with {@code kill -9} in the middle of a
 * stream takes the link down as a lost TCP session would, the router here keeps serving its own
 * clients, and the process started again links through a ring again and its messages arrive intact
 * and in order.
 */
class ShmLinkProcessTest {
  private static final RoutingConfig FAST =
      RoutingConfig.builder()
          .helloIntervalMs(250)
          .deadIntervalMs(3_000)
          .updateIntervalMs(1_000)
          .routeExpiryMs(4_000)
          .maxRouters(64)
          .build();

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  private static ChildProcess startRouter1(Path config, Path dir) throws Exception {
    return ChildProcess.start(
        "bdrp router 1",
        ChildProcess.java(
            List.of("-Xmx256m"), "io.bdrp.router.RouterMain", "--config", config.toString()),
        dir.resolve("router-1.log"));
  }

  /** Sends {@code topic = "from-1", seq = i} from a client of the process until told to stop. */
  private static Thread stream(int clientPort, AtomicBoolean stop) {
    Thread t =
        new Thread(
            () -> {
              try (BdrpClient pub =
                  BdrpClient.builder().router("127.0.0.1", clientPort).reconnect(false).connect()) {
                for (long i = 0; !stop.get(); i++) {
                  pub.send(Message.builder().put("topic", "from-1").put("seq", i).build());
                  if (i % 64 == 0) {
                    pub.flush().get(10, TimeUnit.SECONDS);
                  }
                }
              } catch (Exception e) {
                // the process was killed under it
              }
            });
    t.setDaemon(true);
    t.start();
    return t;
  }

  @Test
  @Timeout(180)
  void aPeerKilledMidStreamTakesTheLinkDownAndComesBackThroughItsRing(@TempDir Path dir)
      throws Exception {
    int routerPort0 = Ports.free();
    int clientPort1 = Ports.free();
    int routerPort1 = Ports.free();
    Path config1 = dir.resolve("router-1.yaml");
    Files.writeString(
        config1,
        """
        router: 1
        listen:
          clients: 127.0.0.1:%d
          routers: 127.0.0.1:%d
        neighbours:
          - router: 0
            address: 127.0.0.1:%d
            transport: shm
        routing:
          helloIntervalMs: 250
          deadIntervalMs: 3000
          updateIntervalMs: 1000
          routeExpiryMs: 4000
          maxRouters: 64
        """
            .formatted(clientPort1, routerPort1, routerPort0));
    InetSocketAddress local = new InetSocketAddress("127.0.0.1", 0);
    RouterConfig config0 =
        new RouterConfig(
            0,
            System.currentTimeMillis(),
            local,
            new InetSocketAddress("127.0.0.1", routerPort0),
            null,
            List.of(new RouterConfig.Neighbour(1, null, 1, RouterConfig.LinkTransport.SHM)),
            FAST,
            BloomParameters.DEFAULT,
            RouterLimits.DEFAULT,
            null);
    LinkedBlockingQueue<Message> fromOne = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<Message> local0 = new LinkedBlockingQueue<>();
    ChildProcess one = null;
    try (Router r0 = Router.start(config0);
        BdrpClient sub = BdrpClient.builder().router(r0.clientAddress()).connect()) {
      sub.subscribe(Predicate.parse("topic = \"from-1\""), fromOne::add).get(10, TimeUnit.SECONDS);
      sub.subscribe(Predicate.parse("topic = \"local\""), local0::add).get(10, TimeUnit.SECONDS);
      one = startRouter1(config1, dir);
      one.awaitPort(clientPort1, Duration.ofSeconds(60));
      await("DATA to router 1 through its ring", () -> r0.view().ringTo(1) != null);
      await("a route to router 1", () -> r0.view().reachable().length == 1);

      // A stream from router 1's client through router 1's ring here, killed in the middle.
      AtomicBoolean stop = new AtomicBoolean();
      Thread s = stream(clientPort1, stop);
      for (int i = 0; i < 2_000; i++) {
        Message m = fromOne.poll(30, TimeUnit.SECONDS);
        assertTrue(m != null, "message " + i + " of the stream arrived");
      }
      assertTrue(r0.view().ringFrom(1).frames() > 0, "router 1's DATA came through the ring");
      one.kill(); // kill -9 while it streams
      stop.set(true);
      s.join(TimeUnit.SECONDS.toMillis(10));

      // The link goes down like a lost session; the router keeps serving its own clients.
      await("the link to the killed router down", () -> r0.view().ringTo(1) == null);
      await("no route to the killed router", () -> r0.view().reachable().length == 0);
      try (BdrpClient pub = BdrpClient.builder().router(r0.clientAddress()).connect()) {
        pub.send(Message.builder().put("topic", "local").put("n", 1).build());
        Message m = local0.poll(30, TimeUnit.SECONDS);
        assertTrue(m != null && m.get("n").asLong() == 1, "router 0 still delivers locally");
      }
      fromOne.clear();

      // Router 1 again (a new epoch): the link comes back through a ring, messages intact.
      one = startRouter1(config1, dir);
      one.awaitPort(clientPort1, Duration.ofSeconds(60));
      await("DATA to the restarted router through its ring", () -> r0.view().ringTo(1) != null);
      await("a route to the restarted router", () -> r0.view().reachable().length == 1);
      try (BdrpClient pub =
          BdrpClient.builder().router("127.0.0.1", clientPort1).reconnect(false).connect()) {
        // Its first messages may precede its predicate table; send until one gets through.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (fromOne.poll(100, TimeUnit.MILLISECONDS) == null) {
          assertTrue(System.nanoTime() < deadline, "nothing from the restarted router");
          pub.send(Message.builder().put("topic", "from-1").put("probe", true).build());
        }
        pub.flush().get(10, TimeUnit.SECONDS);
        while (fromOne.poll(500, TimeUnit.MILLISECONDS) != null) {} // late probes
        for (long i = 0; i < 500; i++) {
          pub.send(Message.builder().put("topic", "from-1").put("seq", i).build());
        }
        for (long i = 0; i < 500; i++) {
          Message m = fromOne.poll(30, TimeUnit.SECONDS);
          assertTrue(m != null, "message " + i + " after the restart");
          assertEquals(i, m.get("seq").asLong(), "in order, once, intact");
        }
      }
    } finally {
      if (one != null) {
        one.close();
      }
    }
    try (var left =
        Files.newDirectoryStream(Path.of("/dev/shm"), "bdrp-ring-0-" + config0.epoch() + "-*")) {
      assertTrue(!left.iterator().hasNext(), "router 0 removed its rings when it stopped");
    }
  }
}
