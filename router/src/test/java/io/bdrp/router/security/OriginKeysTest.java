package io.bdrp.router.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.router.TestCerts;
import io.bdrp.routing.OriginAuthority;
import io.bdrp.routing.OriginAuthority.CertificateVerdict;
import io.bdrp.routing.OriginAuthority.Verdict;
import io.bdrp.routing.OriginSignature;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Signing and verifying routers' claims with their TLS certificates (openssl-made, P-256). */
class OriginKeysTest {
  @TempDir static Path dir;
  private static TestCerts ca;
  private static TestCerts rogue;
  private static OriginKeys r1;
  private static OriginKeys r2;

  private static OriginKeys keys(TestCerts by, String name, int number) throws Exception {
    Path[] leaf = by.leaf(name, "URI:" + RouterTls.URN + number);
    return OriginKeys.load(number, leaf[0], leaf[1], ca.cert(), null);
  }

  @BeforeAll
  static void certificates() throws Exception {
    ca = TestCerts.ca(dir, "net-ca");
    rogue = TestCerts.ca(dir, "rogue-ca");
    r1 = keys(ca, "r1", 1);
    r2 = keys(ca, "r2", 2);
  }

  @Test
  void aClaimSignedByItsOriginVerifiesWithTheOriginsCertificate() throws Exception {
    OriginKeys v = keys(ca, "v-ok", 9);
    assertEquals(CertificateVerdict.NEW, v.offerCertificate(1, r1.ownCertificate()));
    assertEquals(CertificateVerdict.KNOWN, v.offerCertificate(1, r1.ownCertificate()));
    byte[] claim = OriginAuthority.routeClaim(1, 5, 7);
    assertEquals(Verdict.OK, v.verify(1, claim, r1.sign(claim)));
    EncodedPredicate p =
        EncodedPredicate.ofFilters(new BloomParameters(64, 1), List.of(new long[] {0x11}));
    byte[] ad = OriginAuthority.advertisementClaim(1, 5, 9, p);
    assertEquals(Verdict.OK, v.verify(1, ad, r1.sign(ad)));
  }

  /**
   * A change whose base is the version PREDICATES holds is applied and verified ahead of use; one
   * with a signature that is not the origin's over the result, or of another base, is left to the
   * loop.
   */
  @Test
  void aChangeIsAppliedAndVerifiedAheadAgainstTheVersionHeld() throws Exception {
    OriginKeys v = keys(ca, "v-change", 9);
    v.offerCertificate(1, r1.ownCertificate());
    BloomParameters params = new BloomParameters(64, 1);
    EncodedPredicate base = EncodedPredicate.ofFilters(params, List.of(new long[] {0x11}));
    EncodedPredicate next =
        EncodedPredicate.ofFilters(params, List.of(new long[] {0x11}, new long[] {0x22}));
    v.held(1, 5, 1, base);
    OriginSignature sig = r1.sign(OriginAuthority.advertisementClaim(1, 5, 2, next));
    EncodedPredicate added = next.minus(base);
    EncodedPredicate none = EncodedPredicate.empty(params);
    io.bdrp.routing.ControlMessage.PredicateDelta d =
        new io.bdrp.routing.ControlMessage.PredicateDelta(2, 1, 5, 1, 2, none, added, sig);
    v.prepare(d);
    assertEquals(next, v.preparedChange(1, 5, 1, 2, sig));
    assertEquals(null, v.preparedChange(1, 5, 1, 2, sig), "taken once");

    // Signed over another result: not prepared.
    OriginSignature other = r1.sign(OriginAuthority.advertisementClaim(1, 5, 2, base));
    v.prepare(new io.bdrp.routing.ControlMessage.PredicateDelta(2, 1, 5, 1, 2, none, added, other));
    assertEquals(null, v.preparedChange(1, 5, 1, 2, other));
    // Another base than the one held: left to the loop.
    v.held(1, 5, 3, next);
    v.prepare(d);
    assertEquals(null, v.preparedChange(1, 5, 1, 2, sig));
  }

  /** A router whose certificate has an Ed25519 key signs with Ed25519. */
  @Test
  void anEd25519CertificateSignsAndVerifies() throws Exception {
    Path[] leaf = ca.ed25519Leaf("r5-ed", "URI:" + RouterTls.URN + "5");
    OriginKeys ed = OriginKeys.load(5, leaf[0], leaf[1], ca.cert(), null);
    OriginKeys v = keys(ca, "v-ed", 9);
    assertEquals(CertificateVerdict.NEW, v.offerCertificate(5, ed.ownCertificate()));
    byte[] claim = OriginAuthority.routeClaim(5, 5, 7);
    OriginSignature sig = ed.sign(claim);
    assertEquals(64, sig.length(), "an Ed25519 signature");
    assertEquals(Verdict.OK, v.verify(5, claim, sig));
    assertEquals(Verdict.BAD_SIGNATURE, v.verify(5, OriginAuthority.routeClaim(5, 5, 8), sig));
  }

