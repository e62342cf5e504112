package io.bdrp.cli;

import java.net.InetSocketAddress;

/** HOST:PORT options. */
final class Addresses {
  private Addresses() {}

  /** Parses HOST:PORT with a port from 1; the error names the option. */
  static InetSocketAddress parse(String option, String s) {
    return parse(option, s, 1);
  }

  /** Parses HOST:PORT with a port of at least {@code minPort} (0: any free port). */
  static InetSocketAddress parse(String option, String s, int minPort) {
    int colon = s.lastIndexOf(':');
    if (colon <= 0 || colon == s.length() - 1) {
      throw new IllegalArgumentException(option + " must be HOST:PORT, got '" + s + "'");
    }
    try {
      int port = Integer.parseInt(s.substring(colon + 1));
      if (port < minPort || port > 65535) {
        throw new IllegalArgumentException(
            option + ": port " + port + " outside " + minPort + "..65535");
      }
      return InetSocketAddress.createUnresolved(s.substring(0, colon), port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + ": port of '" + s + "' is not a number");
    }
  }
}
