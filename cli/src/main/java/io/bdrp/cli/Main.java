package io.bdrp.cli;

import io.bdrp.router.ExitStatus;
import io.bdrp.router.Logging;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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
      ConsoleCommand.class,
      RouterCommand.class,
      SubCommand.class,
      PubCommand.class,
      TraceCommand.class,
      SimCommand.class,
      TopoCommand.class,
      PredicateCommand.class,
      AuthCommand.class
    })
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    String refused = undecodedArgument(args, System.getProperty("sun.jnu.encoding"));
    if (refused == null) {
      refused = Logging.configure(System.getenv());
    }
    if (refused != null) {
      System.err.println(refused);
      System.exit(ExitStatus.USAGE);
    }
    CommandLine cl;
    try {
      cl = commandLine();
    } catch (IllegalStateException | UncheckedIOException e) {
      // A jar naming a command that is not there: a broken installation.
      System.err.println(ExitStatus.line(e));
      System.exit(ExitStatus.FAILURE);
      return;
    }
    String lab = missingLabCommand(args, cl);
    if (lab != null) {
      System.err.println(lab);
      System.exit(ExitStatus.USAGE);
    }
    System.exit(cl.execute(args));
  }

  /** The commands of the lab's jar (testbed/target/bdrp-lab.jar). */
  static final List<String> LAB_COMMANDS = List.of("bench", "testbed");

  /**
   * The line that says where a lab command is when {@code args} name one that {@code cl} lacks
   * (this class path has no lab jar), or null.
   */
  static String missingLabCommand(String[] args, CommandLine cl) {
    if (args.length == 0
        || !LAB_COMMANDS.contains(args[0])
        || cl.getSubcommands().containsKey(args[0])) {
      return null;
    }
    return "bdrp: '"
        + args[0]
        + "' is one of the lab's commands, which this jar does not hold (it runs routers and"
        + " clients only); run ./bdrp "
        + args[0]
        + " from a clone of the repository, which adds testbed/target/bdrp-lab.jar";
  }

  /**
   * Where other jars on the class path name commands of their own to add to {@code bdrp}: one class
   * name per line ({@code #} starts a comment), each a picocli {@code @Command}. The lab's jar (the
   * testbed module: {@code bench}, {@code testbed}) does, so that the jar that runs a router need
   * not hold the benchmark peers; {@code ./bdrp} puts both jars on the class path.
   */
  static final String COMMANDS_RESOURCE = "META-INF/bdrp/commands";

  /** The classes named by every {@link #COMMANDS_RESOURCE} on the class path, in order. */
  static List<Class<?>> addedCommands(ClassLoader loader) {
    List<Class<?>> found = new ArrayList<>();
    try {
      for (URL url : Collections.list(loader.getResources(COMMANDS_RESOURCE))) {
        try (InputStream in = url.openStream()) {
          String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
          for (String line : text.split("\n")) {
            String name = line.replaceFirst("#.*", "").strip();
            if (name.isEmpty()) {
              continue;
            }
            try {
              Class<?> c = Class.forName(name, false, loader);
              if (!c.isAnnotationPresent(Command.class)) {
                throw new IllegalStateException(url + " names " + name + ", not a @Command class");
              }
              if (!found.contains(c)) {
                found.add(c);
              }
            } catch (ClassNotFoundException e) {
              throw new IllegalStateException(
                  url + " names " + name + ", which is not on the class path", e);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + COMMANDS_RESOURCE + " on the class path", e);
    }
    return found;
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

  /**
   * The configured command line (also used by tests). Exit codes: 0 done, 1 a failure while running
   * (a router that cannot be reached, a port in use), 2 a usage error (a bad option, argument, file
   * or configuration).
   */
  public static CommandLine commandLine() {
    return commandLine(Main.class.getClassLoader());
  }

  /** The command line with the commands that {@code loader}'s class path adds. */
  static CommandLine commandLine(ClassLoader loader) {
    CommandLine cl = new CommandLine(new Main());
    for (Class<?> c : addedCommands(loader)) {
      cl.addSubcommand(c);
    }
    cl.addSubcommand(CommandLine.HelpCommand.class);
    cl.addSubcommand(picocli.AutoComplete.GenerateCompletion.class);
    Examples.apply(cl);
    cl.setExecutionExceptionHandler((ex, cmd, parsed) -> ExitStatus.report(ex, cmd.getErr()));
    return cl;
  }

  /** Reports the project version, written into {@code io/bdrp/cli/version.txt} by the build. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
      try (InputStream in = Main.class.getResourceAsStream("version.txt")) {
        if (in == null) {
          throw new IllegalStateException("io/bdrp/cli/version.txt is missing: a broken build");
        }
        return new String[] {
          "bdrp " + new String(in.readAllBytes(), StandardCharsets.UTF_8).strip()
        };
      }
    }
  }
}
