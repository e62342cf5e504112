package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import example.ClientQuickstart;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/client.md's complete example is this module's {@code example.ClientQuickstart}, word for
 * word, and it runs: against a router here it prints the message it published.
 */
class ClientGuideTest {
  private static final Path EXAMPLE = Path.of("src/test/java/example/ClientQuickstart.java");

  @Test
  void theGuidesExampleIsTheCompiledOne() throws Exception {
    String guide = Files.readString(Path.of("../docs/client.md"));
    Matcher m = Pattern.compile("```java\n(package example;.*?)```", Pattern.DOTALL).matcher(guide);
    assertTrue(m.find(), "docs/client.md holds the example in a java block");
    assertEquals(Files.readString(EXAMPLE), m.group(1));
  }

  @Test
  void theExampleReceivesWhatItPublished() throws Exception {
    PrintStream stdout = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (Router r = Router.start(Federation.loneRouter())) {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      ClientQuickstart.main(new String[] {"127.0.0.1:" + r.clientAddress().getPort()});
    } finally {
      System.setOut(stdout);
    }
    String out = printed.toString(StandardCharsets.UTF_8);
    assertTrue(out.startsWith("received ") && out.contains("XYZ") && out.contains("21"), out);
  }
}
