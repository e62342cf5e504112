package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * A jar on the class path adds commands to bdrp by naming them in {@code META-INF/bdrp/commands}
 * (as the lab's jar adds bench and testbed); the jar that runs routers names none.
 */
class AddedCommandsTest {
  /** A command as another jar would add it. */
  @Command(name = "hello", description = "Says hello.")
  static final class Hello implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      spec.commandLine().getOut().println("hello from an added command");
      return 0;
    }
  }

  /** A class loader whose class path adds a jar root holding {@code commands} as the resource. */
  private static URLClassLoader loaderNaming(Path dir, String commands) throws Exception {
    Path file = dir.resolve(Main.COMMANDS_RESOURCE);
    Files.createDirectories(file.getParent());
    Files.writeString(file, commands);
    return new URLClassLoader(new URL[] {dir.toUri().toURL()}, Main.class.getClassLoader());
  }

  @Test
  void aNamedCommandRunsUnderBdrpBeforeHelp(@TempDir Path dir) throws Exception {
    try (URLClassLoader loader =
        loaderNaming(dir, "# a comment\n\n" + Hello.class.getName() + "  # trailing\n")) {
      CommandLine cl = Main.commandLine(loader);
      List<String> names = List.copyOf(cl.getSubcommands().keySet());
      assertTrue(names.contains("hello"), names::toString);
      assertTrue(names.indexOf("hello") < names.indexOf("help"), names::toString);
      StringWriter out = new StringWriter();
      cl.setOut(new PrintWriter(out, true));
      assertEquals(0, cl.execute("hello"));
      assertEquals("hello from an added command", out.toString().strip());
    }
  }

  @Test
  void theRouterJarAddsNoLabCommands() {
    var names = Main.commandLine().getSubcommands().keySet();
    assertFalse(names.contains("bench"), names::toString);
    assertFalse(names.contains("testbed"), names::toString);
    assertTrue(names.contains("router"), names::toString);
  }

  @Test
  void aLabCommandWithoutTheLabJarSaysWhereItIs() {
    CommandLine cl = Main.commandLine();
    String line = Main.missingLabCommand(new String[] {"bench", "fanout"}, cl);
    assertTrue(line != null && line.contains("run ./bdrp bench from a clone"), line);
    assertEquals(null, Main.missingLabCommand(new String[] {"router", "--help"}, cl));
    assertEquals(null, Main.missingLabCommand(new String[0], cl));
  }

  @Test
  void aMissingClassIsABrokenInstallNamedInTheError(@TempDir Path dir) throws Exception {
    try (URLClassLoader loader = loaderNaming(dir, "io.bdrp.lab.NoSuchCommand\n")) {
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> Main.commandLine(loader));
      assertTrue(
          e.getMessage()
              .contains("names io.bdrp.lab.NoSuchCommand, which is not on the class path"),
          e.getMessage());
    }
  }

  @Test
  void aClassThatIsNotACommandIsRefused(@TempDir Path dir) throws Exception {
    try (URLClassLoader loader = loaderNaming(dir, "java.lang.String\n")) {
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> Main.commandLine(loader));
      assertTrue(e.getMessage().contains("not a @Command class"), e.getMessage());
    }
  }
}
