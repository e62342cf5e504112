package io.bdrp.testbed.cli;

import io.bdrp.testbed.net.Emulator;
import picocli.CommandLine.Option;

/** The {@code --link-delay} option shared by the testbed commands that make a network. */
final class LinkDelayOption {
  @Option(
      names = "--link-delay",
      paramLabel = "DELAY|brite",
      description =
          "Every link's one-way propagation delay, such as 20ms or 500us, or 'brite' for each"
              + " edge's delay from the file; needs gcc, libnetfilter-queue-dev and iptables"
              + " (default: none).")
  String delay;

  /** The delay in microseconds, {@link Emulator#DELAY_FROM_FILE}, or 0 when not given. */
  long micros() {
    return delay == null ? 0 : Emulator.parseDelay(delay);
  }
}
