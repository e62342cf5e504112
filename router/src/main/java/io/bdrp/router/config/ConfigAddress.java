package io.bdrp.router.config;

import java.net.InetSocketAddress;

/**
 * The one reader and writer of addresses, for configuration files and command-line options alike:
 * {@code HOST:PORT}, or {@code [IPV6]:PORT} with the host in brackets. The port is after the last
 * ':', so an unbracketed IPv6 host ({@code ::1:7400}) also reads, as host {@code ::1}; one pair of
 * brackets around the host is taken off, whatever it holds. The host is not resolved.
 */
public final class ConfigAddress {
  private ConfigAddress() {}

  /**
   * {@code s} as an unresolved address whose port is from {@code minPort} to 65535.
   *
   * @throws IllegalArgumentException saying what is wrong, without naming the field or option
   */
  public static InetSocketAddress parse(String s, int minPort) {
    int colon = s.lastIndexOf(':');
    if (colon <= 0 || colon == s.length() - 1) {
      throw new IllegalArgumentException("expected host:port, got '" + s + "'");
    }
    String host = s.substring(0, colon);
    if (host.length() >= 2 && host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(s.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("port of '" + s + "' is not a number");
    }
    if (port < minPort || port > 65535) {
      throw new IllegalArgumentException("port " + port + " outside " + minPort + "..65535");
    }
    return InetSocketAddress.createUnresolved(host, port);
  }

  /** {@code a} as {@link #parse} reads it: HOST:PORT, an IPv6 host in brackets. */
  public static String format(InetSocketAddress a) {
    String host = a.getHostString();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }
}
