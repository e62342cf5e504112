package io.bdrp.testbed.cli;

import io.bdrp.router.ExitStatus;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The lab's commands under a {@code bdrp} root, as the bdrp command adds them: the classes named by
 * this module's {@code META-INF/bdrp/commands}, their exceptions ending them with the {@link
 * ExitStatus} of every bdrp command.
 */
@Command(name = "bdrp", mixinStandardHelpOptions = true)
final class LabCommandLine {
  private LabCommandLine() {}

  static CommandLine create() {
    CommandLine cl = new CommandLine(new LabCommandLine());
    try (InputStream in = LabCommandLine.class.getResourceAsStream("/META-INF/bdrp/commands")) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      for (String line : text.split("\n")) {
        String name = line.replaceFirst("#.*", "").strip();
        if (!name.isEmpty()) {
          cl.addSubcommand(Class.forName(name));
        }
      }
    } catch (IOException | ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
    cl.setExecutionExceptionHandler((ex, cmd, parsed) -> ExitStatus.report(ex, cmd.getErr()));
    return cl;
  }
}
