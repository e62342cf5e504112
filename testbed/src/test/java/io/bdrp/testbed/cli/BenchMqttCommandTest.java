package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.testbed.peers.HiveMqSystem;
import io.bdrp.testbed.peers.MosquittoSystem;
import io.bdrp.testbed.peers.NatsMqtt;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bdrp bench mqtt} against bdrp router processes and whichever MQTT brokers this machine has
 * (Mosquitto, nats-server, HiveMQ CE), every system driven by the same Paho MQTT client. Short runs
 * under a small window of outstanding deliveries: the figures are not checked, only that every
 * installed system was measured at each workload and QoS, that nothing was lost, and that the link
 * meters saw bdrp carry a fraction of what the bridge chain carries.
 */
class BenchMqttCommandTest {
  private final StringWriter out = new StringWriter();

  private int run(String... args) {
    CommandLine cl = LabCommandLine.create();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    return cl.execute(args);
  }

  /** The CSV's rows as maps from column name to value. */
  private static List<Map<String, String>> rows(Path csv) throws Exception {
    List<String> lines = Files.readAllLines(csv);
    String[] header = lines.get(0).split(",");
    List<Map<String, String>> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split(",", -1);
      Map<String, String> row = new HashMap<>();
      for (int i = 0; i < header.length; i++) {
        row.put(header[i], cells[i]);
      }
      rows.add(row);
    }
    return rows;
  }

  @Test
  @Timeout(600)
  void measuresEveryInstalledSystemAtBothQosAndLosesNothing(@TempDir Path dir) throws Exception {
    int code =
        run(
            "bench",
            "mqtt",
            "--subscribers",
            "3",
            "--seconds",
            "1",
            "--warmup",
            "1",
            "--window",
            "300",
            "--paced-rate",
            "200",
            "--server-jvm-opts",
            "-Xmx256m",
            "--out",
            dir.toString());
    assertEquals(0, code, out::toString);
    boolean mosquitto = new MosquittoSystem(0).missing() == null;
    boolean nats = new NatsMqtt(0).missing() == null;
    boolean hivemq = new HiveMqSystem(List.of(), 0).missing() == null;

    Set<String> expected = new TreeSet<>();
    Set<String> line = new TreeSet<>();
    for (String q : List.of("0", "1")) {
      for (String wl : List.of("fanout", "selective")) {
        expected.add("bdrp/" + wl + "/" + q);
        if (mosquitto) {
          expected.add("mosquitto/" + wl + "/" + q);
        }
        if (nats) {
          expected.add("nats/" + wl + "/" + q);
        }
        if (hivemq) {
          expected.add("hivemq/" + wl + "/" + q);
        }
      }
      line.add("bdrp/" + q);
      if (mosquitto) {
        line.add("mosquitto/" + q);
      }
    }
    Set<String> measured = new TreeSet<>();
    for (Map<String, String> r : rows(dir.resolve("mqtt.csv"))) {
      String key = r.get("system") + "/" + r.get("workload") + "/" + r.get("qos");
      measured.add(key);
      assertEquals("0", r.get("lost"), () -> key + " lost deliveries");
      assertEquals("0", r.get("disconnects"), () -> key + " lost a connection");
      assertTrue(Long.parseLong(r.get("published")) > 0, () -> key + " published nothing");
      assertEquals(r.get("expected"), r.get("delivered"), key);
    }
    assertEquals(expected, measured);

    Set<String> lineMeasured = new TreeSet<>();
    Map<String, Double> bytesPerMessage = new HashMap<>();
    for (Map<String, String> r : rows(dir.resolve("line.csv"))) {
      String key = r.get("system") + "/" + r.get("qos");
      lineMeasured.add(key);
      assertEquals("0", r.get("lost"), () -> key + " lost deliveries on the line");
      assertEquals(r.get("paced_expected"), r.get("paced_delivered"), key);
      assertTrue(
          Long.parseLong(r.get("link_bytes")) > 0, () -> key + ": the links carried nothing");
      bytesPerMessage.put(key, Double.parseDouble(r.get("link_bytes_per_msg")));
    }
    assertEquals(line, lineMeasured);
    // Every message crosses both bridges of the chain (a 200-byte payload and more each time);
    // bdrp's routers forward the tenth the subscribers select.
    for (String q : List.of("0", "1")) {
      assertTrue(bytesPerMessage.get("bdrp/" + q) < 200, () -> "bdrp: " + bytesPerMessage);
      if (mosquitto) {
        assertTrue(
            bytesPerMessage.get("mosquitto/" + q) > 400, () -> "mosquitto: " + bytesPerMessage);
      }
    }
    String summary = Files.readString(dir.resolve("summary.md"));
    assertTrue(summary.contains("| fanout | 0 | bdrp |"), summary);
    assertTrue(summary.contains("Line of 3 servers"), summary);
    assertEquals(mosquitto || nats, summary.contains("Targets (issue 27)"), summary);
    assertEquals(mosquitto, summary.contains("bdrp's links carried"), summary);
  }

  @Test
  @Timeout(60)
  void refusesAnUnknownSystemBeforeRunningAnything(@TempDir Path dir) {
    assertEquals(2, run("bench", "mqtt", "--systems", "bdrp,activemq", "--out", dir.toString()));
    assertTrue(out.toString().contains("unknown MQTT system 'activemq'"), out::toString);
  }
}
