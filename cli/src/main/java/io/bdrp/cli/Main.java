package io.bdrp.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the {@code bdrp} command. */
@Command(
    name = "bdrp",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = {
      "B-DRP: a content-based publish/subscribe network. Messages are matched once, at the "
          + "ingress router, against every router's Bloom-encoded predicate, and forwarded by "
          + "dynamic receiver partitioning."
    },
    subcommands = {
      DemoCommand.class,
      RouterCommand.class,
      SubCommand.class,
      PubCommand.class,
      SimCommand.class,
      TopoCommand.class,
      BenchCommand.class,
      TestbedCommand.class,
      PredicateCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The configured command line (also used by tests). */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Main());
    cl.setExecutionExceptionHandler(
        (ex, cmd, parsed) -> {
          if (ex instanceof IllegalArgumentException) {
            cmd.getErr().println("bdrp: " + ex.getMessage());
            return 2;
          }
          if (ex instanceof java.nio.file.NoSuchFileException nf) {
            cmd.getErr().println("bdrp: no such file: " + nf.getFile());
            return 2;
          }
          if (ex instanceof java.io.IOException) {
            cmd.getErr().println("bdrp: " + ex.getMessage());
            return 2;
          }
          throw ex;
        });
    return cl;
  }

  /** Reports the project version from the jar manifest, or "development" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"bdrp " + (v == null ? "development build" : v)};
    }
  }
}
