package io.bdrp.router;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Linux capabilities this process holds ({@code CapEff} of {@code /proc/self/status}): what
 * decides whether it may force socket buffer sizes or load BPF programs, rather than its user id (a
 * root process may have been started without them).
 */
public final class Capabilities {
  /** CAP_NET_ADMIN: socket buffers beyond the sysctl limits, qdiscs and TC filters. */
  public static final int NET_ADMIN = 12;

  /** CAP_SYS_ADMIN, which also allows loading BPF programs. */
  public static final int SYS_ADMIN = 21;

  /** CAP_BPF (Linux 5.8 and later). */
  public static final int BPF = 39;

  private Capabilities() {}

  /** The effective set, one bit per capability; -1 when it cannot be read (not Linux). */
  public static long effective() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("CapEff:")) {
          return Long.parseUnsignedLong(line.substring(7).trim(), 16);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return -1;
  }

  /** Whether the process holds capability {@code cap} (false when that cannot be read). */
  public static boolean has(int cap) {
    long eff = effective();
    return eff != -1 && (eff & (1L << cap)) != 0;
  }
}
