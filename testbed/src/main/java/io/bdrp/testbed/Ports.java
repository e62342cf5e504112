package io.bdrp.testbed;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Free loopback ports for child servers (which must be told their port before they start). */
public final class Ports {
  private Ports() {}

  /** A port that was free on 127.0.0.1 a moment ago. */
  public static int free() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }
}
