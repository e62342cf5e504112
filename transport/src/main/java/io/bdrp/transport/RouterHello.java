package io.bdrp.transport;

import io.bdrp.encoding.bloom.BloomParameters;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * First frame of a router link, sent by both sides: every parameter that must agree across the
 * network, and who the sender is.
 *
 * <ul>
 *   <li>{@code protocol}: the router-link protocol revision ({@link #PROTOCOL});
 *   <li>{@code routerNumber}: the sender's router number, below {@code maxRouters};
 *   <li>{@code epoch}: the epoch the sender drew at start;
 *   <li>{@code maxRouters}: router numbers are below it; it sizes D in every DATA frame;
 *   <li>{@code bloom}: the Bloom parameters of encoded predicates;
 *   <li>{@code udpPort}: the UDP port where the sender takes DATA datagrams from this link's
 *       neighbour (at the session's remote address), or 0 for none;
 *   <li>{@code authToken}: at most {@link Frames#MAX_TOKEN_BYTES} bytes; empty for none;
 *   <li>{@code udpProtection}: what protects the DATA datagrams of this session ({@link
 *       UdpProtection}); checked against the receiver's when both announce a UDP port;
 *   <li>{@code udpNonce}: {@link DatagramAuth#NONCE_BYTES} random bytes, fresh per session, from
 *       which the session's datagram keys are derived ({@link DatagramAuth#key}); empty with {@link
 *       UdpProtection#NONE}.
 *   <li>{@code endpoints}: where the neighbour reaches this router's end of data transports besides
 *       TCP ({@link TransportEndpoint}: an RDMA ring's queue pair and address, ...), at most {@link
 *       TransportEndpoint#MAX_ENDPOINTS}, one per transport name; empty for none. Revision 6 and
 *       later; an empty list is not written, so a hello without endpoints has the layout of
 *       revision 5 (but for its revision number). The endpoint {@value AdminEndpoint#TRANSPORT} is
 *       not a data transport: it tells the port of the sender's admin API ({@link AdminEndpoint}).
 * </ul>
 *
 * The receiver checks the network-wide parameters with {@link #incompatibility} and refuses the
 * link with {@link ErrorCode#INCOMPATIBLE_PEER} on the first that differs, naming it and both
 * values; then the neighbour and the token ({@link ErrorCode#NOT_AUTHORIZED}).
 */
public record RouterHello(
    int protocol,
    int routerNumber,
    long epoch,
    int maxRouters,
    BloomParameters bloom,
    int udpPort,
    byte[] authToken,
    UdpProtection udpProtection,
    byte[] udpNonce,
    List<TransportEndpoint> endpoints) {
  /**
   * The router-link protocol revision this code speaks. 2: the hello carries {@code maxRouters} and
   * the UDP port, and DATA may travel in datagrams. 3: a PREDICATE_AD's filters are each a list of
   * positions or a bitmap, whichever is shorter. 4: the hello and every encoded predicate name the
   * category scheme, positions are Rice-coded, PREDICATE_DELTA carries changes, and each entry of a
   * PREDICATE_BATCH starts with its kind. 5: the hello carries the UDP protection and a nonce, and
   * datagrams carry a sequence number and a tag (or are encrypted); routes and advertisements may
   * carry their origin's signature, and ROUTER_CERT carries a router's certificate chain. 6: the
   * hello may end with transport endpoints, and the accepting router answers the dialler's hello
   * once it has checked it.
   */
  public static final int PROTOCOL = 6;

  /**
   * The name of an empty endpoint that says the sender takes ROUTE_DIGEST and TABLE_REQUEST frames
   * (periodic full updates as digests; docs/wire-protocol.md). Not a data transport: a capability,
   * which routers that predate it ignore as any endpoint they do not read, and then get full
   * updates only.
   */
  public static final String ROUTE_DIGESTS = "route-digest";

  /** Whether the sender takes ROUTE_DIGEST and TABLE_REQUEST frames ({@link #ROUTE_DIGESTS}). */
  public boolean takesRouteDigests() {
    return endpoint(ROUTE_DIGESTS) != null;
  }

  /** The first revision whose hello may carry transport endpoints. */
  public static final int ENDPOINTS_SINCE = 6;

  /** Most routers a network can number: D holds at most {@link DataHeader#MAX_D_WORDS} words. */
  public static final int MAX_ROUTERS = DataHeader.MAX_D_WORDS * 64;

  public RouterHello {
    Frames.checkU16("protocol", protocol);
    Frames.checkU16("routerNumber", routerNumber);
    if (maxRouters < 1 || maxRouters > MAX_ROUTERS) {
      throw new IllegalArgumentException("maxRouters " + maxRouters + " outside 1.." + MAX_ROUTERS);
    }
    Objects.requireNonNull(bloom, "bloom");
    Frames.checkU16("udpPort", udpPort);
    authToken = Frames.checkToken(authToken);
    Objects.requireNonNull(udpProtection, "udpProtection");
    udpNonce = udpNonce.clone();
    if (udpProtection == UdpProtection.NONE
        ? udpNonce.length != 0
        : udpNonce.length != DatagramAuth.NONCE_BYTES) {
      throw new IllegalArgumentException(
          "udpNonce has "
              + udpNonce.length
              + " bytes; "
              + udpProtection.configName()
              + " needs "
              + (udpProtection == UdpProtection.NONE ? 0 : DatagramAuth.NONCE_BYTES));
    }
    endpoints = List.copyOf(endpoints);
    if (!endpoints.isEmpty() && protocol < ENDPOINTS_SINCE) {
      throw new IllegalArgumentException(
          "transport endpoints need protocol revision " + ENDPOINTS_SINCE + ", not " + protocol);
    }
    if (endpoints.size() > TransportEndpoint.MAX_ENDPOINTS) {
      throw new IllegalArgumentException(
          endpoints.size() + " transport endpoints, more than " + TransportEndpoint.MAX_ENDPOINTS);
    }
    Set<String> names = new HashSet<>();
    for (TransportEndpoint e : endpoints) {
      if (!names.add(e.transport())) {
        throw new IllegalArgumentException("two endpoints for transport " + e.transport());
      }
    }
  }

  /** A hello of revision {@code protocol} without transport endpoints. */
  public RouterHello(
      int protocol,
      int routerNumber,
      long epoch,
      int maxRouters,
      BloomParameters bloom,
      int udpPort,
      byte[] authToken,
      UdpProtection udpProtection,
      byte[] udpNonce) {
    this(
        protocol,
        routerNumber,
        epoch,
        maxRouters,
        bloom,
        udpPort,
        authToken,
        udpProtection,
        udpNonce,
        List.of());
  }

  /** A hello of this code's protocol revision. */
  public RouterHello(
      int routerNumber,
      long epoch,
      int maxRouters,
      BloomParameters bloom,
      int udpPort,
      byte[] authToken,
      UdpProtection udpProtection,
      byte[] udpNonce) {
    this(
        PROTOCOL,
        routerNumber,
        epoch,
        maxRouters,
        bloom,
        udpPort,
        authToken,
        udpProtection,
        udpNonce);
  }

  /**
   * A hello of this code's protocol revision whose datagrams carry a tag ({@link
   * UdpProtection#MAC}, the default), with a fresh nonce.
   */
  public RouterHello(
      int routerNumber,
      long epoch,
      int maxRouters,
      BloomParameters bloom,
      int udpPort,
      byte[] authToken) {
    this(
        PROTOCOL,
        routerNumber,
        epoch,
        maxRouters,
        bloom,
        udpPort,
        authToken,
        UdpProtection.MAC,
        DatagramAuth.newNonce());
  }

  /**
   * A network-wide parameter on which two routers differ.
   *
   * @param parameter its name as in the router configuration ({@code routing.maxRouters}, ...)
   * @param reason a sentence naming the parameter and both values
   */
  public record Incompatibility(String parameter, String reason) {}

  /**
   * Why a neighbour that sent {@code theirs} cannot join the network of the router that sends this
   * hello, or null if every network-wide parameter agrees. Checked in order: protocol revision,
   * router number (not this router's own, and below this network's {@code maxRouters}), {@code
   * maxRouters}, Bloom bits, Bloom hashes, UDP protection (when both announce a UDP port), category
   * scheme.
   */
  public Incompatibility incompatibility(RouterHello theirs) {
    if (theirs.protocol != protocol) {
      return new Incompatibility(
          "protocol",
          "router-link protocol differs: the neighbour speaks revision "
              + theirs.protocol
              + ", this router "
              + protocol);
    }
    if (theirs.routerNumber == routerNumber) {
      return new Incompatibility(
          "router",
          "router number clashes: the neighbour claims number "
              + routerNumber
              + ", which is this router's own");
    }
    if (theirs.routerNumber >= maxRouters) {
      return new Incompatibility(
          "router",
          "router number out of range: the neighbour is router "
              + theirs.routerNumber
              + ", this network numbers routers 0.."
              + (maxRouters - 1));
    }
    Incompatibility d = differs("routing.maxRouters", theirs.maxRouters, maxRouters);
    if (d == null) {
      d = differs("bloom.bits", theirs.bloom.bits(), bloom.bits());
    }
    if (d == null) {
      d = differs("bloom.hashes", theirs.bloom.hashes(), bloom.hashes());
    }
    if (d == null && theirs.udpPort != 0 && udpPort != 0 && theirs.udpProtection != udpProtection) {
      d =
          new Incompatibility(
              "auth.udp",
              "auth.udp differs: the neighbour protects datagrams with "
                  + theirs.udpProtection.configName()
                  + ", this router with "
                  + udpProtection.configName());
    }
    if (d == null && theirs.bloom.categories() != bloom.categories()) {
      d =
          new Incompatibility(
              "bloom.categories",
              "bloom.categories differs: the neighbour has "
                  + theirs.bloom.categories().configName()
                  + ", this router "
                  + bloom.categories().configName());
    }
    return d;
  }

  private static Incompatibility differs(String parameter, int theirs, int ours) {
    return theirs == ours
        ? null
        : new Incompatibility(
            parameter,
            parameter + " differs: the neighbour has " + theirs + ", this router " + ours);
  }

  /** This hello with {@code endpoints} in place of its own. */
  public RouterHello withEndpoints(List<TransportEndpoint> endpoints) {
    return new RouterHello(
        protocol,
        routerNumber,
        epoch,
        maxRouters,
        bloom,
        udpPort,
        authToken,
        udpProtection,
        udpNonce,
        endpoints);
  }

  /** The endpoint bytes the sender gives for {@code transport}, or null if it gives none. */
  public byte[] endpoint(String transport) {
    for (TransportEndpoint e : endpoints) {
      if (e.transport().equals(transport)) {
        return e.endpoint();
      }
    }
    return null;
  }

  @Override
  public byte[] authToken() {
    return authToken.clone();
  }

  @Override
  public byte[] udpNonce() {
    return udpNonce.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouterHello h
        && protocol == h.protocol
        && routerNumber == h.routerNumber
        && epoch == h.epoch
        && maxRouters == h.maxRouters
        && bloom.equals(h.bloom)
        && udpPort == h.udpPort
        && Arrays.equals(authToken, h.authToken)
        && udpProtection == h.udpProtection
        && Arrays.equals(udpNonce, h.udpNonce)
        && endpoints.equals(h.endpoints);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        protocol,
        routerNumber,
        epoch,
        maxRouters,
        bloom,
        udpPort,
        Arrays.hashCode(authToken),
        udpProtection,
        Arrays.hashCode(udpNonce),
        endpoints);
  }

  @Override
  public String toString() {
    return "RouterHello[protocol="
        + protocol
        + ", routerNumber="
        + routerNumber
        + ", epoch="
        + epoch
        + ", maxRouters="
        + maxRouters
        + ", bloom="
        + bloom
        + ", udpPort="
        + udpPort
        + ", authToken="
        + authToken.length
        + " bytes, udpProtection="
        + udpProtection
        + ", endpoints="
        + endpoints
        + "]";
  }
}
