package io.bdrp.cli;

import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/**
 * {@code -r/--router HOST:PORT}: the router a client command attaches to; {@code BDRP_ROUTER} sets
 * it for a shell, as {@code NATS_URL} does for {@code nats}.
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

  /** The address, or an error naming the option. */
  InetSocketAddress address() {
    return Addresses.parse("--router", router);
  }
}
