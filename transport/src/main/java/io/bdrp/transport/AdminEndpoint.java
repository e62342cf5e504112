package io.bdrp.transport;

import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * Where a router's admin API listens (its metrics port), as it tells its neighbours in the {@link
 * RouterHello}: a {@link TransportEndpoint} named {@value #TRANSPORT} whose bytes are
 *
 * <pre>
 *  | port u16 (1..65535) | flags u8 (bit 0: https; bits 1..7 reserved, 0) |
 * </pre>
 *
 * No host: the receiver makes the URL from the address the session's far end has ({@link #url}), so
 * a neighbour can point a crawler of the federation at its own address only, never at a third host.
 * A router that predates it finds an endpoint of a transport it does not know and ignores it, as
 * every router ignores endpoints it does not read.
 *
 * @param port the TCP port of the admin API, 1..65535
 * @param https whether it speaks TLS ({@code tls.metrics: true})
 */
public record AdminEndpoint(int port, boolean https) {
  /** The endpoint's name in the hello. */
  public static final String TRANSPORT = "admin";

  /** Bytes of the endpoint. */
  public static final int BYTES = 3;

  private static final int HTTPS = 0x01;

  public AdminEndpoint {
    if (port < 1 || port > 0xFFFF) {
      throw new IllegalArgumentException("admin port " + port + " outside 1..65535");
    }
  }

  /** This endpoint as the hello carries it. */
  public TransportEndpoint toEndpoint() {
    return new TransportEndpoint(
        TRANSPORT, new byte[] {(byte) (port >>> 8), (byte) port, (byte) (https ? HTTPS : 0)});
  }

  /**
   * The admin endpoint {@code h} carries, or null when it carries none.
   *
   * @throws IllegalArgumentException naming what is wrong when its bytes are not an admin endpoint
   *     (not {@value #BYTES} bytes, port 0, a reserved flag set): the neighbour's input, to be
   *     ignored and counted, not a reason to refuse the link
   */
  public static AdminEndpoint of(RouterHello h) {
    byte[] b = h.endpoint(TRANSPORT);
    return b == null ? null : decode(b);
  }

  /**
   * Reads an admin endpoint's bytes.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static AdminEndpoint decode(byte[] b) {
    if (b.length != BYTES) {
      throw new IllegalArgumentException(
          "admin endpoint of " + b.length + " bytes; it takes " + BYTES);
    }
    int port = (b[0] & 0xFF) << 8 | (b[1] & 0xFF);
    int flags = b[2] & 0xFF;
    if ((flags & ~HTTPS) != 0) {
      throw new IllegalArgumentException(
          String.format("admin endpoint flags 0x%02x set reserved bits", flags));
    }
    return new AdminEndpoint(port, (flags & HTTPS) != 0);
  }

  /**
   * The base URL of the admin API at {@code host}, the address of the session's far end: {@code
   * http://HOST:PORT} or {@code https://HOST:PORT}, an IPv6 address in brackets (its scope as
   * {@code %25}).
   */
  public String url(InetAddress host) {
    String a = host.getHostAddress();
    if (host instanceof Inet6Address) {
      a = "[" + a.replace("%", "%25") + "]";
    }
    return (https ? "https://" : "http://") + a + ":" + port;
  }
}
