package io.bdrp.router.links.udp;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.transport.UdpProtection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys of every UDP link session, appended to the file named by {@value #ENVIRONMENT} when it
 * is set, as {@code SSLKEYLOGFILE} does for TLS: for tools that must read or write a link's
 * datagrams (a packet capture's dissector, the transit benchmark's traffic generator). One line per
 * session: {@code router R neighbour N session S out HEX in HEX}. Written on the links' control
 * thread, in the order the sessions came up, never on the loop.
 */
final class UdpKeyLog {
  private static final Logger log = LoggerFactory.getLogger(UdpKeyLog.class);

  /** The environment variable naming the file. */
  static final String ENVIRONMENT = "BDRP_UDP_KEYLOG";

  private final int router;
  private final Path file;
  private final Executor writer;

  private UdpKeyLog(int router, Path file, Executor writer) {
    this.router = router;
    this.file = file;
    this.writer = writer;
  }

  /**
   * The log the environment asks for, or null (unset, or datagrams unprotected); a WARN when set,
   * since anyone who reads the file can forge and read this router's datagrams.
   */
  static UdpKeyLog fromEnvironment(RouterConfig config, Executor writer) {
    String path = System.getenv(ENVIRONMENT);
    if (path == null || path.isBlank() || config.udpProtection() == UdpProtection.NONE) {
      return null;
    }
    if (config.usesUdp()) {
      log.warn(
          "router {}: {} is set: the keys of every UDP link session are written to {}; anyone who"
              + " reads it can forge and read this router's datagrams",
          config.router(),
          ENVIRONMENT,
          path);
    }
    return new UdpKeyLog(config.router(), Path.of(path), writer);
  }

  /** Appends the keys of neighbour {@code neighbour}'s session {@code s}. */
  void append(int neighbour, UdpLinks.Session s) {
    HexFormat hex = HexFormat.of();
    String line =
        "router "
            + router
            + " neighbour "
            + neighbour
            + " session "
            + s.id()
            + " out "
            + hex.formatHex(s.keyOut())
            + " in "
            + hex.formatHex(s.keyIn())
            + "\n";
    try {
      writer.execute(
          () -> {
            try {
              Files.writeString(file, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
              log.warn("router {}: cannot append to {} {}: {}", router, ENVIRONMENT, file, e);
            }
          });
    } catch (RejectedExecutionException stopping) {
      // The router is stopping.
    }
  }
}
