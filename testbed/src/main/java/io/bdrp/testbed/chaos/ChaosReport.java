package io.bdrp.testbed.chaos;

import io.bdrp.testbed.CsvFile;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.wan.Report;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Writes a campaign's results: {@code summary.md} (also what the command prints), {@code
 * faults.csv} and {@code faults.json} (one record per fault), {@code FAULT/seconds.csv} (each
 * fault's accounting per second), {@code seconds.csv} (the whole campaign per second) and {@code
 * plot.png} (deliveries and every router's resident set over time, the faults marked).
 */
public final class ChaosReport {
  private ChaosReport() {}

  /** What a fault missed of the targets; empty if it met them all. */
  public static List<String> misses(ChaosRun.FaultRun f, long rssBoundMiB) {
    List<String> out = new ArrayList<>();
    if (f.skipped() != null) {
      return out;
    }
    Accounting.Result a = f.account();
    if (a.duplicates() > 0) {
      out.add("duplicates");
    }
    if (a.spurious() > 0) {
      out.add("spurious");
    }
    if (f.window().reliable()) {
      if (a.loss() > 0) {
        out.add("loss");
      }
      if (a.outOfOrder() > 0) {
        out.add("out of order");
      }
      if (a.unconfirmed() > 0) {
        out.add("unconfirmed");
      }
      if (a.unreached() > 0) {
        out.add("unreached");
      }
    } else if (a.lossOutsideWindow() > 0) {
      out.add("loss outside fault..+dead+hello");
    }
    if (!a.exactAgain()) {
      out.add("not exact by the end");
    }
    if (f.maxPeakRssKiB() > rssBoundMiB * 1024) {
      out.add("RSS over bound");
    }
    if (!f.findings().isEmpty()) {
      out.add("findings");
    }
    return out;
  }

  /** Whether every fault that ran met every target. */
  public static boolean targetsMet(ChaosRun.Result r) {
    return r.faults().stream().allMatch(f -> misses(f, r.spec().rssBoundMiB()).isEmpty());
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String window(double from, double to) {
    return Double.isNaN(from)
        ? "-"
        : String.format(Locale.ROOT, "%.2f .. %.2f (%.2f s)", from, to, to - from);
  }

  private static String exact(Accounting.Result a) {
    if (a.exactThroughout()) {
      return "throughout";
    }
    return a.exactAgain() ? String.format(Locale.ROOT, "%.2f", a.exactAfterHeal()) : "never";
  }

  private static String mib(long kib) {
    return kib < 0 ? "-" : Long.toString(kib / 1024);
  }

  /** The largest rise of a router's resident set over its warm-up peak, kB (-1: none sampled). */
  static long growth(ChaosRun.FaultRun f) {
    long g = -1;
    for (int i = 0; i < f.peakRssKiB().length; i++) {
      if (f.peakRssKiB()[i] >= 0 && f.warmupPeakRssKiB()[i] >= 0) {
        g = Math.max(g, f.peakRssKiB()[i] - f.warmupPeakRssKiB()[i]);
      }
    }
    return g;
  }

  /** The summary in Markdown. */
  public static String summary(ChaosRun.Result r) {
    ChaosSpec s = r.spec();
    Emulator.Network n = r.network();
    StringBuilder b = new StringBuilder();
    b.append("# Fault campaign ").append(s.name()).append("\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "- network: %s, %d routers, %d links at %s each way; DATA over %s%n"
                + "- workload: %d clients (%d per router), %.1f msg/s each (Poisson), %d-byte"
                + " bodies; the paper's predicates; %s service%n"
                + "- phases per fault: warm-up %d s, fault %d s, recovery %d s%n"
                + "- routers: hello interval %d ms, dead interval %d ms; JVM %s; RSS bound %d"
                + " MiB%n%n",
            s.topology(),
            n.routers().size(),
            n.links().size(),
            Emulator.rate(s.linkRateBits()),
            r.linkTransport(),
            r.routerOf().length,
            s.clientsPerRouter(),
            s.rate(),
            s.bodyBytes(),
            r.service(),
            s.warmupSeconds(),
            s.faultSeconds(),
            s.recoverySeconds(),
            s.helloMillis(),
            s.deadMillis(),
            String.join(" ", r.jvmOptions()),
            s.rssBoundMiB()));
    b.append(
        "| # | fault | target | at (s) | messages | expected | missing | expected loss | loss |"
            + " loss outside fault..+dead+hello | loss window (s from fault) | duplicates | spurious |"
            + " out of order | exact again (s after heal) | late (max delay s) | unconfirmed (max"
            + " confirmation s) | peak RSS (MiB) | RSS growth (MiB) | targets |\n");
    b.append(
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
            + "---:|---|\n");
    int k = 0;
    for (ChaosRun.FaultRun f : r.faults()) {
      k++;
      if (f.skipped() != null) {
        b.append(
            String.format(
                Locale.ROOT,
                "| %d | %s | | | | | | | | | skipped: %s | | | | | | | | | |%n",
                k,
                f.fault().id(),
                f.skipped()));
        continue;
      }
      Accounting.Result a = f.account();
      List<String> miss = misses(f, s.rssBoundMiB());
      b.append(
          String.format(
              Locale.ROOT,
              "| %d | %s | %s | %.1f | %,d | %,d | %,d | %,d | %,d | %,d | %s | %,d | %,d | %,d |"
                  + " %s | %,d (%s) | %s | %s | %s | %s |%n",
              k,
              f.fault().id(),
              f.target(),
              f.window().inject() / 1e9,
              a.messages(),
              a.expected(),
              a.missing(),
              a.expectedLoss(),
              a.loss(),
              a.lossOutsideWindow(),
              window(a.missingFrom(), a.missingTo()),
              a.duplicates(),
              a.spurious(),
              a.outOfOrder(),
              exact(a),
              a.late(),
              num(a.maxDelay()),
              f.window().reliable()
                  ? String.format(
                      Locale.ROOT, "%,d (%s)", a.unconfirmed(), num(a.maxConfirmDelay()))
                  : "-",
              mib(f.maxPeakRssKiB()),
              mib(growth(f)),
              miss.isEmpty() ? "met" : "missed: " + String.join(", ", miss)));
    }
    b.append("\n### Peak RSS per router (MiB), warm-up peak in brackets\n\n| fault |");
    for (int i = 0; i < n.routers().size(); i++) {
      b.append(" r").append(i).append(" |");
    }
    b.append("\n|---|");
    b.append("---:|".repeat(n.routers().size()));
    b.append('\n');
    for (ChaosRun.FaultRun f : r.faults()) {
      if (f.skipped() != null) {
        continue;
      }
      b.append("| ").append(f.fault().id()).append(" |");
      for (int i = 0; i < n.routers().size(); i++) {
        b.append(' ')
            .append(mib(f.peakRssKiB()[i]))
            .append(" (")
            .append(mib(f.warmupPeakRssKiB()[i]))
            .append(") |");
      }
      b.append('\n');
    }
    b.append("\n### What was done, and what else was seen\n\n");
    for (ChaosRun.FaultRun f : r.faults()) {
      b.append("**").append(f.fault().id()).append("**");
      if (f.skipped() != null) {
        b.append(": skipped: ").append(f.skipped()).append("\n\n");
        continue;
      }
      Accounting.Result a = f.account();
      b.append(
          String.format(
              Locale.ROOT,
              " (%s): failed sends %,d; loss window of the unexpected loss %s; exact again %s s"
                  + " after the injection; client sessions broken %d%n%n",
              f.target(),
              a.failedSends(),
              window(a.lossFrom(), a.lossTo()),
              a.exactAgain() ? num(a.exactAfterInject()) : "never",
              f.sessionBreaks()));
      for (String line : f.actions()) {
        b.append("- ").append(line).append('\n');
      }
      if (f.badClient() != null) {
        RawClients.BadClientResult bc = f.badClient();
        b.append(
            String.format(
                Locale.ROOT,
                "- bad client %s (reported apart from the loss): %,d messages sent while it was"
                    + " attached, %,d delivered to it (%,d workload, %,d flood), %,d duplicates;"
                    + " its router dropped %s for it; %,d PINGs written, writes stalled %d"
                    + " times; %s%n",
                bc.name(),
                f.badClientExpected(),
                bc.deliveries(),
                bc.workloadMessages(),
                bc.floodMessages(),
                bc.duplicates(),
                f.badClientRouterDrops() < 0 ? "?" : String.format("%,d", f.badClientRouterDrops()),
                bc.pingsWritten(),
                bc.writeStalls(),
                bc.endedBy()));
      }
      for (String line : f.findings()) {
        b.append("- **finding**: ").append(line).append('\n');
      }
      b.append('\n');
    }
    if (r.late() > 0) {
      b.append(
          String.format(
              Locale.ROOT,
              "%,d deliveries arrived after the campaign's accounting closed (not counted).%n%n",
              r.late()));
    }
    boolean reliable = "reliable".equals(r.service());
    b.append(
        reliable
            ? "Loss: expected deliveries that never arrived, less the expected loss (the killed"
                + " router's own hosts until they were attached again and their predicates in"
                + " force: a host's session is beyond the reliable service; publishers resend what"
                + " was not confirmed, partitions are held until they heal)."
            : "Loss: expected deliveries that never arrived, less the expected loss (the killed"
                + " router's hosts while their sessions were down; across the partition while it"
                + " stood).");
    b.append(
        " Loss window: first and last send time of a missing delivery's message,"
            + " from the injection. Exact again: from the heal until the first message after"
            + " which every message was delivered exactly (negative: before the heal;"
            + " throughout: no message sent after the injection was delivered otherwise). Late:"
            + " messages whose last delivery came more than a dead interval after they were sent."
            + " Out of order: first deliveries that came after a later message of the same"
            + " sender.");
    b.append(
        reliable
            ? " Unconfirmed: messages whose publisher heard neither a confirmation nor that"
                + " routers were unreached. Targets: no loss, no duplicate, no spurious delivery,"
                + " nothing out of order, every message confirmed, exact again by the end of the"
                + " recovery, every router under the RSS bound, no finding.\n"
            : " Targets: no duplicate, no spurious delivery, no loss outside [fault, fault + dead"
                + " interval + hello interval] and the same after the heal, exact again by the end"
                + " of the recovery, every router under the RSS bound, no finding.\n");
    return b.toString();
  }

  /** Writes every file into {@code dir}; returns the summary. */
  public static String write(Path dir, ChaosRun.Result r) throws IOException {
    Files.createDirectories(dir);
    String summary = summary(r);
    Files.writeString(dir.resolve("summary.md"), summary);
    writeCsv(dir.resolve("faults.csv"), r);
    Files.writeString(dir.resolve("faults.json"), json(r));
    int k = 0;
    for (ChaosRun.FaultRun f : r.faults()) {
      k++;
      if (f.skipped() == null) {
        Path d = dir.resolve(String.format(Locale.ROOT, "%d-%s", k, f.fault().id()));
        Files.createDirectories(d);
        seconds(d.resolve("seconds.csv"), f.account().perSecond(), f.window().start() / 1e9);
        anomalies(d.resolve("anomalies.csv"), f, r.routerOf());
      }
    }
    seconds(dir.resolve("seconds.csv"), r.perSecond(), 0);
    plot(dir.resolve("plot.png"), r);
    return summary;
  }

  private static void seconds(Path file, long[][] ps, double offset) throws IOException {
    List<String> columns = new ArrayList<>(List.of("second"));
    columns.addAll(List.of(Accounting.Result.SERIES));
    try (CsvFile w = CsvFile.create(file, columns)) {
      for (int s = 0; s < ps[0].length; s++) {
        List<Object> row = new ArrayList<>();
        row.add(CsvFile.fixed(0, offset + s));
        for (long[] series : ps) {
          row.add(series[s]);
        }
        w.row(row);
      }
    }
  }

  /**
   * Every anomaly of a fault: kind, message, send time, sender and receiver with their routers,
   * when the delivery (duplicate) or the message's last delivery (late) arrived, and when its first
   * delivery to any client did.
   */
  private static void anomalies(Path file, ChaosRun.FaultRun f, int[] routerOf) throws IOException {
    try (CsvFile w =
        CsvFile.create(
            file,
            "kind",
            "message",
            "sent_s",
            "sent_from_fault_s",
            "from_client",
            "from_router",
            "to_client",
            "to_router",
            "send_failed",
            "arrived_s",
            "delay_s",
            "first_delivery_s")) {
      for (Accounting.Anomaly a : f.anomalies()) {
        w.row(
            a.kind().name().toLowerCase(Locale.ROOT).replace('_', '-'),
            a.message(),
            CsvFile.fixed(3, a.sentAt() / 1e9),
            CsvFile.fixed(3, (a.sentAt() - f.window().inject()) / 1e9),
            a.from(),
            routerOf[a.from()],
            a.to() < 0 ? null : a.to(),
            a.to() < 0 ? null : routerOf[a.to()],
            a.failed(),
            a.arrivedAt() == 0 ? null : CsvFile.fixed(3, a.arrivedAt() / 1e9),
            a.arrivedAt() == 0 ? null : CsvFile.fixed(3, (a.arrivedAt() - a.sentAt()) / 1e9),
            a.firstArrivedAt() == 0 ? null : CsvFile.fixed(3, a.firstArrivedAt() / 1e9));
      }
    }
  }

  private static void writeCsv(Path file, ChaosRun.Result r) throws IOException {
    int routers = r.network().routers().size();
    List<String> columns =
        new ArrayList<>(
            List.of(
                "fault",
                "target",
                "start_s",
                "inject_s",
                "heal_s",
                "end_s",
                "messages",
                "failed_sends",
                "expected",
                "delivered",
                "missing",
                "expected_loss",
                "loss",
                "loss_outside_window",
                "missing_from_s",
                "missing_to_s",
                "loss_from_s",
                "loss_to_s",
                "duplicates",
                "spurious",
                "exact_after_heal_s",
                "exact_after_inject_s",
                "exact_throughout",
                "late",
                "max_delay_s",
                "out_of_order",
                "unconfirmed",
                "unreached",
                "max_confirm_s",
                "session_breaks",
                "hello_ms",
                "dead_ms",
                "peak_rss_max_kib"));
    for (int i = 0; i < routers; i++) {
      columns.add("peak_rss_r" + i + "_kib");
    }
    columns.add("targets");
    columns.add("skipped");
    try (CsvFile w = CsvFile.create(file, columns)) {
      for (ChaosRun.FaultRun f : r.faults()) {
        List<Object> row = new ArrayList<>(List.of(f.fault().id(), f.target()));
        if (f.skipped() != null) {
          while (row.size() < columns.size() - 1) {
            row.add(null);
          }
          row.add(f.skipped());
          w.row(row);
          continue;
        }
        Accounting.Window win = f.window();
        Accounting.Result a = f.account();
        row.addAll(
            Arrays.asList(
                CsvFile.fixed(3, win.start() / 1e9),
                CsvFile.fixed(3, win.inject() / 1e9),
                CsvFile.fixed(3, win.heal() / 1e9),
                CsvFile.fixed(3, win.end() / 1e9),
                a.messages(),
                a.failedSends(),
                a.expected(),
                a.delivered(),
                a.missing(),
                a.expectedLoss(),
                a.loss(),
                a.lossOutsideWindow(),
                csvNum(a.missingFrom()),
                csvNum(a.missingTo()),
                csvNum(a.lossFrom()),
                csvNum(a.lossTo()),
                a.duplicates(),
                a.spurious(),
                csvNum(a.exactAfterHeal()),
                csvNum(a.exactAfterInject()),
                a.exactThroughout(),
                a.late(),
                csvNum(a.maxDelay()),
                a.outOfOrder(),
                a.unconfirmed(),
                a.unreached(),
                csvNum(a.maxConfirmDelay()),
                f.sessionBreaks(),
                r.spec().helloMillis(),
                r.spec().deadMillis(),
                f.maxPeakRssKiB()));
        for (long p : f.peakRssKiB()) {
          row.add(p);
        }
        List<String> miss = misses(f, r.spec().rssBoundMiB());
        row.add(miss.isEmpty() ? "met" : String.join(";", miss));
        row.add(null);
        w.row(row);
      }
    }
  }

  /** A number with three decimals, or an empty cell for NaN (not measured). */
  private static String csvNum(double v) {
    return Double.isNaN(v) ? null : CsvFile.fixed(3, v);
  }

  private static String jsonNum(double v) {
    return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
  }

  static String jsonString(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      switch (ch) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (ch < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
          } else {
            b.append(ch);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  private static String jsonStrings(List<String> l) {
    List<String> q = new ArrayList<>();
    for (String s : l) {
      q.add(jsonString(s));
    }
    return "[" + String.join(", ", q) + "]";
  }

  /** The campaign as JSON: its parameters and every fault's figures. */
  static String json(ChaosRun.Result r) {
    ChaosSpec s = r.spec();
    StringBuilder b = new StringBuilder("{\n");
    b.append("  \"campaign\": ").append(jsonString(s.name())).append(",\n");
    b.append("  \"topology\": ").append(jsonString(s.topology())).append(",\n");
    b.append("  \"routers\": ").append(r.network().routers().size()).append(",\n");
    b.append("  \"links\": ").append(r.network().links().size()).append(",\n");
    b.append("  \"link_rate_bits\": ").append(s.linkRateBits()).append(",\n");
    b.append("  \"link_transport\": ").append(jsonString(r.linkTransport())).append(",\n");
    b.append("  \"service\": ").append(jsonString(r.service())).append(",\n");
    b.append("  \"clients\": ").append(r.routerOf().length).append(",\n");
    b.append("  \"rate_per_client\": ").append(s.rate()).append(",\n");
    b.append("  \"warmup_s\": ").append(s.warmupSeconds()).append(",\n");
    b.append("  \"fault_s\": ").append(s.faultSeconds()).append(",\n");
    b.append("  \"recovery_s\": ").append(s.recoverySeconds()).append(",\n");
    b.append("  \"hello_interval_ms\": ").append(s.helloMillis()).append(",\n");
    b.append("  \"dead_interval_ms\": ").append(s.deadMillis()).append(",\n");
    b.append("  \"jvm_options\": ").append(jsonStrings(r.jvmOptions())).append(",\n");
    b.append("  \"rss_bound_mib\": ").append(s.rssBoundMiB()).append(",\n");
    b.append("  \"late_deliveries\": ").append(r.late()).append(",\n");
    b.append("  \"targets_met\": ").append(targetsMet(r)).append(",\n");
    b.append("  \"faults\": [");
    String sep = "\n";
    for (ChaosRun.FaultRun f : r.faults()) {
      b.append(sep);
      sep = ",\n";
      b.append("    {\"fault\": ").append(jsonString(f.fault().id()));
      b.append(", \"target\": ").append(jsonString(f.target()));
      if (f.skipped() != null) {
        b.append(", \"skipped\": ").append(jsonString(f.skipped())).append('}');
        continue;
      }
      Accounting.Window w = f.window();
      Accounting.Result a = f.account();
      b.append(
          String.format(
              Locale.ROOT,
              ", \"start_s\": %.3f, \"inject_s\": %.3f, \"heal_s\": %.3f, \"end_s\": %.3f",
              w.start() / 1e9,
              w.inject() / 1e9,
              w.heal() / 1e9,
              w.end() / 1e9));
      b.append(
          String.format(
              Locale.ROOT,
              ",%n      \"messages\": %d, \"failed_sends\": %d, \"expected\": %d, \"delivered\":"
                  + " %d, \"missing\": %d, \"expected_loss\": %d, \"loss\": %d,"
                  + " \"loss_outside_window\": %d,%n      \"missing_from_s\": %s,"
                  + " \"missing_to_s\": %s, \"loss_from_s\": %s, \"loss_to_s\": %s,"
                  + " \"duplicates\": %d, \"spurious\": %d, \"exact_after_heal_s\": %s,"
                  + " \"exact_after_inject_s\": %s, \"exact_throughout\": %b, \"late\": %d,"
                  + " \"max_delay_s\": %s, \"out_of_order\": %d, \"unconfirmed\": %d,"
                  + " \"unreached\": %d, \"max_confirm_s\": %s, \"session_breaks\": %d",
              a.messages(),
              a.failedSends(),
              a.expected(),
              a.delivered(),
              a.missing(),
              a.expectedLoss(),
              a.loss(),
              a.lossOutsideWindow(),
              jsonNum(a.missingFrom()),
              jsonNum(a.missingTo()),
              jsonNum(a.lossFrom()),
              jsonNum(a.lossTo()),
              a.duplicates(),
              a.spurious(),
              jsonNum(a.exactAfterHeal()),
              jsonNum(a.exactAfterInject()),
              a.exactThroughout(),
              a.late(),
              jsonNum(a.maxDelay()),
              a.outOfOrder(),
              a.unconfirmed(),
              a.unreached(),
              jsonNum(a.maxConfirmDelay()),
              f.sessionBreaks()));
      b.append(",\n      \"peak_rss_kib\": ").append(longs(f.peakRssKiB()));
      b.append(", \"warmup_peak_rss_kib\": ").append(longs(f.warmupPeakRssKiB()));
      b.append(",\n      \"actions\": ").append(jsonStrings(f.actions()));
      b.append(",\n      \"findings\": ").append(jsonStrings(f.findings()));
      if (f.churn() != null) {
        b.append(
            String.format(
                Locale.ROOT,
                ",%n      \"churn\": {\"cycles\": %d, \"acknowledged\": %d, \"failed\": %d}",
                f.churn().cycles(),
                f.churn().acknowledged(),
                f.churn().failed()));
      }
      if (f.badClient() != null) {
        RawClients.BadClientResult c = f.badClient();
        b.append(
            String.format(
                Locale.ROOT,
                ",%n      \"bad_client\": {\"name\": %s, \"sent_while_attached\": %d,"
                    + " \"deliveries\": %d, \"workload\": %d, \"flood\": %d, \"duplicates\": %d,"
                    + " \"router_drops\": %d, \"bytes_read\": %d, \"pings_written\": %d,"
                    + " \"write_stalls\": %d, \"ended_by\": %s}",
                jsonString(c.name()),
                f.badClientExpected(),
                c.deliveries(),
                c.workloadMessages(),
                c.floodMessages(),
                c.duplicates(),
                f.badClientRouterDrops(),
                c.bytesRead(),
                c.pingsWritten(),
                c.writeStalls(),
                jsonString(c.endedBy())));
      }
      b.append(",\n      \"targets\": ")
          .append(jsonStrings(misses(f, s.rssBoundMiB())))
          .append('}');
    }
    b.append("\n  ]\n}\n");
    return b.toString();
  }

  private static String longs(long[] a) {
    List<String> q = new ArrayList<>();
    for (long v : a) {
      q.add(Long.toString(v));
    }
    return "[" + String.join(", ", q) + "]";
  }

  private static void plot(Path file, ChaosRun.Result r) throws IOException {
    long[][] ps = r.perSecond();
    List<Report.Series> deliveries =
        List.of(
            new Report.Series("expected deliveries (by send second)", ps[1], true),
            new Report.Series("delivered", ps[2], false),
            new Report.Series("missing", ps[3], false),
            new Report.Series("duplicates + spurious", add(ps[5], ps[6]), false));
    List<Report.Series> rss = new ArrayList<>();
    for (int i = 0; i < r.rssPerSecondMiB().length; i++) {
      rss.add(new Report.Series("router " + i, r.rssPerSecondMiB()[i], false));
    }
    List<Report.Marker> markers = new ArrayList<>();
    for (ChaosRun.FaultRun f : r.faults()) {
      if (f.skipped() == null) {
        markers.add(
            new Report.Marker(f.window().inject() / 1e9, f.fault().id(), new Color(0xd62728)));
        markers.add(new Report.Marker(f.window().heal() / 1e9, "", new Color(0x2ca02c)));
      }
    }
    Report.timeline(
        file,
        List.of(
            new Report.Panel(
                "bdrp " + r.spec().name() + ": deliveries (faults red, heals green)",
                "deliveries/s",
                deliveries),
            new Report.Panel("resident set of each router", "MiB", rss)),
        markers);
  }

  private static long[] add(long[] x, long[] y) {
    long[] out = new long[x.length];
    for (int i = 0; i < x.length; i++) {
      out[i] = x[i] + y[i];
    }
    return out;
  }
}
