package io.bdrp.cli;

import io.bdrp.client.BdrpClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code -r/--router HOST:PORT}: the router a client command attaches to; {@code BDRP_ROUTER} sets
 * it for a shell, as {@code NATS_URL} does for {@code nats}. {@code --wait}: how long to keep
 * trying while nothing listens there yet (a router still starting).
 */
final class RouterAddressOption {
  @Option(
      names = {"-r", "--router"},
      paramLabel = "HOST:PORT",
      defaultValue = "${env:BDRP_ROUTER:-127.0.0.1:7400}",
      description =
          "Router client address (default: $BDRP_ROUTER, else 127.0.0.1:7400; now"
              + " ${DEFAULT-VALUE}).")
  String router;

  @Option(
      names = "--wait",
      paramLabel = "DURATION",
      defaultValue = "30s",
      description =
          "While the router refuses connections (not started yet), keep trying this long, such as"
              + " 10s, 500ms or 2m; 0: do not wait (default: ${DEFAULT-VALUE}).")
  String wait;

  /** The address, or an error naming the option. */
  InetSocketAddress address() {
    return Addresses.parse("--router", router);
  }

  /** {@code --wait} as a duration, or an error naming the option. */
  Duration waitFor() {
    return duration("--wait", wait);
  }

  /**
   * A duration given to {@code option}: 0, or a number followed by ms, s or m (500ms, 30s, 2m); an
   * error naming the option otherwise.
   */
  static Duration duration(String option, String text) {
    String w = text.strip();
    try {
      if (w.equals("0")) {
        return Duration.ZERO;
      }
      if (w.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(w.substring(0, w.length() - 2)));
      }
      if (w.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(w.substring(0, w.length() - 1)));
      }
      if (w.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(w.substring(0, w.length() - 1)));
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(
        option + ": expected a duration such as 30s, 500ms or 2m, got '" + text + "'");
  }

  /**
   * Connects {@code b} to the router; while the connection is refused, tries again with growing
   * pauses (0.1 s doubling to 2 s) until {@code --wait} has passed, saying so once on {@code err},
   * and says when it is connected.
   */
  BdrpClient connect(BdrpClient.Builder b, PrintWriter err, String command)
      throws IOException, InterruptedException {
    InetSocketAddress at = address();
    Duration wait = waitFor();
    long deadline = System.nanoTime() + wait.toNanos();
    long pause = 100;
    boolean told = false;
    while (true) {
      try {
        BdrpClient c = b.router(at).connect();
        if (told) {
          err.println(command + ": connected to router " + c.routerNumber() + " at " + router);
          err.flush();
        }
        return c;
      } catch (IOException e) {
        if (!(e.getCause() instanceof ConnectException) || System.nanoTime() >= deadline) {
          throw e;
        }
        if (!told) {
          err.println(
              command
                  + ": nothing listens at "
                  + router
                  + " yet; trying again for up to "
                  + wait.toSeconds()
                  + " s (--wait)");
          err.flush();
          told = true;
        }
        Thread.sleep(Math.min(pause, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
        pause = Math.min(2_000, pause * 2);
      }
    }
  }
}
