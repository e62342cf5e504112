package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class ProgressLineTest {
  @Test
  void onATerminalTheLineIsRewrittenInPlaceAndEndedOnce() {
    StringWriter s = new StringWriter();
    ProgressLine p = new ProgressLine(new PrintWriter(s), true);
    p.update("published 10 of 100 messages");
    p.done("published 100");
    // The first update shows at once; the last state overwrites it, blanks what is left of the
    // longer line, and ends it.
    assertEquals(
        "\r  published 10 of 100 messages\r  published 100"
            + " ".repeat("published 10 of 100 messages".length() - "published 100".length())
            + "\n",
        s.toString().replace(System.lineSeparator(), "\n"));
  }

  @Test
  void intoAPipeAShortStepWritesOnlyItsLastStateAsAPlainLine() {
    StringWriter s = new StringWriter();
    ProgressLine p = new ProgressLine(new PrintWriter(s), false);
    p.update("published 10 of 100 messages"); // well within the first five seconds
    p.done("published 100 messages in 0.1 s");
    assertEquals(
        "  published 100 messages in 0.1 s\n", s.toString().replace(System.lineSeparator(), "\n"));
  }
}
