package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.config.RouterLimits;
import io.bdrp.router.security.RouterTls;
import io.bdrp.router.security.TlsFiles;
import io.bdrp.routing.ControlMessage;
import io.bdrp.routing.OriginSignature;
import io.bdrp.topologies.Edge;
import io.bdrp.topologies.Node;
import io.bdrp.topologies.Topology;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.netty.buffer.ByteBuf;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With mutual TLS, origins own their claims: routes and advertisements carry their origin's
 * signature, and a neighbour with a valid certificate of its own cannot make another router's
 * claims for it. Real routers, real TLS, and a forging neighbour on a raw TLS socket.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OriginClaimsTest {
  private static final InetSocketAddress ANY = InetSocketAddress.createUnresolved("127.0.0.1", 0);

  @TempDir static Path dir;
  private static TestCerts ca;

  @BeforeAll
  static void certificates() throws Exception {
    ca = TestCerts.ca(dir, "net-ca");
  }

  private final List<Router> routers = new ArrayList<>();

  @AfterEach
  void stop() {
    routers.forEach(Router::close);
  }

  private Router start(int number, long epoch, List<Integer> neighbours) throws Exception {
    Path[] leaf = ca.leaf("r" + number, "URI:" + RouterTls.URN + number + ",IP:127.0.0.1");
    List<RouterConfig.Neighbour> ns = new ArrayList<>();
    for (int n : neighbours) {
      ns.add(new RouterConfig.Neighbour(n, null, 1));
    }
    Router r =
        Router.start(
            new RouterConfig(
                    number,
                    epoch,
                    ANY,
                    ANY,
                    null,
                    ns,
                    Federation.FAST,
                    BloomParameters.DEFAULT,
                    RouterLimits.DEFAULT,
                    null)
                .withRouterTls(RouterTls.load(number, leaf[0], leaf[1], ca.cert())));
    routers.add(r);
    return r;
  }

  /** {@code bdrp_origin_claims_refused_total{kind,reason}} of {@code r}. */
  private static long refused(Router r, String kind, String reason) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_origin_claims_refused_total\\{kind=\""
                    + kind
                    + "\",reason=\""
                    + reason
                    + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static int nextHop(Router r, int destination) throws Exception {
    return r.loop().submit(() -> r.node().unicast().nextHop(destination)).get();
  }

  /** A TLS socket to {@code r}'s router port with router {@code number}'s valid certificate. */
  private static SSLSocket tlsSocket(Router r, int number) throws Exception {
    Path[] leaf = ca.leaf("raw-r" + number, "URI:" + RouterTls.URN + number + ",IP:127.0.0.1");
    java.security.cert.X509Certificate cert = TlsFiles.certificate(leaf[0]);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    char[] pw = "x".toCharArray();
    ks.setKeyEntry("k", TlsFiles.privateKey(leaf[1], "EC"), pw, new Certificate[] {cert});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, pw);
    KeyStore ts = KeyStore.getInstance("PKCS12");
    ts.load(null, null);
    ts.setCertificateEntry("ca", TlsFiles.certificate(ca.cert()));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ts);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    InetSocketAddress a = r.routerAddress();
    SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(a.getAddress(), a.getPort());
    s.setSoTimeout(20_000);
    s.startHandshake();
    return s;
  }

  /**
   * Router 1 between the genuine router 0 and a forging neighbour 2 (a valid certificate for 2): 2
   * relays router 0's route with a newer sequence number under 0's real signature, and 0's
   * advertisement with other filters under 0's real signature, and makes up one of each with
   * garbage signatures. Router 1 refuses and counts all of them, and keeps 0's genuine route and
   * predicate.
   */
  @Test
  void forgedRoutesAndAdvertisementsOfAnotherOriginAreRefused() throws Exception {
    long e0 = System.currentTimeMillis();
    Router r0 = start(0, e0, List.of(1));
    Router r1 = start(1, e0 + 1, List.of(0, 2));
    r0.connect(1, r1.routerAddress());
    Federation.await("router 1's route to router 0", () -> r1.view().reachable().length >= 1);
    assertEquals(0, nextHop(r1, 0));
    EncodedPredicate genuine = r0.view().aggregate();
    Federation.await("router 0's predicate at router 1", () -> r1.view().predicateOf(0) != null);

    try (SSLSocket s = tlsSocket(r1, 2)) {
      OutputStream out = s.getOutputStream();
      out.write(
          RawFrames.router(
              new RouterHello(2, e0 + 2, 64, BloomParameters.DEFAULT, 0, new byte[0])));
      RawFrames.becomeReachable(s, 2, e0 + 2);
      // What router 1 relays of router 0: its route and its advertisement, with 0's signatures.
      ControlMessage.Route route = null;
      ControlMessage.PredicateAd ad = null;
      while (route == null || ad == null) {
        ByteBuf f = RawFrames.readFrame(s.getInputStream());
        assertNotNull(f, "router 1 closed the session");
        try {
          Object m = RouterFrameCodec.decode(f);
          if (m instanceof ControlMessage.RouteUpdate u) {
            for (ControlMessage.Route r : u.routes()) {
              if (r.destination() == 0 && r.signature() != null) {
                route = r;
              }
            }
          } else if (m instanceof ControlMessage.PredicateBatch b) {
            for (ControlMessage.Advertisement a : b.ads()) {
              if (a instanceof ControlMessage.PredicateAd p && p.origin() == 0) {
                ad = p;
              }
            }
          } else if (m instanceof ControlMessage.PredicateAd p && p.origin() == 0) {
            ad = p;
          }
        } finally {
          f.release();
        }
      }
      assertNotNull(ad.signature(), "router 0's advertisement travels signed");
      OriginSignature garbage = new OriginSignature(new byte[64]);
      long[] filter = BloomParameters.DEFAULT.newFilter();
      filter[0] = 0x11;
      EncodedPredicate other = EncodedPredicate.ofFilters(BloomParameters.DEFAULT, List.of(filter));
      out.write(
          RawFrames.router(
              new ControlMessage.RouteUpdate(
                  2,
                  List.of(
                      new ControlMessage.Route(
                          0, route.epoch(), route.seqno() + 1000, 0, false, route.signature()),
                      new ControlMessage.Route(0, route.epoch() + 1, 0, 0, false, garbage)))));
      out.write(
          RawFrames.router(
              new ControlMessage.PredicateBatch(
                  2,
                  List.of(
                      new ControlMessage.PredicateAd(
                          2, 0, ad.epoch(), ad.seq() + 1000, other, ad.signature())))));
      out.write(
          RawFrames.router(
              new ControlMessage.PredicateBatch(
                  2,
                  List.of(
                      new ControlMessage.PredicateAd(2, 0, ad.epoch() + 1, 0, other, garbage)))));
      out.flush();
      Federation.await(
          "router 1 to refuse the forged routes", () -> refused(r1, "route", "bad_signature") >= 2);
      Federation.await(
          "router 1 to refuse the forged advertisements",
          () -> refused(r1, "advertisement", "bad_signature") >= 2);
      assertEquals(0, nextHop(r1, 0), "router 0 is still reached directly");
      assertEquals(genuine, r1.view().predicateOf(0), "router 0's genuine predicate stays in use");
      assertEquals(0, refused(r0, "route", "bad_signature"));
    }
  }

  /**
   * While the control thread is busy, a link's control messages wait for their signature checks; at
   * 64 of them the link stops being read (what one read brought is still decoded), and reading
   * resumes once they are applied, none lost.
   */
  @Test
  void aLinkIsNotReadWhileTooManyOfItsMessagesWaitForTheLinksControlThread() throws Exception {
    long e0 = System.currentTimeMillis();
    Router r1 = start(1, e0 + 1, List.of(2));
    try (SSLSocket s = tlsSocket(r1, 2)) {
      OutputStream out = s.getOutputStream();
      out.write(
          RawFrames.router(
              new RouterHello(2, e0 + 2, 64, BloomParameters.DEFAULT, 0, new byte[0])));
      RawFrames.becomeReachable(s, 2, e0 + 2);
      // Its unsigned route to itself is refused: from then on the adjacency is up.
      Federation.await(
          "the neighbour's unsigned route refused", () -> refused(r1, "route", "unsigned") == 1);
      java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
      r1.linkControl()
          .execute(
              () -> {
                try {
                  busy.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      long before = controlReceived(r1, 2);
      int sent = 300;
      for (int i = 0; i < sent; i++) {
        out.write(
            RawFrames.router(
                new ControlMessage.RouteUpdate(
                    2, List.of(new ControlMessage.Route(2, e0 + 2, i, 0, false)))));
      }
      out.flush();
      io.netty.channel.Channel session = r1.links().byNumber[2].session;
      Federation.await(
          "router 1 to stop reading the link",
          () -> !session.config().isAutoRead() && controlReceived(r1, 2) - before >= 64);
      busy.countDown();
      Federation.await(
          "every message read and applied",
          () -> controlReceived(r1, 2) - before == sent && session.config().isAutoRead());
      Federation.await("every message applied", () -> refused(r1, "route", "unsigned") == 1 + sent);
    }
  }

  private static long controlReceived(Router r, int neighbour) {
    Matcher m =
        Pattern.compile(
                "(?m)^bdrp_link_control_received_total\\{neighbour=\""
                    + neighbour
                    + "\"\\} (\\d+)(?:\\.0)?$")
            .matcher(r.metricsText());
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  /**
   * A router whose certificate files are renewed floods its new certificate and signs its route
   * anew with the new key: its neighbour takes the new certificate and the re-signed route, and
   * refuses nothing meanwhile.
   */
  @Test
  void aRenewedCertificateIsFloodedAndClaimsAreSignedWithIt() throws Exception {
    long e0 = System.currentTimeMillis();
    Router r0 = start(0, e0, List.of(1));
    Router r1 = start(1, e0 + 1, List.of(0));
    r0.connect(1, r1.routerAddress());
    Federation.await("router 1's route to router 0", () -> r1.view().reachable().length >= 1);
    int before = r0.loop().submit(() -> r0.node().unicast().seqno()).get();
    Path[] renewed = ca.leaf("r0-renewed", "URI:" + RouterTls.URN + "0,IP:127.0.0.1");
    java.math.BigInteger serial = TlsFiles.certificate(renewed[0]).getSerialNumber();
    RouterTls files = r0.routerTls();
    java.nio.file.Files.copy(
        renewed[1], files.key(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    java.nio.file.Files.copy(
        renewed[0], files.cert(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Federation.await(
        "router 1 to hold router 0's renewed certificate",
        () -> {
          java.security.cert.X509Certificate c = r1.originKeys().certificateOf(0);
          return c != null && c.getSerialNumber().equals(serial);
        });
    Federation.await(
        "router 1 to take router 0's route signed with the new key",
        () -> {
          int now =
              r0.loop().submit(() -> r0.node().unicast().seqno()).syncUninterruptibly().getNow();
          return now > before
              && r1.loop()
                      .submit(() -> r1.node().unicast().selectedSeqno(0))
                      .syncUninterruptibly()
                      .getNow()
                  == now;
        });
    assertEquals(0, r1.loop().submit(() -> r1.node().claimsRefused()).get().longValue());
    assertEquals(0, nextHop(r1, 0));
  }

  /** A line of three routers with mutual TLS: every claim verifies, and messages cross it. */
  @Test
  void aLineOfThreeSignedRoutersDelivers() throws Exception {
    TestCerts lineCa = TestCerts.ca(dir.resolve("line"), "line-ca");
    Topology line =
        Topology.of(
            List.of("Model (0 - Test): line"),
            List.of(node(0), node(1), node(2)),
            List.of(edge(0, 0, 1), edge(1, 1, 2)));
    try (Federation f = new Federation(line, RouterConfig.LinkTransport.TCP, lineCa)) {
      f.awaitRoutes();
      LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
      BdrpClient sub = f.client(2, "sub");
      sub.subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);
      f.awaitPredicates();
      BdrpClient pub = f.client(0, "pub");
      pub.send(Message.builder().put("x", 1L).build()).get(10, TimeUnit.SECONDS);
      Message m = inbox.poll(20, TimeUnit.SECONDS);
      assertNotNull(m, "the message crossed the line");
      for (Router r : f.routers) {
        assertEquals(3, r.loop().submit(() -> r.node().certificatesHeld()).get());
        assertEquals(0, r.loop().submit(() -> r.node().claimsRefused()).get().longValue());
        assertTrue(r.metricsText().contains("bdrp_router_certificates 3"), r.metricsText());
      }
    }
  }

  private static Node node(int id) {
    return new Node(id, id, 0, 0, 0, -1, "RT_NODE");
  }

  private static Edge edge(int id, int from, int to) {
    return new Edge(id, from, to, 1, 1, 1, -1, -1, "E_RT", Edge.Direction.UNDIRECTED);
  }
}
