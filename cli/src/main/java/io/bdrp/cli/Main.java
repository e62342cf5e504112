package io.bdrp.cli;

import java.nio.charset.StandardCharsets;
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
      AuthCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    String refused = undecodedArgument(args, System.getProperty("sun.jnu.encoding"));
    if (refused != null) {
      System.err.println(refused);
      System.exit(2);
    }
    System.exit(commandLine().execute(args));
  }

  /**
   * The JVM decodes the command line with the locale's character set ({@code sun.jnu.encoding}, not
   * {@code file.encoding}), and puts U+FFFD for every byte sequence that set cannot decode: a
   * non-ASCII predicate run under {@code LC_ALL=C} would silently become another predicate. Returns
   * the message refusing the first argument so damaged, or null when there is none or the locale is
   * UTF-8 (where U+FFFD can only have been typed on purpose). {@code ./bdrp} runs java under a
   * UTF-8 locale when the system has one, so this is met by running java directly.
   */
  static String undecodedArgument(String[] args, String jnuEncoding) {
    if (jnuEncoding == null || isUtf8(jnuEncoding)) {
      return null;
    }
    for (int i = 0; i < args.length; i++) {
      if (args[i].indexOf('\uFFFD') >= 0) {
        return "bdrp: argument "
            + (i + 1)
            + " ("
            + args[i].replace('\uFFFD', '?')
            + ") holds characters that the locale's character set ("
            + jnuEncoding
            + ") cannot decode, each marked '?' here; refusing to run with it changed. Run java"
            + " under a UTF-8 locale (e.g. LC_ALL=C.UTF-8), as ./bdrp does when one is installed.";
      }
    }
    return null;
  }

  private static boolean isUtf8(String charsetName) {
    try {
      return java.nio.charset.Charset.forName(charsetName).equals(StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
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
