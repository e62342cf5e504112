package io.bdrp.cli;

import picocli.CommandLine.Option;

/** {@code --token}: the client's token for a router that authenticates its clients. */
final class TokenOption {
  @Option(
      names = "--token",
      defaultValue = "${env:BDRP_TOKEN}",
      description =
          "Token for a router that authenticates clients (default: the BDRP_TOKEN environment"
              + " variable; none if unset). Make one with: bdrp auth token --user NAME.")
  String token;

  /** The token, or the empty string for none. */
  String value() {
    return token == null ? "" : token;
  }
}
