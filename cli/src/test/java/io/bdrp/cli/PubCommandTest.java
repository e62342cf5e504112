package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code bdrp pub --confirm}: its options, and how it counts and reports confirmations. */
class PubCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  @Test
  void helpDescribesConfirmAndItsTimeout() {
    assertEquals(0, run("pub", "--help"));
    String help = out.toString();
    assertTrue(help.contains("--confirm "), help);
    assertTrue(help.contains("--confirm-timeout=DURATION"), help);
    assertTrue(help.contains("(default: 60s)"), help);
    assertTrue(help.contains("./bdrp pub --confirm --attr stock=XYZ --attr price=21"), help);
  }

  @Test
  void confirmOptionsParse() {
    CommandLine cl = Main.commandLine();
    CommandLine.ParseResult r =
        cl.parseArgs("pub", "--confirm", "--confirm-timeout", "5s", "--attr", "a=1");
    PubCommand pub = r.subcommand().commandSpec().commandLine().getCommand();
    assertTrue(pub.confirm);
    assertEquals(
        Duration.ofSeconds(5),
        RouterAddressOption.duration("--confirm-timeout", pub.confirmTimeout));
    PubCommand plain =
        Main.commandLine().parseArgs("pub").subcommand().commandSpec().commandLine().getCommand();
    assertFalse(plain.confirm);
    assertEquals("60s", plain.confirmTimeout);
  }

  @Test
  void aBadTimeoutIsAUsageErrorNamingTheOption() {
    // Checked before any connection is tried: no router is needed.
    assertEquals(2, run("pub", "--confirm", "--confirm-timeout", "soon", "--attr", "a=1"));
    assertTrue(err.toString().contains("--confirm-timeout: expected a duration"), err.toString());
  }

  @Test
  void confirmationsCountEachOutcomeAndFailUnlessAllAreConfirmed() throws Exception {
    PubCommand.Confirmations all = new PubCommand.Confirmations(Duration.ofSeconds(10));
    all.add(CompletableFuture.completedFuture(null));
    all.add(CompletableFuture.completedFuture(null));
    StringWriter report = new StringWriter();
    assertTrue(all.finish(new PrintWriter(report)));
    assertEquals("bdrp pub: 2 confirmed", report.toString().strip());

    // A message lost with its session, and one that never comes (a zero timeout gives up at once).
    PubCommand.Confirmations some = new PubCommand.Confirmations(Duration.ZERO);
    some.add(CompletableFuture.completedFuture(null));
    some.add(CompletableFuture.failedFuture(new IOException("client closed")));
    some.add(new CompletableFuture<>());
    some.add(new CompletableFuture<>());
    report = new StringWriter();
    assertFalse(some.finish(new PrintWriter(report)));
    assertEquals(
        "bdrp pub: 1 confirmed, 1 lost with the session, 2 not confirmed within 0 ms"
            + " (--confirm-timeout)\nbdrp pub: first problem: client closed",
        report.toString().strip());
  }
}