  /** Claims of an origin whose certificate has expired are not taken, even ones verified before. */
  @Test
  void anExpiredCertificateSpeaksForNobody() throws Exception {
    long[] clock = {System.currentTimeMillis()};
    Path[] leaf = ca.leaf("v-expiry", "URI:" + RouterTls.URN + "9");
    OriginKeys v = OriginKeys.load(9, leaf[0], leaf[1], ca.cert(), null, () -> clock[0]);
    assertEquals(CertificateVerdict.NEW, v.offerCertificate(1, r1.ownCertificate()));
    byte[] claim = OriginAuthority.routeClaim(1, 5, 7);
    OriginSignature sig = r1.sign(claim);
    assertEquals(Verdict.OK, v.verify(1, claim, sig));
    clock[0] = v.certificateOf(1).getNotAfter().getTime() + 1;
    assertEquals(Verdict.UNKNOWN_CERTIFICATE, v.verify(1, claim, sig));
  }

  @Test
  void tamperedClaimsDoNotVerify() throws Exception {
    OriginKeys v = keys(ca, "v-tamper", 9);
    v.offerCertificate(1, r1.ownCertificate());
    OriginSignature route = r1.sign(OriginAuthority.routeClaim(1, 5, 7));
    assertEquals(
        Verdict.BAD_SIGNATURE, v.verify(1, OriginAuthority.routeClaim(1, 5, 8), route), "seqno");
    assertEquals(
        Verdict.BAD_SIGNATURE, v.verify(1, OriginAuthority.routeClaim(1, 6, 7), route), "epoch");
    BloomParameters params = new BloomParameters(64, 1);
    EncodedPredicate p = EncodedPredicate.ofFilters(params, List.of(new long[] {0x11}));
    EncodedPredicate q = EncodedPredicate.ofFilters(params, List.of(new long[] {0x13}));
    OriginSignature ad = r1.sign(OriginAuthority.advertisementClaim(1, 5, 9, p));
    assertEquals(
        Verdict.BAD_SIGNATURE,
        v.verify(1, OriginAuthority.advertisementClaim(1, 5, 9, q), ad),
        "other filters under the same version");
    // A route's signature is not an advertisement's, even over the same numbers.
    assertEquals(
        Verdict.BAD_SIGNATURE, v.verify(1, OriginAuthority.advertisementClaim(1, 5, 7, p), route));
    byte[] bytes = route.bytes();
    bytes[bytes.length / 2] ^= 1;
    assertEquals(
        Verdict.BAD_SIGNATURE,
        v.verify(1, OriginAuthority.routeClaim(1, 5, 7), new OriginSignature(bytes)),
        "a flipped bit in the signature");
  }

  @Test
  void aClaimSignedWithAnotherRoutersKeyDoesNotVerify() throws Exception {
    OriginKeys v = keys(ca, "v-key", 9);
    v.offerCertificate(1, r1.ownCertificate());
    v.offerCertificate(2, r2.ownCertificate());
    byte[] claim = OriginAuthority.routeClaim(1, 5, 7);
    assertEquals(Verdict.BAD_SIGNATURE, v.verify(1, claim, r2.sign(claim)));
    assertEquals(
        Verdict.OK,
        v.verify(
            2, OriginAuthority.routeClaim(2, 5, 7), r2.sign(OriginAuthority.routeClaim(2, 5, 7))));
  }

  @Test
  void aCertificateIsTakenOnlyForTheRouterItNamesUnderTheNetworksCa() throws Exception {
    OriginKeys v = keys(ca, "v-cert", 9);
    assertEquals(CertificateVerdict.BAD, v.offerCertificate(3, r1.ownCertificate()), "names 1");
    OriginKeys impostor = keys(rogue, "rogue-r1", 1);
    assertEquals(
        CertificateVerdict.BAD, v.offerCertificate(1, impostor.ownCertificate()), "another CA");
    assertEquals(CertificateVerdict.BAD, v.offerCertificate(1, new byte[] {0x30, 0x03, 1, 2, 3}));
    byte[] claim = OriginAuthority.routeClaim(1, 5, 7);
    assertEquals(Verdict.UNKNOWN_CERTIFICATE, v.verify(1, claim, impostor.sign(claim)));
    // With the genuine certificate, the impostor's signature is refused.
    v.offerCertificate(1, r1.ownCertificate());
    assertEquals(Verdict.BAD_SIGNATURE, v.verify(1, claim, impostor.sign(claim)));
    assertEquals(Verdict.UNSIGNED, v.verify(1, claim, null));
  }

  @Test
  void aCertificateThatDoesNotNameItsRouterCannotSign() throws Exception {
    Path[] leaf = ca.leaf("no-urn", "IP:127.0.0.1");
    OriginKeys k = OriginKeys.load(4, leaf[0], leaf[1], ca.cert(), null);
    OriginKeys v = keys(ca, "v-urn", 9);
    assertEquals(CertificateVerdict.BAD, v.offerCertificate(4, k.ownCertificate()));
    assertThrows(
        IllegalArgumentException.class,
        () -> OriginKeys.load(4, leaf[0], dir.resolve("r1.key"), ca.cert(), null),
        "a key that is not the certificate's");
  }
}
