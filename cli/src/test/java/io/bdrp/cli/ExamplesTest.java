package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command's help ends with examples, and every example parses as the command it shows. */
class ExamplesTest {
  private static void all(CommandLine cl, List<CommandLine> into) {
    into.add(cl);
    cl.getSubcommands().values().forEach(s -> all(s, into));
  }

  @Test
  void everyCommandsHelpEndsWithExamples() {
    List<CommandLine> commands = new ArrayList<>();
    all(Main.commandLine(), commands);
    for (CommandLine cl : commands) {
      String name = cl.getCommandSpec().qualifiedName();
      if (name.endsWith(" help")) {
        continue;
      }
      StringWriter help = new StringWriter();
      cl.usage(new PrintWriter(help));
      assertTrue(help.toString().contains("Examples:"), name + " --help has no examples");
    }
  }

  @Test
  void everyExampleParses() {
    for (Map.Entry<String, List<String>> e : Examples.BY_COMMAND.entrySet()) {
      for (String line : e.getValue()) {
        int at = line.indexOf("./bdrp ");
        if (at < 0) {
          continue; // a shell line around the example
        }
        List<String> args = words(line.substring(at + "./bdrp ".length()));
        try {
          Main.commandLine().parseArgs(args.toArray(String[]::new));
        } catch (CommandLine.ParameterException ex) {
          fail(e.getKey() + ": '" + line + "' does not parse: " + ex.getMessage());
        }
      }
    }
  }

  /** The words of a shell command line up to a pipe, redirection or comment, quotes removed. */
  private static List<String> words(String s) {
    List<String> out = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\\' && quote == '"' && i + 1 < s.length()) {
          w.append(s.charAt(++i));
        } else {
          w.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (c == '|' || c == '#' || c == '>') {
        break;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          out.add(w.toString());
          w.setLength(0);
          inWord = false;
        }
      } else {
        w.append(c);
        inWord = true;
      }
    }
    if (inWord) {
      out.add(w.toString());
    }
    return out;
  }

  @Test
  void bashCompletionIsGeneratedForEveryCommand() {
    StringWriter out = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    assertTrue(cl.execute("generate-completion") == 0, out::toString);
    String script = out.toString();
    assertTrue(script.contains("complete -F _complete_bdrp"), "a bash completion function");
    for (String sub : List.of("router", "sub", "pub", "sim", "topo", "predicate")) {
      assertTrue(script.contains(sub), sub + " is completed");
    }
  }
}
