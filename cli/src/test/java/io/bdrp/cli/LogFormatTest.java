package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.cli.ChildProcesses.Proc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code BDRP_LOG_FORMAT=json}: a router's log is one JSON object per line, for log shippers. */
class LogFormatTest {
  private final ChildProcesses processes = new ChildProcesses();

  @AfterEach
  void end() throws InterruptedException {
    processes.endAll();
  }

  @Test
  void withTheJsonFormatEveryLogLineIsAJsonObjectWithLevelLoggerAndMessage(@TempDir Path dir)
      throws Exception {
    Path config = dir.resolve("r.yaml");
    Files.writeString(
        config,
        "router: 3\nlisten: {clients: 127.0.0.1:0, routers: 127.0.0.1:0, metrics: 127.0.0.1:0}\n");
    Proc p =
        processes.start(
            dir,
            true,
            List.of("env", "BDRP_LOG_FORMAT=json", "BDRP_LOG_LEVEL=INFO"),
            "router",
            "--config",
            config.toString());
    ChildProcesses.await(
        "the router's log line saying where it listens",
        p,
        () -> p.err().stream().anyMatch(l -> l.contains("listening")));
    ObjectMapper json = new ObjectMapper();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : List.copyOf(p.err())) {
      lines.add(json.readTree(line)); // fails the test on a line that is not JSON
    }
    JsonNode listening =
        lines.stream()
            .filter(n -> n.path("formattedMessage").asText().contains("listening"))
            .findFirst()
            .orElseThrow();
    assertEquals("INFO", listening.path("level").asText());
    assertEquals("io.bdrp.router.Router", listening.path("loggerName").asText());
    assertTrue(
        listening.path("formattedMessage").asText().startsWith("router 3 "), listening::toString);
    assertTrue(listening.path("timestamp").asLong() > 0, listening::toString);
  }
}
