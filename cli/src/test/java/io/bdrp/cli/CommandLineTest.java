package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CommandLineTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  private long figure(String label) {
    Matcher m = Pattern.compile("\\s" + label + "\\s+([0-9,]+)").matcher(out.toString());
    assertTrue(m.find(), () -> label + " missing in:\n" + out);
    return Long.parseLong(m.group(1).replace(",", ""));
  }

  @Test
  void versionIsTheBuildsVersion() {
    String version = System.getProperty("bdrp.version");
    assertTrue(version != null && !version.isBlank(), "the build passes its version");
    assertEquals(0, run("--version"));
    assertEquals("bdrp " + version, out.toString().strip());
  }

  @Test
  void demoDeliversExactlyWhatTheOracleExpects(@TempDir Path dir) throws Exception {
    int code =
        run(
            "demo",
            "--topology",
            "routers-4",
            "--hosts",
            "24",
            "--messages",
            "1500",
            "--out",
            dir.toString());
    assertEquals(0, code, out + "\n" + err);
    long expected = figure("expected deliveries");
    assertTrue(expected > 0, "workload produced no deliveries");
    assertEquals(expected, figure("delivered"));
    assertEquals(0, figure("undelivered"));
    assertEquals(0, figure("duplicates"));
    assertEquals(0, figure("spurious"));
    try (var runs = Files.list(dir)) {
      Path csv = runs.findFirst().orElseThrow().resolve("routers.csv");
      List<String> lines = Files.readAllLines(csv);
      assertEquals(5, lines.size(), "header plus one line per router");
      long sum = lines.stream().skip(1).mapToLong(l -> Long.parseLong(l.split(",")[2])).sum();
      assertEquals(expected, sum, "per-router deliveries add up to the total");
      // The routers' log lines are in the run folder, not among the command's output.
      Path log = csv.resolveSibling("routers.log");
      String logged = Files.readString(log);
      assertTrue(logged.contains("router 3") && logged.contains("listening"), logged);
      assertTrue(out.toString().contains(log.toString()), "the summary names the log file");
      // A plot and a Markdown summary beside them.
      byte[] png = Files.readAllBytes(csv.resolveSibling("deliveries.png"));
      assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G', "a PNG");
      String summary = Files.readString(csv.resolveSibling("summary.md"));
      assertTrue(summary.contains(String.format(java.util.Locale.ROOT, "%,d", expected)), summary);
    }
  }

  @Test
  void demoWithConsoleKeepsItsFederationRunningAndServesTheConsoleUntilInterrupted(
      @TempDir Path dir) throws Exception {
    int[] code = {-1};
    Thread demo =
        new Thread(
            () ->
                code[0] =
                    run(
                        "demo",
                        "--topology",
                        "routers-4",
                        "--hosts",
                        "8",
                        "--messages",
                        "200",
                        "--out",
                        dir.toString(),
                        "--console",
                        "--console-listen",
                        "127.0.0.1:0"));
    demo.start();
    try {
      Pattern console = Pattern.compile("console\\s+(http://127\\.0\\.0\\.1:\\d+/)");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      Matcher m;
      while (!(m = console.matcher(out.toString())).find()) {
        assertTrue(demo.isAlive(), "the demo ended: " + out + "\n" + err);
        assertTrue(System.nanoTime() < deadline, "no console line in:\n" + out);
        Thread.sleep(50);
      }
      assertEquals(0, figure("undelivered"), "the summary comes first, unchanged");
      URI api = URI.create(m.group(1) + "api/federation");
      HttpClient http = HttpClient.newHttpClient();
      ObjectMapper json = new ObjectMapper();
      // Every router answers, and the console's traffic shows in a link's rate.
      while (true) {
        JsonNode p =
            json.readTree(
                http.send(HttpRequest.newBuilder(api).build(), HttpResponse.BodyHandlers.ofString())
                    .body());
        int answering = 0;
        long data = 0;
        for (JsonNode r : p.get("routers")) {
          answering += r.get("answering").asBoolean() ? 1 : 0;
          for (JsonNode l : r.get("links")) {
            data += l.get("rates").get("dataOut").asLong();
          }
        }
        if (answering == 4 && data > 0) {
          break;
        }
        assertTrue(System.nanoTime() < deadline, "the console's last picture: " + p);
        Thread.sleep(100);
      }
    } finally {
      demo.interrupt();
      demo.join(TimeUnit.SECONDS.toMillis(30));
    }
    assertFalse(demo.isAlive(), "the demo stops when interrupted");
  }

  @Test
  void topoGeneratesAFileThatShowReadsBack(@TempDir Path dir) {
    Path file = dir.resolve("t.brite");
    assertEquals(
        0,
        run(
            "topo",
            "generate",
            "--model",
            "ba",
            "--routers",
            "30",
            "--seed",
            "3",
            "--out",
            file.toString()),
        err::toString);
    assertTrue(out.toString().contains("30 routers"), out::toString);
    out.getBuffer().setLength(0);
    assertEquals(0, run("topo", "show", file.toString()), err::toString);
    assertTrue(out.toString().contains(": 30 routers, "), out::toString);
    assertTrue(out.toString().contains("connected, diameter"), out::toString);
    assertEquals(2, run("topo", "show", dir.resolve("missing").toString()));
    assertTrue(err.toString().contains("neither a file nor a bundled topology"), err::toString);
  }

  @Test
  void routerFlagsOverrideTheFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("r.yaml");
    Files.writeString(
        file,
        "router: 5\nlisten: {clients: \"127.0.0.1:7400\"}\nauth: {clients: {anonymous: {subscribe: 'x > 1'}}}\n");
    RouterCommand c = new RouterCommand();
    new CommandLine(c)
        .parseArgs("--config", file.toString(), "--clients", "127.0.0.1:0", "--epoch", "42");
    var cfg = c.effective();
    assertEquals(5, cfg.router());
    assertEquals(42, cfg.epoch());
    assertEquals(0, cfg.clientListen().getPort());
    assertFalse(cfg.clientAuth().open(), "the file's client users and anonymous access are kept");
    assertEquals(2, run("router", "--config", dir.resolve("missing.yaml").toString()));
    assertTrue(err.toString().startsWith("bdrp: no such file: "), err::toString);
    assertTrue(err.toString().contains("missing.yaml"), err::toString);
  }

  @Test
  void predicateCommandPrintsTheCanonicalForm() {
    assertEquals(0, run("predicate", "price > 20.0 && stock = \"XYZ\" || price > 20"));
    assertTrue(out.toString().startsWith("price > 20\n"), out::toString);
    assertTrue(out.toString().contains("1 conjunction;"), out::toString);
  }

  @Test
  void predicateErrorsPointAtTheColumn() {
    assertEquals(2, run("predicate", "price >> 20"));
    String[] lines = err.toString().split("\n");
    assertEquals("bdrp: column 8: expected a value after '>' but found '>'", lines[0]);
    assertEquals("  price >> 20", lines[1]);
    assertEquals("         ^", lines[2]);
  }

  @Test
  void badOptionsGetAClearMessage() {
    assertEquals(2, run("demo", "--bloom", "32/1"));
    assertTrue(
        err.toString().contains("bloom bits (M) must be between 64 and 8192, got 32"),
        err::toString);
    assertEquals(2, run("demo", "--bloom", "lots"));
    assertTrue(err.toString().contains("--bloom must be M/k"), err::toString);
  }
}
