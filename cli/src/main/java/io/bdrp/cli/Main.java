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
      CommandLine.HelpCommand.class,
      picocli.AutoComplete.GenerateCompletion.class
    })
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    String refused = undecodedArgument(args, System.getProperty("sun.jnu.encoding"));
    if (refused == null) {
      refused = badLogLevel(System.getenv("BDRP_LOG_LEVEL"));
    }
    if (refused == null) {
      refused = badLogFormat(System.getenv("BDRP_LOG_FORMAT"));
    }
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

  /** The levels {@code BDRP_LOG_LEVEL} may name (logback's, in any case). */
  static final java.util.List<String> LOG_LEVELS =
      java.util.List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  /** The formats {@code BDRP_LOG_FORMAT} may name (logback.xml includes logback-FORMAT.xml). */
  static final java.util.List<String> LOG_FORMATS = java.util.List.of("text", "json");

  /** Why {@code level} (the value of BDRP_LOG_LEVEL, null when unset) is refused, or null. */
  static String badLogLevel(String level) {
    return refused(
        "BDRP_LOG_LEVEL",
        level,
        level == null ? null : level.strip().toUpperCase(java.util.Locale.ROOT),
        LOG_LEVELS,
        "a log level");
  }

  /** Why {@code format} (the value of BDRP_LOG_FORMAT, null when unset) is refused, or null. */
  static String badLogFormat(String format) {
    return refused("BDRP_LOG_FORMAT", format, format, LOG_FORMATS, "a log format");
  }

  /** Null when {@code value} is unset or, as {@code normalised}, one of {@code allowed}. */
  private static String refused(
      String variable,
      String value,
      String normalised,
      java.util.List<String> allowed,
      String what) {
    if (value == null || allowed.contains(normalised)) {
      return null;
    }
    return "bdrp: "
        + variable
        + "="
        + value
        + " is not "
        + what
        + " (one of "
        + String.join(", ", allowed)
        + ")";
  }

  private static boolean isUtf8(String charsetName) {
    try {
      return java.nio.charset.Charset.forName(charsetName).equals(StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * The configured command line (also used by tests). Exit codes: 0 done, 1 a failure while running
   * (a router that cannot be reached, a port in use), 2 a usage error (a bad option, argument, file
   * or configuration).
   */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Main());
    Examples.apply(cl);
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
          // Failures while running (a router that cannot be reached, a port in use): one line, 1.
          if (ex instanceof java.io.IOException
              || ex instanceof java.io.UncheckedIOException
              || ex instanceof IllegalStateException) {
            cmd.getErr().println("bdrp: " + ex.getMessage());
            return 1;
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
