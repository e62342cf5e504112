package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.config.HostLimits;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import java.io.InputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What one valid client may ask of a router is bounded by what it costs ({@link HostLimits}): each
 * test makes a request beyond a bound, expects an ERROR naming the limit and a counter, and checks
 * that the session (or the router) goes on serving.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientLimitsTest {
  private static final String ALICE = "alice-token";

  private Router router;
  private final List<BdrpClient> clients = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    clients.forEach(BdrpClient::close);
    if (router != null) {
      router.close();
    }
  }

  private Router start(HostLimits hosts, boolean withUsers) throws Exception {
    RouterConfig c = Federation.loneRouter().withLimits(RouterLimits.DEFAULT.withHosts(hosts));
    if (withUsers) {
      c =
          c.withClientAuth(
              new ClientAuth(
                  List.of(
                      ClientAuth.user(
                          "alice",
                          ClientAuth.hashLine(ALICE),
                          new ClientAuth.Permissions("alice", null, null))),
                  null));
    }
    router = Router.start(c);
    return router;
  }

  private static HostLimits hosts(
      int perHost, int perUser, int changesPerSecond, int sessions, int keepAlive) {
    return new HostLimits(perHost, perUser, changesPerSecond, sessions, keepAlive);
  }

  private BdrpClient client(String token) throws Exception {
    BdrpClient.Builder b = BdrpClient.builder().router(router.clientAddress()).reconnect(false);
    if (token != null) {
      b.authToken(token);
    }
    BdrpClient c = b.connect();
    clients.add(c);
    return c;
  }

  /** {@code n} conjunctions of {@code width} equalities on names of their own. */
  private static Predicate distinct(String prefix, int n, int width) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        s.append(" || ");
      }
      for (int j = 0; j < width; j++) {
        if (j > 0) {
          s.append(" && ");
        }
        s.append(prefix).append(i).append('_').append(j).append(" = 1");
      }
    }
    return Predicate.parse(s.toString());
  }

  private long metric(String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\d+)").matcher(router.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static BdrpClient.RouterException refusal(CompletableFuture<?> f) throws Exception {
    ExecutionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    return assertInstanceOf(
        BdrpClient.RouterException.class, e.getCause(), String.valueOf(e.getCause()));
  }

  /** The session still works: its predicate can be set and it receives what matches it. */
  private void stillServed(BdrpClient c) throws Exception {
    LinkedBlockingQueue<Message> got = new LinkedBlockingQueue<>();
    c.subscribe(Predicate.parse("probe = 1"), got::add).get(20, TimeUnit.SECONDS);
    c.send(Message.builder().put("probe", 1).build());
    assertTrue(got.poll(20, TimeUnit.SECONDS) != null, "the session still gets its messages");
  }

  /**
   * The attack of the trust-boundary review: 1,024 conjunctions of three untyped {@code exists}
   * encode to 27,648 filters, whose minimal set stalled the router's loop for minutes. It is now
   * refused before any filter is built, and the same session goes on.
   */
  @Test
  void aPredicateOverThePerHostFilterLimitIsRefusedAndTheSessionStays() throws Exception {
    start(HostLimits.DEFAULT, false);
    BdrpClient c = client(null);
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 1024; i++) {
      s.append(i == 0 ? "" : " || ")
          .append("exists(a")
          .append(i)
          .append(") && exists(b")
          .append(i)
          .append(") && exists(c")
          .append(i)
          .append(')');
    }
    BdrpClient.RouterException e = refusal(c.setPredicate(Predicate.parse(s.toString())));
    assertEquals(ErrorCode.BAD_PREDICATE.number(), e.code());
    assertTrue(e.getMessage().contains("limits.maxFiltersPerHost"), e.getMessage());
    assertEquals(1, metric("bdrp_client_requests_refused_total{reason=\"host_filters\"}"));
    stillServed(c);
  }

  /** Filters are counted over every session of a user, and freed when a session ends. */
  @Test
  void theSessionsOfOneUserShareTheirFilterLimit() throws Exception {
    start(hosts(100, 10, 100, 100, 60_000), true);
    BdrpClient a = client(ALICE);
    BdrpClient b = client(ALICE);
    a.setPredicate(distinct("a", 6, 1)).get(20, TimeUnit.SECONDS);
    BdrpClient.RouterException e = refusal(b.setPredicate(distinct("b", 6, 1)));
    assertEquals(ErrorCode.BAD_PREDICATE.number(), e.code());
    assertTrue(e.getMessage().contains("limits.maxFiltersPerUser"), e.getMessage());
    assertEquals(1, metric("bdrp_client_requests_refused_total{reason=\"user_filters\"}"));
    b.setPredicate(distinct("b", 4, 1)).get(20, TimeUnit.SECONDS); // 6 + 4: within
    a.close();
    // a's six are freed when its session ends: b may now hold ten.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try {
        b.setPredicate(distinct("b", 10, 1)).get(20, TimeUnit.SECONDS);
        break;
      } catch (ExecutionException refused) {
        // a's close may not have reached the router yet: ask again until it has.
        assertTrue(System.nanoTime() < deadline, "a's filters were never freed");
        Thread.sleep(20);
      }
    }
  }

  /**
   * The router's aggregate, which every router of the federation holds, is bounded after the
   * minimal set ({@code routing.maxOriginFilters}): a second host with the same filters costs
   * nothing more, one with new filters beyond the bound is refused and the others keep theirs.
   */
  @Test
  void theAggregateIsBoundedAfterSharedFiltersAreCountedOnce() throws Exception {
    router =
        Router.start(
            Federation.loneRouter()
                .withRouting(Federation.FAST.toBuilder().maxOriginFilters(4).build()));
    BdrpClient a = client(null);
    BdrpClient b = client(null);
    BdrpClient c = client(null);
    a.setPredicate(distinct("x", 3, 2)).get(20, TimeUnit.SECONDS);
    b.setPredicate(distinct("x", 3, 2)).get(20, TimeUnit.SECONDS); // the same three filters
    BdrpClient.RouterException e = refusal(c.setPredicate(distinct("y", 2, 2)));
    assertEquals(ErrorCode.BAD_PREDICATE.number(), e.code());
    assertTrue(e.getMessage().contains("routing.maxOriginFilters"), e.getMessage());
    assertEquals(1, metric("bdrp_client_requests_refused_total{reason=\"router_aggregate\"}"));
    assertEquals(3, metric("bdrp_local_filters"));
    c.setPredicate(distinct("y", 1, 2)).get(20, TimeUnit.SECONDS); // 3 + 1: within
    assertEquals(4, metric("bdrp_local_filters"));
    // Hosts that leave take their filters out of the aggregate the router advertises (worked out
    // on the control thread, then advertised by the loop).
    a.close();
    assertEquals(4, metric("bdrp_local_filters"), "b still holds the three");
    b.close();
    Federation.await(
        "a's and b's filters out of the advertised aggregate",
        () -> metric("bdrp_local_filters") == 1);
  }

  /** A session that changes its predicate faster than the rate is refused, not obeyed. */
  @Test
  void predicateChangesBeyondTheRateAreRefused() throws Exception {
    start(hosts(100, 1000, 1, 100, 60_000), false);
    BdrpClient c = client(null);
    List<CompletableFuture<Void>> asks = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      asks.add(c.setPredicate(distinct("r" + i, 1, 1)));
    }
    int refused = 0;
    for (CompletableFuture<Void> f : asks) {
      try {
        f.get(20, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        BdrpClient.RouterException r =
            assertInstanceOf(BdrpClient.RouterException.class, e.getCause());
        assertEquals(ErrorCode.OVERLOADED.number(), r.code());
        assertTrue(r.getMessage().contains("limits.predicateChangesPerSecond"), r.getMessage());
        refused++;
      }
    }
    // One change a second, with a burst of one: five asked at once leave at least three refused
    // unless the five took more than two seconds to arrive.
    assertTrue(refused >= 3, refused + " of 5 refused");
    assertEquals(refused, metric("bdrp_client_requests_refused_total{reason=\"predicate_rate\"}"));
  }

  /** One user cannot hold every client slot of the router. */
  @Test
  void sessionsPerUserAreCapped() throws Exception {
    start(hosts(100, 1000, 100, 2, 60_000), true);
    BdrpClient a = client(ALICE);
    client(ALICE);
    BdrpClient.RouterException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            BdrpClient.RouterException.class, () -> client(ALICE));
    assertEquals(ErrorCode.OVERLOADED.number(), e.code());
    assertTrue(e.getMessage().contains("limits.maxSessionsPerUser"), e.getMessage());
    assertEquals(1, metric("bdrp_client_requests_refused_total{reason=\"user_sessions\"}"));
    a.close();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try {
        client(ALICE);
        break;
      } catch (BdrpClient.RouterException refused) {
        assertTrue(System.nanoTime() < deadline, "a's session was never freed");
        Thread.sleep(20);
      }
    }
  }

  /**
   * A session that says HELLO and then nothing is sent a PING and, still silent, closed with
   * TIMEOUT; a client that answers the PING stays. Before, such sessions held a client slot for
   * good.
   */
  @Test
  void silentSessionsAreProbedThenClosedWhileAnsweringOnesStay() throws Exception {
    start(hosts(100, 1000, 100, 100, 300), false);
    BdrpClient answering = client(null);
    Socket s = new Socket();
    sockets.add(s);
    s.connect(router.clientAddress(), 10_000);
    s.setSoTimeout(10_000);
    s.getOutputStream()
        .write(
            RawFrames.client(
                new ClientFrame.Hello(io.bdrp.transport.Frames.VERSION, "mute", new byte[0])));
    InputStream in = s.getInputStream();
    assertInstanceOf(ClientFrame.HelloOk.class, RawFrames.readClientFrame(in));
    assertInstanceOf(ClientFrame.Ping.class, RawFrames.readClientFrame(in));
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, RawFrames.readClientFrame(in));
    assertEquals(ErrorCode.TIMEOUT.number(), e.code());
    assertTrue(e.message().contains("limits.keepAliveMs"), e.message());
    assertNull(RawFrames.readFrame(in), "the session is closed after its ERROR");
    assertEquals(1, metric("bdrp_connections_closed_total{port=\"clients\",reason=\"keepalive\"}"));
    // The library's client was as idle, but answered the PINGs: it is still served.
    stillServed(answering);
  }

  /** Every router exports how late its event loop runs. */
  @Test
  void theEventLoopLagIsExported() throws Exception {
    start(HostLimits.DEFAULT, false);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (metric("bdrp_event_loop_lag_seconds_count") < 2) {
      assertTrue(System.nanoTime() < deadline, "no lag sample in 20 s");
      Thread.sleep(20);
    }
  }
}
