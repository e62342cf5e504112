package io.bdrp.router.links.udp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What the kernel says of a UDP socket in {@code /proc/thread-self/net/udp} and {@code udp6} (the
 * calling thread's network namespace): the datagrams it dropped because the socket's receive buffer
 * was full. File reads: never on the router's loop.
 */
final class ProcNetUdp {
  private ProcNetUdp() {}

  /**
   * The {@code drops} column summed over the sockets bound to local {@code port}, or -1 when
   * neither file can be read (not Linux).
   */
  static long drops(int port) {
    long drops = -1;
    for (String f : List.of("/proc/thread-self/net/udp", "/proc/thread-self/net/udp6")) {
      try {
        for (String line : Files.readAllLines(Path.of(f))) {
          String[] cols = line.trim().split("\\s+");
          if (cols.length < 13 || !cols[1].contains(":")) {
            continue;
          }
          String local = cols[1];
          int p = Integer.parseInt(local.substring(local.lastIndexOf(':') + 1), 16);
          if (p == port) {
            drops = Math.max(drops, 0) + Long.parseLong(cols[cols.length - 1]);
          }
        }
      } catch (IOException | RuntimeException e) {
        // not Linux, or no such file: unknown unless the other file says
      }
    }
    return drops;
  }
}
