package io.bdrp.transport;

import java.util.Locale;

/**
 * What protects the DATA datagrams of a UDP link ({@code auth.udp} in a router's configuration).
 * Both ends of a link that carries datagrams must use the same; a hello that announces another is
 * refused ({@code INCOMPATIBLE_PEER}, parameter {@code auth.udp}). See {@link DatagramAuth} for the
 * layouts.
 */
public enum UdpProtection {
  /** Datagrams as they are: anyone who can reach the port can inject DATA. */
  NONE(0),
  /**
   * Each datagram carries a sequence number and a SipHash-2-4 tag under a key of the link's
   * session; forged, altered and replayed datagrams are dropped, by the JVM and by the kernel fast
   * path.
   */
  MAC(1),
  /**
   * Each datagram's frame is encrypted and authenticated with AES-128-GCM under the session's key;
   * the kernel fast path cannot read it and is not used.
   */
  ENCRYPT(2);

  private final int wireId;

  UdpProtection(int wireId) {
    this.wireId = wireId;
  }

  /** Its number in a ROUTER_HELLO. */
  public int wireId() {
    return wireId;
  }

  /** Its name in a configuration file. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The protection numbered {@code id} in a hello, or null if none is. */
  public static UdpProtection ofWire(int id) {
    for (UdpProtection p : values()) {
      if (p.wireId == id) {
        return p;
      }
    }
    return null;
  }
}
