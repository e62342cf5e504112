package io.bdrp.cli;

import io.bdrp.router.security.ClientAuth;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bdrp auth}: client credentials for routers that authenticate their clients. */
@Command(
    name = "auth",
    mixinStandardHelpOptions = true,
    description = "Client credentials for routers that authenticate their clients.",
    subcommands = {AuthCommand.Token.class})
public final class AuthCommand {

  /** {@code bdrp auth token}: a new token, and the config entry that admits it. */
  @Command(
      name = "token",
      mixinStandardHelpOptions = true,
      description = {
        "Make a random token for a client user and print it with the auth.clients.users entry"
            + " for the router config, which holds only a salted hash of it. Give the token to"
            + " the client (--token, or BDRP_TOKEN); it is not stored anywhere."
      })
  static final class Token implements Callable<Integer> {
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--user", required = true, description = "The user's name.")
    String user;

    @Option(
        names = "--token",
        description = "Hash this token instead of making one (it should be random, 32 bytes).")
    String token;

    @Override
    public Integer call() {
      PrintWriter o = spec.commandLine().getOut();
      if (user.isBlank()) {
        throw new picocli.CommandLine.ParameterException(
            spec.commandLine(), "--user must not be blank");
      }
      String t = token != null ? token : ClientAuth.newToken();
      o.printf("token for %s (give it to the client; shown once): %s%n", user, t);
      o.printf("router config, under auth.clients.users:%n");
      o.printf("  - name: %s%n", user);
      o.printf("    token: \"%s\"%n", ClientAuth.hashLine(t));
      o.printf("    # subscribe: 'topic = \"news\"'   # optional: the most it may receive%n");
      o.printf("    # publish: 'topic = \"news\"'     # optional: what it may send%n");
      return 0;
    }
  }
}
