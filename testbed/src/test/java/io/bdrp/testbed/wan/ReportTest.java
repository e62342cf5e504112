package io.bdrp.testbed.wan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.workload.WorkloadSpec;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
  private static final Scenario SC =
      new Scenario("t", "routers-2", 8_000_000, 4, WorkloadSpec.PAPER, 1, 1, 4, 1, 1, 10, 1);

  /** Four seconds of traffic and one of grace; the link reaches 90% in second 2. */
  private static WanRun.Seconds seconds(double[] util, long[] undelivered) {
    return new WanRun.Seconds(
        new long[] {10, 10, 10, 10, 0},
        new long[] {100, 100, 100, 100, 0},
        new long[] {100, 100, 90, 60, 30},
        undelivered,
        new long[5],
        new long[5],
        util,
        new double[5]);
  }

  @Test
  void saturationIsTheFirstTrafficSecondAtTheLevel() {
    var s = seconds(new double[] {0.5, 0.89, 0.9, 0.95, 1.0}, new long[5]);
    assertEquals(2, Report.saturation(s, 4, 0.9));
    assertEquals(3, Report.saturation(s, 4, 0.95));
    // The grace second after the traffic does not count: never saturated.
    assertEquals(4, Report.saturation(s, 4, 1.0));
  }

  @Test
  void deliveredBeforeCountsOnlyMessagesSentBeforeTheSecond() {
    var s = seconds(new double[5], new long[] {0, 1, 30, 50, 0});
    assertEquals(99.5, Report.deliveredBefore(s, 2), 1e-9);
    assertEquals(100.0 * (400 - 81) / 400, Report.deliveredBefore(s, 4), 1e-9);
    assertEquals(100.0, Report.deliveredBefore(s, 0), 1e-9);
  }

  @Test
  void summaryShowsSaturationSecondAndDeliveryBeforeIt() {
    var r =
        new WanRun.Result(
            "bdrp",
            SC,
            seconds(new double[] {0.5, 0.6, 0.92, 1, 0}, new long[] {0, 0, 20, 0, 0}),
            40);
    String row = Report.summary(List.of(r)).lines().skip(2).findFirst().orElseThrow();
    // delivered 95.000% overall, link saturated from second 2, 100% before it.
    assertTrue(row.contains("| 95.000 | 2 | 100.000 |"), row);
    var never =
        new WanRun.Result("bdrp", SC, seconds(new double[5], new long[] {0, 0, 20, 0, 0}), 40);
    String row2 = Report.summary(List.of(never)).lines().skip(2).findFirst().orElseThrow();
    assertTrue(row2.contains("| 95.000 | never | 95.000 |"), row2);
    // A slower peer: bdrp's peak sustained output (4 s window: 87/s against 35/s) over the peer's.
    var peer =
        new WanRun.Result(
            "activemq",
            SC,
            new WanRun.Seconds(
                new long[5],
                new long[5],
                new long[] {50, 50, 20, 20, 0},
                new long[5],
                new long[5],
                new long[5],
                new double[5],
                new double[5]),
            40);
    assertTrue(
        Report.summary(List.of(r, peer))
            .contains("Peak sustained output, t: bdrp / activemq = 2.49×"),
        Report.summary(List.of(r, peer)));
  }

  @Test
  void suitesRunSharedScenariosOnceAndApplyOverridesToEvery() {
    Suite fig7 = Scenarios.suites().get("fig7");
    List<Scenario> runs = fig7.scenarios();
    Set<String> names = runs.stream().map(Scenario::name).collect(Collectors.toSet());
    assertEquals(runs.size(), names.size());
    assertTrue(names.contains("fig7-42"));
    // the base run appears in every group but is run once
    assertEquals(4, fig7.groups().size());
    for (Suite.Group g : fig7.groups()) {
      assertTrue(g.entries().stream().anyMatch(e -> e.scenario().name().equals("fig7-42")));
    }
    Suite shorter = fig7.map(s -> s.withRamp(0.1, 1, 30));
    assertTrue(shorter.scenarios().stream().allMatch(s -> s.seconds() == 30 && s.endRate() == 1));
    // every suite scenario is also runnable on its own
    for (Suite su : Scenarios.suites().values()) {
      for (Scenario s : su.scenarios()) {
        assertEquals(s, Scenarios.all().get(s.name()), s.name());
      }
    }
  }

  @Test
  void scenarioRejectsNegativeRates() {
    assertThrows(IllegalArgumentException.class, () -> SC.withRamp(-1, 1, 10));
  }

  @Test
  void suiteReportHasATablePerGroupAndAPanelPerRunAndSystem(@TempDir Path dir) throws Exception {
    Scenario a = SC.withName("a");
    Scenario b = SC.withName("b");
    Suite grid =
        new Suite(
            "g",
            Suite.Layout.GRID,
            List.of(
                new Suite.Group(
                    "sizes", List.of(new Suite.Entry("one", a), new Suite.Entry("two", b)))));
    Map<String, List<WanRun.Result>> results = new LinkedHashMap<>();
    for (Scenario s : List.of(a, b)) {
      results.put(
          s.name(),
          List.of(
              new WanRun.Result("bdrp", s, seconds(new double[5], new long[5]), 40),
              new WanRun.Result("activemq", s, seconds(new double[5], new long[5]), 40)));
    }
    Report.writeSuite(dir, grid, results);
    String md = Files.readString(dir.resolve("summary.md"));
    assertTrue(md.contains("## sizes"), md);
    assertTrue(md.contains("| bdrp | a |") && md.contains("| activemq | b |"), md);
    assertTrue(md.contains("Peak sustained output, b: bdrp / activemq = 1.00×"), md);
    BufferedImage img = ImageIO.read(dir.resolve("plot.png").toFile());
    Path one = dir.resolve("one");
    Report.writeSuite(
        one,
        new Suite(
            "g",
            Suite.Layout.GRID,
            List.of(new Suite.Group("s", List.of(grid.groups().get(0).entries().get(0))))),
        Map.of("a", List.of(results.get("a").get(0))));
    BufferedImage single = ImageIO.read(one.resolve("plot.png").toFile());
    // two systems side by side, two runs one above the other
    assertEquals(2 * single.getWidth(), img.getWidth());
    assertEquals(2 * single.getHeight(), img.getHeight());

    Suite lines = new Suite("l", Suite.Layout.LINES, grid.groups());
    Path d2 = dir.resolve("lines");
    Report.writeSuite(d2, lines, results);
    BufferedImage img2 = ImageIO.read(d2.resolve("plot.png").toFile());
    Path d3 = dir.resolve("lines-one");
    Report.writeSuite(d3, lines, Map.of("a", List.of(results.get("a").get(0))));
    BufferedImage img3 = ImageIO.read(d3.resolve("plot.png").toFile());
    // one panel per system for the one group, side by side
    assertEquals(2 * img3.getWidth(), img2.getWidth());
    assertEquals(img3.getHeight(), img2.getHeight());
  }

  @Test
  void frameBytesAreSummedPerRouterAndTheirRatioReportedAndWritten(@TempDir Path dir)
      throws Exception {
    // Two routers' metrics as they render them: per-link series, values as the text format's
    // doubles (large ones in E notation), other series beside them.
    String r0 =
        """
        # HELP bdrp_link_data_bytes_out_total Bytes of the DATA copies sent per neighbour.
        # TYPE bdrp_link_data_bytes_out_total counter
        bdrp_link_data_bytes_out_total{neighbour="1",type="data"} 1000.0
        bdrp_link_data_bytes_out_total{neighbour="1",type="reliable_data"} 1.2345678E7
        bdrp_link_data_bytes_out_total{neighbour="2",type="reliable_data"} 655.0
        bdrp_link_data_out_total{neighbour="1"} 99.0
        bdrp_link_reliable_ack_bytes_out_total{neighbour="1"} 260.0
        bdrp_link_reliable_ack_bytes_out_total{neighbour="2"} 52.0
        """;
    String r1 =
        """
        bdrp_link_data_bytes_out_total{neighbour="0",type="data"} 0.0
        bdrp_link_data_bytes_out_total{neighbour="0",type="reliable_data"} 345.0
        bdrp_link_reliable_ack_bytes_out_total{neighbour="0"} 1.0E6
        """;
    var b = WanSystem.FrameBytes.of(List.of(r0, r1));
    assertEquals(List.of(1000L, 0L), List.of(b.data()[0], b.data()[1]));
    assertEquals(List.of(12_346_333L, 345L), List.of(b.reliableData()[0], b.reliableData()[1]));
    assertEquals(List.of(312L, 1_000_000L), List.of(b.acks()[0], b.acks()[1]));
    assertEquals(12_347_678L, b.totalData());
    assertEquals(1_000_312L, b.totalAcks());
    assertEquals(1_000_312.0 / 12_347_678, b.ackRatio(), 1e-12);

    var r =
        new WanRun.Result(
            "bdrp",
            SC,
            seconds(new double[5], new long[5]),
            40,
            "reliable",
            b,
            new WanSystem.Confirmations(40, 39, 1, 0));
    Report.write(dir, List.of(r));
    assertEquals(
        List.of(
            "router,data_bytes,reliable_data_bytes,ack_bytes,ack_ratio",
            "0,1000,12346333,312,0.000025",
            "1,0,345,1000000,2898.550725",
            "total,1000,12346678,1000312,0.081012"),
        Files.readAllLines(dir.resolve("bdrp").resolve("frame-bytes.csv")));
    String md = Files.readString(dir.resolve("summary.md"));
    assertTrue(md.contains("| bdrp (reliable) | t |"), md);
    assertTrue(
        md.contains(
            "bdrp, t (reliable): DATA bytes sent on links 12,347,678 (reliable copies"
                + " 12,346,678), acknowledgement bytes 1,000,312 = 8.10% of DATA"),
        md);
    assertTrue(md.contains("bdrp, t: 39 of 40 messages confirmed, 1 unreached, 0 failed"), md);
    // A system whose bytes are not known writes no such file and no such line.
    Path other = dir.resolve("other");
    Report.write(
        other, List.of(new WanRun.Result("activemq", SC, seconds(new double[5], new long[5]), 40)));
    assertTrue(Files.notExists(other.resolve("activemq").resolve("frame-bytes.csv")));
    assertTrue(!Files.readString(other.resolve("summary.md")).contains("DATA bytes"));
  }
}
