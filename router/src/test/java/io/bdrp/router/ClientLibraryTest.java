package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client library against a real router. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientLibraryTest {
  private static Router router(int clientPort) throws InterruptedException {
    InetSocketAddress clients = InetSocketAddress.createUnresolved("127.0.0.1", clientPort);
    InetSocketAddress routers = InetSocketAddress.createUnresolved("127.0.0.1", 0);
    return Router.start(
        new RouterConfig(
            0,
            System.currentTimeMillis(),
            clients,
            routers,
            null,
            List.of(),
            Federation.FAST,
            BloomParameters.DEFAULT,
            RouterLimits.DEFAULT,
            null));
  }

  @Test
  void subscriptionsAreDispatchedByTheirOwnPredicateOffTheIoThread() throws Exception {
    Router r = router(0);
    try (BdrpClient c = BdrpClient.builder().router(r.clientAddress()).name("c").connect()) {
      LinkedBlockingQueue<String> a = new LinkedBlockingQueue<>();
      LinkedBlockingQueue<String> b = new LinkedBlockingQueue<>();
      c.subscribe(
              Predicate.parse("x > 1"),
              m -> a.add(m.get("x") + " on " + Thread.currentThread().getName()))
          .get(10, TimeUnit.SECONDS);
      c.subscribe(Predicate.parse("x < 5"), m -> b.add(m.get("x").toString()))
          .get(10, TimeUnit.SECONDS);
      for (long x : new long[] {0, 3, 9}) {
        c.sendAcknowledged(Message.builder().put("x", x).build()).get(10, TimeUnit.SECONDS);
      }
      assertEquals("3 on bdrp-client-callbacks", a.poll(10, TimeUnit.SECONDS));
      assertEquals("9 on bdrp-client-callbacks", a.poll(10, TimeUnit.SECONDS));
      assertEquals("0", b.poll(10, TimeUnit.SECONDS));
      assertEquals("3", b.poll(10, TimeUnit.SECONDS));
      assertEquals(0, a.size() + b.size());
    } finally {
      r.close();
    }
  }

  @Test
  void aClientReconnectsAndRegistersItsPredicateAgain() throws Exception {
    Router first = router(0);
    int port = first.clientAddress().getPort();
    List<String> events = new CopyOnWriteArrayList<>();
    LinkedBlockingQueue<Long> got = new LinkedBlockingQueue<>();
    BdrpClient c =
        BdrpClient.builder()
            .router(first.clientAddress())
            .name("sub")
            .listener(
                new BdrpClient.ConnectionListener() {
                  @Override
                  public void connected(int routerNumber) {
                    events.add("connected");
                  }

                  @Override
                  public void disconnected(Throwable cause, boolean willReconnect) {
                    events.add("disconnected, reconnect " + willReconnect);
                  }
                })
            .connect();
    Router second = null;
    try {
      c.subscribe(Predicate.parse("n >= 0"), m -> got.add(m.get("n").asLong()))
          .get(10, TimeUnit.SECONDS);
      first.close();
      Federation.await("the client to notice", () -> !c.isConnected());
      try {
        c.send(Message.builder().put("n", 0L).build()).get(10, TimeUnit.SECONDS);
        throw new AssertionError("a send while disconnected must fail");
      } catch (ExecutionException expected) {
        assertTrue(expected.getCause().getMessage().contains("not connected"), expected.toString());
      }
      second = router(port);
      Federation.await("the client to reconnect", c::isConnected);
      try (BdrpClient pub =
          BdrpClient.builder().router(second.clientAddress()).name("pub").connect()) {
        // The predicate is re-registered right after the hello; publish until it is in place.
        long n = 1;
        Long first1 = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (first1 == null && System.nanoTime() < deadline) {
          pub.sendAcknowledged(Message.builder().put("n", n++).build()).get(10, TimeUnit.SECONDS);
          first1 = got.poll(50, TimeUnit.MILLISECONDS);
        }
        assertTrue(first1 != null, "deliveries resume after the reconnect");
      }
      assertEquals("connected", events.get(0));
      assertTrue(events.contains("disconnected, reconnect true"), events.toString());
      assertEquals("connected", events.get(events.size() - 1), events.toString());
    } finally {
      c.close();
      if (second != null) {
        second.close();
      }
    }
  }
}
