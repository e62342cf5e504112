package io.bdrp.testbed;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for child servers (which must be told their port before they start).
 *
 * <p>They are taken below the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}): a
 * port from that range, free a moment ago, can be taken by an outgoing connection (a router
 * dialling its neighbour) before the server told to listen on it has started, which then fails to
 * bind. Below the range only a listener can take it.
 */
public final class Ports {
  private Ports() {}

  /** Ports handed out by this JVM: a random pick must not name one twice. */
  private static final java.util.Set<Integer> GIVEN =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The lowest port of the ephemeral range, or 0 when it cannot be read. */
  private static int ephemeralLow() {
    try {
      String[] r =
          Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return Integer.parseInt(r[0]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * A port that was free on 127.0.0.1 a moment ago, below the ephemeral range when there is one.
   */
  public static int free() throws IOException {
    int low = ephemeralLow();
    if (low > 11_000) {
      for (int attempt = 0; attempt < 200; attempt++) {
        int p = ThreadLocalRandom.current().nextInt(10_000, low);
        if (bindable(p) && GIVEN.add(p)) {
          return p;
        }
      }
    }
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
