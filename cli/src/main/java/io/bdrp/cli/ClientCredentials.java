package io.bdrp.cli;

import io.bdrp.client.BdrpClient;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --token} and {@code --tls-ca}: how a client proves who it is and checks its router. */
final class ClientCredentials {
  @Option(
      names = "--token",
      defaultValue = "${env:BDRP_TOKEN}",
      description =
          "Token for a router that authenticates clients (default: the BDRP_TOKEN environment"
              + " variable; none if unset). Make one with: bdrp auth token --user NAME.")
  String token;

  @Option(
      names = "--tls-ca",
      paramLabel = "PEM",
      description =
          "Speak TLS to the router and trust the certificate authorities in this PEM file (the"
              + " router's certificate must name the address dialled).")
  Path tlsCa;

  @Option(
      names = "--cert",
      paramLabel = "PEM",
      description =
          "With --tls-ca: a client certificate naming the user (urn:bdrp:user:NAME), instead of a"
              + " token.")
  Path cert;

  @Option(names = "--key", paramLabel = "PEM", description = "The private key of --cert.")
  Path key;

  /** Applies the token and TLS settings to {@code b}. */
  BdrpClient.Builder apply(BdrpClient.Builder b) {
    b.authToken(token == null ? "" : token);
    if ((cert == null) != (key == null) || (cert != null && tlsCa == null)) {
      throw new IllegalArgumentException("--cert and --key go together, with --tls-ca");
    }
    if (tlsCa != null) {
      b.tls(tlsCa, cert, key);
    }
    return b;
  }
}
