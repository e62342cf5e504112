package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.routing.ControlMessage.Hello;
import io.bdrp.routing.ControlMessage.PredicateAd;
import io.bdrp.routing.ControlMessage.PredicateBatch;
import io.bdrp.routing.ControlMessage.PredicateDelta;
import io.bdrp.routing.ControlMessage.PredicateRequest;
import io.bdrp.routing.ControlMessage.Route;
import io.bdrp.routing.ControlMessage.RouteUpdate;
import io.bdrp.routing.DistanceVectorHandTest.Net;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The routing module's side of signed claims, with a keyed-digest stand-in for the certificates'
 * keys (the router's ECDSA authority is tested in the router module): signatures pass through
 * relays unchanged, whatever form a relay sends a version in, and claims without their origin's
 * signature are not used.
 */
class SignedClaimsTest {
  /** Router r's "signature" is a digest of its number and the claim; known origins only. */
  static final class TestAuthority implements OriginAuthority {
    final int self;
    final Set<Integer> known = new HashSet<>();
    final List<String> refused = new ArrayList<>();

    TestAuthority(int self, int... known) {
      this.self = self;
      this.known.add(self);
      for (int k : known) {
        this.known.add(k);
      }
    }

    static OriginSignature signatureOf(int origin, byte[] claim) {
      try {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(ByteBuffer.allocate(4).putInt(origin).array());
        return new OriginSignature(Arrays.copyOf(d.digest(claim), 16));
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new AssertionError(e);
      }
    }

    @Override
    public boolean enabled() {
      return true;
    }

    @Override
    public OriginSignature sign(byte[] claim) {
      return signatureOf(self, claim);
    }

    @Override
    public Verdict verify(int origin, byte[] claim, OriginSignature signature) {
      if (signature == null) {
        return Verdict.UNSIGNED;
      }
      if (!known.contains(origin)) {
        return Verdict.UNKNOWN_CERTIFICATE;
      }
      return signatureOf(origin, claim).equals(signature) ? Verdict.OK : Verdict.BAD_SIGNATURE;
    }

    @Override
    public byte[] ownCertificate() {
      return new byte[] {(byte) self};
    }

    @Override
    public CertificateVerdict offerCertificate(int origin, byte[] chain) {
      return known.add(origin) ? CertificateVerdict.NEW : CertificateVerdict.KNOWN;
    }

    @Override
    public void refused(ClaimKind kind, int origin, int sender, Verdict why) {
      refused.add(kind.label() + " " + origin + " " + why.label());
    }
  }

  private static final BloomParameters PARAMS = new BloomParameters(128, 2);
  private static final RoutingConfig CONFIG =
      RoutingConfig.builder().maxRouters(64).updatePacingMs(0).build();

  private static EncodedPredicate enc(String p) {
    return new Encoder(PARAMS).encode(Predicate.parse(p));
  }

  private static OriginSignature adSig(int origin, long epoch, long seq, EncodedPredicate p) {
    return TestAuthority.signatureOf(
        origin, OriginAuthority.advertisementClaim(origin, epoch, seq, p));
  }

  /** A face that records what is sent on it. */
  private static final class Recorder implements Face {
    final int neighbour;
    final List<ControlMessage> sent = new ArrayList<>();

    Recorder(int neighbour) {
      this.neighbour = neighbour;
    }

    @Override
    public int neighbour() {
      return neighbour;
    }

    @Override
    public void send(ControlMessage m) {
      sent.add(m);
    }

    /** The advertisements sent, batches opened. */
    List<ControlMessage.Advertisement> ads() {
      List<ControlMessage.Advertisement> out = new ArrayList<>();
      for (ControlMessage m : sent) {
        switch (m) {
          case ControlMessage.Advertisement a -> out.add(a);
          case PredicateBatch b -> out.addAll(b.ads());
          default -> {}
        }
      }
      return out;
    }
  }

  @Test
  void aVersionsSignatureTravelsWithItWholeOrAsAChangeAndForgeriesAreRefused() {
    TestAuthority auth = new TestAuthority(0, 5);
    PredicateTable table = new PredicateTable(0, 100, PARAMS, CONFIG, () -> 0, () -> {});
    table.useAuthority(auth);
    Recorder one = new Recorder(1);
    Recorder two = new Recorder(2);
    table.adjacencyUp(one);
    table.adjacencyUp(two);
    EncodedPredicate v1 = enc("x = 1 || x = 2 || x = 3 || x = 4 || x = 5 || x = 6");
    EncodedPredicate v2 = enc("x = 1 || x = 2 || x = 3 || x = 4 || x = 5 || x = 7");
    table.receive(new PredicateAd(1, 5, 7, 1, v1, adSig(5, 7, 1, v1)));
    assertEquals(v1, table.get(5));
    // Version 2 as a change, signed over the whole it leads to: applied, and passed on signed.
    table.receive(
        new PredicateDelta(1, 5, 7, 1, 2, v1.minus(v2), v2.minus(v1), adSig(5, 7, 2, v2)));
    assertEquals(v2, table.get(5));
    ControlMessage.Advertisement last = two.ads().getLast();
    assertEquals(2, last.seq());
    assertEquals(adSig(5, 7, 2, v2), last.signature(), "the origin's signature, unchanged");
    assertInstanceOf(PredicateBatch.class, two.sent.getLast(), "a signed one goes in a batch");
    int passedOn = two.ads().size();

    // Forged: other filters under the origin's genuine signature of version 2, re-numbered; and a
    // version without a signature. Neither is held nor passed on.
    EncodedPredicate forged = enc("y = 1");
    table.receive(new PredicateAd(1, 5, 7, 3, forged, adSig(5, 7, 2, v2)));
    table.receive(new PredicateAd(1, 5, 7, 4, forged));
    assertEquals(v2, table.get(5));
    assertEquals(passedOn, two.ads().size());
    assertEquals(2, table.claimsRefused());
    assertEquals(
        List.of("advertisement 5 bad_signature", "advertisement 5 unsigned"), auth.refused);

    // This router's own advertisement is signed with its key.
    table.setOwn(enc("z = 1"));
    ControlMessage.Advertisement own = one.ads().getLast();
    assertEquals(0, own.origin());
    assertEquals(adSig(0, 100, 1, enc("z = 1")), own.signature());
  }

  @Test
  void aVersionRefusedForWantOfTheCertificateIsAskedForAgainWhenItComes() {
    TestAuthority auth = new TestAuthority(0);
    PredicateTable table = new PredicateTable(0, 100, PARAMS, CONFIG, () -> 0, () -> {});
    table.useAuthority(auth);
    Recorder one = new Recorder(1);
    table.adjacencyUp(one);
    EncodedPredicate p = enc("x = 1");
    table.receive(new PredicateAd(1, 8, 7, 1, p, adSig(8, 7, 1, p)));
    assertEquals(null, table.get(8));
    assertEquals(List.of("advertisement 8 unknown_certificate"), auth.refused);
    one.sent.clear();
    auth.known.add(8);
    table.certificateArrived(8);
    assertEquals(List.of(new PredicateRequest(0, 8)), one.sent);
    table.receive(new PredicateAd(1, 8, 7, 1, p, adSig(8, 7, 1, p)));
    assertEquals(p, table.get(8));
  }

  /**
   * Line 0 - 1 - 2, every router signing, and a forger attached to 2 that claims a newer route to 0
   * at metric 0: under 0's genuine signature of an older sequence number, and under a made-up one.
   * Router 2 refuses both and keeps its route through 1, and 0 never hears of the claim.
   */
  @Test
  void aForgedRouteIsRefusedAndTheGenuineOneStays() {
    final int forger = 9;
    Net net = new Net();
    DistanceVector o = net.start(0, 10, new TestAuthority(0, 1, 2), 1);
    net.start(1, 11, new TestAuthority(1, 0, 2), 0, 2);
    TestAuthority a2 = new TestAuthority(2, 0, 1);
    DistanceVector r2 = net.start(2, 12, a2, 1, forger);
    net.run(2_000);
    assertEquals(1, r2.nextHop(0));
    OriginSignature genuine =
        TestAuthority.signatureOf(0, OriginAuthority.routeClaim(0, o.routeEpoch(), o.seqno()));
    List<Route> forged =
        List.of(
            new Route(0, o.routeEpoch(), o.seqno() + 5, 0, false, genuine),
            new Route(0, o.routeEpoch() + 1, 0, 0, false, new OriginSignature(new byte[16])),
            new Route(0, o.routeEpoch() + 2, 0, 0, false));
    long t = net.now;
    for (; t <= 4_000; t += 50) {
      net.run(t);
      r2.receive(new Hello(forger, 99, r2.epoch()));
      r2.receive(new RouteUpdate(forger, forged));
      net.flush();
    }
    assertEquals(1, r2.nextHop(0), "the genuine route stays");
    assertEquals(2, r2.metric(0));
    assertTrue(r2.claimsRefused() >= 3);
    assertTrue(a2.refused.contains("route 0 bad_signature"));
    assertTrue(a2.refused.contains("route 0 unsigned"));
    assertEquals(0, o.claimsOvertaken(), "router 0 never had to move past a forged claim");
    // What 2 advertises for 0 carries 0's signature of the sequence number it selected.
    Route relayed = null;
    for (ControlMessage m : net.sent) {
      if (m instanceof RouteUpdate u && u.sender() == 2) {
        for (Route r : u.routes()) {
          if (r.destination() == 0) {
            relayed = r;
          }
        }
      }
    }
    assertNotNull(relayed);
    assertEquals(
        TestAuthority.signatureOf(
            0, OriginAuthority.routeClaim(0, relayed.epoch(), relayed.seqno())),
        relayed.signature());
  }

  /**
   * Signed routes are about 35 to 90 bytes each: a full update that would pass the frame limit goes
   * as several ROUTE_UPDATE frames, each within it, together carrying every route.
   */
  @Test
  void aFullUpdateOfSignedRoutesIsCutToTheFrameLimit() {
    RoutingConfig config =
        RoutingConfig.builder()
            .helloIntervalMs(100)
            .deadIntervalMs(350)
            .updateIntervalMs(400)
            .routeExpiryMs(1_400)
            .maxRouters(64)
            .maxControlFrameBytes(RoutingConfig.MIN_CONTROL_FRAME_BYTES)
            .build();
    long[] now = {1};
    int[] all = new int[63];
    for (int i = 0; i < all.length; i++) {
      all[i] = i + 1;
    }
    DistanceVector dv =
        new DistanceVector(
            0,
            10,
            config,
            () -> now[0],
            new DistanceVector.Listener() {
              @Override
              public void adjacencyUp(int n) {}

              @Override
              public void adjacencyDown(int n) {}

              @Override
              public void routesChanged() {}
            });
    dv.useAuthority(new TestAuthority(0, all));
    Recorder one = new Recorder(1);
    Recorder two = new Recorder(2);
    dv.addLink(one, 1);
    dv.addLink(two, 1);
    for (int n : new int[] {1, 2}) {
      dv.receive(new Hello(n, 10 + n, 0));
      dv.receive(new Hello(n, 10 + n, 10));
    }
    List<Route> routes = new ArrayList<>();
    for (int d = 3; d < 43; d++) {
      routes.add(
          new Route(
              d,
              5,
              1,
              0,
              false,
              TestAuthority.signatureOf(d, OriginAuthority.routeClaim(d, 5, 1))));
    }
    dv.receive(new RouteUpdate(1, routes));
    two.sent.clear();
    for (; now[0] < 1_000; now[0] += 20) {
      dv.receive(new Hello(1, 11, 10));
      dv.receive(new Hello(2, 12, 10));
      dv.tick();
    }
    Set<Integer> carried = new HashSet<>();
    int frames = 0;
    for (ControlMessage m : two.sent) {
      if (m instanceof RouteUpdate u && u.routes().size() > 2) {
        frames++;
        int bytes = 6;
        for (Route r : u.routes()) {
          bytes += 17 + (r.signature() == null ? 0 : 1 + r.signature().length());
          carried.add(r.destination());
        }
        assertTrue(bytes <= config.maxControlFrameBytes(), bytes + " bytes in one frame");
      }
    }
    assertTrue(frames >= 2, "a full update of 41 signed routes goes in more than one frame");
    for (int d = 3; d < 43; d++) {
      assertTrue(carried.contains(d), "route to " + d);
    }
    assertEquals(0, dv.claimsRefused());
  }
}
