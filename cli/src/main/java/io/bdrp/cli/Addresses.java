package io.bdrp.cli;

import io.bdrp.router.config.ConfigAddress;
import java.net.InetSocketAddress;

/** HOST:PORT options, read by the router's configuration's parser ({@link ConfigAddress}). */
final class Addresses {
  private Addresses() {}

  /** Parses HOST:PORT or [IPV6]:PORT with a port from 1; the error names the option. */
  static InetSocketAddress parse(String option, String s) {
    return parse(option, s, 1);
  }

  /** Parses HOST:PORT or [IPV6]:PORT with a port of at least {@code minPort} (0: any free port). */
  static InetSocketAddress parse(String option, String s, int minPort) {
    try {
      return ConfigAddress.parse(s, minPort);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
    }
  }
}
