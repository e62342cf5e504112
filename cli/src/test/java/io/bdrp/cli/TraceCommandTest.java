package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Predicate;
import io.bdrp.router.Router;
import io.bdrp.router.config.RouterConfig;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.TraceReport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** {@code bdrp trace} against a router in this JVM: the tree, the JSON, and the exit statuses. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TraceCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  @Test
  void aTraceNamesTheMatchingHostAndDeliversNothing() throws Exception {
    RouterConfig config =
        RouterConfig.parse(
            "router: 0\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\"}\n", "test");
    AtomicInteger received = new AtomicInteger();
    try (Router router = Router.start(config);
        BdrpClient alice =
            BdrpClient.builder()
                .router(router.clientAddress())
                .name("alice")
                .reconnect(false)
                .connect()) {
      alice
          .subscribe(Predicate.parse("stock = \"XYZ\""), m -> received.incrementAndGet())
          .get(10, TimeUnit.SECONDS);
      String at = "127.0.0.1:" + router.clientAddress().getPort();

      assertEquals(0, run("trace", "-r", at, "--wait", "0", "{\"stock\":\"XYZ\"}"), err.toString());
      String text = out.toString();
      assertTrue(text.startsWith("trace "), text);
      assertTrue(text.contains("from router 0: D = {}, false positives {}, 1 matching host"), text);
      assertTrue(text.contains("router 0 (ingress), local hosts: 1 matching host (alice #"), text);

      out.getBuffer().setLength(0);
      assertEquals(
          0,
          run("trace", "-r", at, "--wait", "0", "--json", "{\"stock\":\"ABC\"}"),
          err.toString());
      JsonNode j = new ObjectMapper().readTree(out.toString());
      assertTrue(j.get("complete").asBoolean());
      assertEquals(0, j.get("ingress").asInt());
      assertEquals(0, j.get("matchingHosts").asInt());
      assertEquals(1, j.get("reports").size());
      assertTrue(j.get("reports").get(0).get("from").isNull());

      // Anything the router had queued for alice before answering the traces precedes its PONG.
      alice.flush().get(10, TimeUnit.SECONDS);
      assertEquals(0, received.get(), "no trace is delivered");
    }
  }

  @Test
  void aMessageThatIsNotJsonIsAUsageError() {
    assertEquals(2, run("trace", "-r", "127.0.0.1:1", "--wait", "0", "stock=XYZ"));
    assertTrue(err.toString().contains("MESSAGE: not JSON"), err.toString());
    assertEquals(
        2, run("trace", "-r", "127.0.0.1:1", "--wait", "0", "--timeout", "2m", "{\"a\":1}"));
    assertTrue(err.toString().contains("--timeout: from 1ms to 60s"), err.toString());
  }

  @Test
  void theTreeShowsSplitsFalsePositivesDropsAndMissingRouters() {
    TraceReport ingress =
        new TraceReport(
            0,
            -1,
            32,
            TraceReport.INGRESS | TraceReport.LOCAL,
            List.of(new TraceReport.Copy(1, true, false, new int[] {2, 3})),
            0,
            List.of(),
            List.of(new TraceReport.Dropped("no_route", 1, new int[] {4})));
    TraceReport transit =
        new TraceReport(
            1,
            0,
            32,
            0,
            List.of(
                new TraceReport.Copy(2, true, true, new int[] {2}),
                new TraceReport.Copy(3, true, false, new int[] {3})),
            0,
            List.of(),
            List.of());
    TraceReport match =
        new TraceReport(
            2,
            1,
            31,
            TraceReport.LOCAL,
            List.of(),
            20,
            List.of(new TraceReport.Host(9, "")),
            List.of());
    ClientFrame.TraceResult r =
        new ClientFrame.TraceResult(
            1, 0xabc, 0, new int[] {2, 3, 4}, new int[] {3}, List.of(ingress, transit, match));
    assertEquals(
        """
        trace abc from router 0: D = {2, 3, 4}, false positives {}, 20 matching hosts
          router 0 (ingress), local hosts: 0 matching hosts
            -> 1 for {2, 3}
            dropped: no_route x1 {4}
            router 1 from 0, hop limit 32, transit
              -> 2 for {2}, kernel fast path
              -> 3 for {3}
              router 2 from 1, hop limit 31, in D: 20 matching hosts (#9, 19 more)
          router 3: no report before the timeout
        """,
        TraceCommand.text(r));
  }
}
