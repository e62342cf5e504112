package io.bdrp.cli;

import java.net.InetSocketAddress;

/** HOST:PORT options. */
final class Addresses {
  private Addresses() {}

  /** Parses HOST:PORT; the error names the option. */
  static InetSocketAddress parse(String option, String s) {
    int colon = s.lastIndexOf(':');
    if (colon <= 0 || colon == s.length() - 1) {
      throw new IllegalArgumentException(option + " must be HOST:PORT, got '" + s + "'");
    }
    try {
      int port = Integer.parseInt(s.substring(colon + 1));
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException(option + ": port " + port + " outside 1..65535");
      }
      return InetSocketAddress.createUnresolved(s.substring(0, colon), port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + ": port of '" + s + "' is not a number");
    }
  }

  static String format(InetSocketAddress a) {
    return a.getHostString() + ":" + a.getPort();
  }
}
