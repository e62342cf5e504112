package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every lab command's help ends with examples, and every example parses as the command it shows.
 */
class LabExamplesTest {
  private static void all(CommandLine cl, List<CommandLine> into) {
    into.add(cl);
    cl.getSubcommands().values().forEach(s -> all(s, into));
  }

  @Test
  void everyLabCommandHasExamplesThatParse() {
    List<CommandLine> commands = new ArrayList<>();
    LabCommandLine.create().getSubcommands().values().forEach(c -> all(c, commands));
    assertFalse(commands.isEmpty(), "the lab names its commands in META-INF/bdrp/commands");
    for (CommandLine cl : commands) {
      String name = cl.getCommandSpec().qualifiedName();
      String[] footer = cl.getCommandSpec().usageMessage().footer();
      if (footer.length == 0
          || !cl.getCommandSpec().usageMessage().footerHeading().contains("Examples")) {
        fail(name + " --help has no examples");
      }
      for (String line : footer) {
        int at = line.indexOf("./bdrp ");
        String args = line.substring(at + "./bdrp ".length()).replaceFirst("#.*", "").strip();
        try {
          LabCommandLine.create().parseArgs(args.split("\\s+"));
        } catch (CommandLine.ParameterException e) {
          fail(name + ": '" + line.strip() + "' does not parse: " + e.getMessage());
        }
        if (!args.startsWith(name.substring("bdrp ".length()))) {
          fail(name + ": the example '" + line.strip() + "' runs another command");
        }
      }
    }
  }
}
