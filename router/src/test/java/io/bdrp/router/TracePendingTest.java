package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.transport.TraceReport;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the ingress counts the reports of a trace: one per copy sent, by (sender, receiver), whatever
 * order they come in (reports travel back on the unicast routes, so a router two hops out may
 * answer before its parent does).
 */
class TracePendingTest {

  private static TraceReport report(int router, int from, int... copiesTo) {
    List<TraceReport.Copy> copies =
        Arrays.stream(copiesTo)
            .mapToObj(n -> new TraceReport.Copy(n, true, false, new int[0]))
            .toList();
    return new TraceReport(
        router, from, 64, from < 0 ? TraceReport.INGRESS : 0, copies, 0, List.of(), List.of());
  }

  @Test
  void aReportThatOvertakesItsParentsIsCounted() {
    Traces.Pending p = new Traces.Pending(1, 1, null, new int[0]);
    p.add(report(2, -1, 1, 4), true); // the ingress sent to 1 and 4
    p.add(report(1, 2, 0), false); // 1 sent on to 0
    p.add(report(0, 1), false);
    p.add(report(0, 4), false); // 0's answer to 4's copy, before 4's own report
    assertEquals(1, p.outstanding, "4's report is still to come");
    p.add(report(4, 2, 0), false); // announces the copy 0 already answered
    assertEquals(0, p.outstanding, "every copy answered");
    assertTrue(p.expected.isEmpty());
    assertEquals(5, p.reports.size(), "every report kept");
  }

  @Test
  void aReportForACopyNeverAnnouncedIsLeftOut() {
    Traces.Pending p = new Traces.Pending(1, 1, null, new int[0]);
    p.add(report(2, -1, 1), true);
    p.add(report(3, 1), false); // 1 never said it sent to 3
    assertEquals(1, p.outstanding, "1's report is still expected");
    p.add(report(1, 2), false);
    assertEquals(0, p.outstanding);
    assertEquals(2, p.reports.size(), "the unannounced report is not in the answer");
  }

  @Test
  void twoCopiesOnOneLinkWantTwoReports() {
    Traces.Pending p = new Traces.Pending(1, 1, null, new int[0]);
    p.add(report(2, -1, 1, 3), true);
    p.add(report(1, 2, 3), false);
    p.add(report(3, 2), false);
    assertEquals(1, p.outstanding, "3 answers 2 and 1 separately");
    p.add(report(3, 1), false);
    assertEquals(0, p.outstanding);
  }
}
