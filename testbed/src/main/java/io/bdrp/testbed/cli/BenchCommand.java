package io.bdrp.testbed.cli;

import io.bdrp.testbed.CsvFile;
import io.bdrp.testbed.FanoutBenchmark;
import io.bdrp.testbed.LatencyBenchmark;
import io.bdrp.testbed.MqttLineBenchmark;
import io.bdrp.testbed.PubSubSystem;
import io.bdrp.testbed.peers.ActiveMqSystem;
import io.bdrp.testbed.peers.BdrpMqtt;
import io.bdrp.testbed.peers.BdrpSystem;
import io.bdrp.testbed.peers.HiveMqSystem;
import io.bdrp.testbed.peers.MosquittoSystem;
import io.bdrp.testbed.peers.MqttSystem;
import io.bdrp.testbed.peers.NatsMqtt;
import io.bdrp.testbed.peers.NatsSystem;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp bench}: runs bdrp side by side with its peers (nats-server, an ActiveMQ broker) on
 * the same load, from the same client harness, and writes the figures to a run folder.
 */
@Command(
    name = "bench",
    footerHeading = "%nExamples:%n",
    footer = {
      "  ./bdrp bench fanout",
      "  ./bdrp bench ring",
      "  ./bdrp bench latency",
      "  ./bdrp bench mqtt"
    },
    mixinStandardHelpOptions = true,
    description = {
      "Benchmarks bdrp side by side with nats-server and ActiveMQ on loopback: every system runs "
          + "as its own server processes, driven by the same Java harness with each system's own "
          + "client library. Results go to a run folder as CSV and Markdown."
    },
    subcommands = {
      BenchCommand.Fanout.class,
      BenchCommand.Latency.class,
      BenchCommand.Ring.class,
      BenchCommand.Mqtt.class
    })
public final class BenchCommand {
  @Option(
      names = "--systems",
      scope = ScopeType.INHERIT,
      split = ",",
      defaultValue = "bdrp,nats,activemq",
      description =
          "Systems to run, in order (default: ${DEFAULT-VALUE}; bench mqtt:"
              + " bdrp,mosquitto,nats,hivemq).")
  List<String> systems;

  @Option(
      names = "--server-jvm-opts",
      scope = ScopeType.INHERIT,
      defaultValue = "-Xms1g -Xmx1g",
      description = "JVM options of the router and broker processes (default: ${DEFAULT-VALUE}).")
  String serverJvmOptions;

  @Option(
      names = "--out",
      scope = ScopeType.INHERIT,
      description = "Run folder (default: runs/bench-KIND-DATE-TIME).")
  Path out;

  PubSubSystem system(String name) {
    return system(name, false);
  }

  PubSubSystem system(String name, boolean tls) {
    return system(name, tls, null);
  }

  /** System {@code name}, with TLS if asked and client authentication if {@code auth} is set. */
  PubSubSystem system(String name, boolean tls, PubSubSystem.Auth auth) {
    List<String> jvm = Arrays.stream(serverJvmOptions.trim().split("\\s+")).toList();
    if (tls && name.equals("activemq")) {
      throw new IllegalArgumentException(
          "--tls: runs bdrp and nats only (leave activemq out of --systems)");
    }
    if (auth != null && name.equals("activemq")) {
      throw new IllegalArgumentException(
          "--auth: runs bdrp and nats only (leave activemq out of --systems)");
    }
    return switch (name) {
      case "bdrp" -> new BdrpSystem(jvm, tls, "tcp", auth);
      case "bdrp+reliable" -> new BdrpSystem(jvm, tls, "tcp", auth).reliable();
      case "nats" -> new NatsSystem(tls, auth);
      case "nats+js" -> new NatsSystem(tls, auth).jetStream();
      case "activemq" -> new ActiveMqSystem(jvm);
      default ->
          throw new IllegalArgumentException(
              "--systems: unknown system '"
                  + name
                  + "' (known: bdrp, bdrp+reliable, nats, nats+js, activemq)");
    };
  }

  Path runFolder(String kind) throws IOException {
    Path dir =
        out != null
            ? out
            : Path.of(
                "runs",
                "bench-"
                    + kind
                    + "-"
                    + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    Files.createDirectories(dir);
    return dir;
  }

  static String ratio(double x, double base) {
    return base > 0 ? String.format(Locale.ROOT, "%.2f×", x / base) : "-";
  }

  /** {@code bdrp bench fanout}. */
  @Command(
      name = "fanout",
      footerHeading = "%nExamples:%n",
      footer = {
        "  ./bdrp bench fanout --seconds 10 --warmup 10",
        "  ./bdrp bench fanout --systems bdrp,nats --tls both",
        "  ./bdrp bench fanout --systems bdrp,nats --auth both",
        "  ./bdrp bench fanout --systems bdrp,bdrp+reliable,nats,nats+js"
      },
      mixinStandardHelpOptions = true,
      description = {
        "One server, one publisher, N subscribers, 200-byte bodies. 'fanout': every subscriber "
            + "takes every message; 'selective': each takes 1/N of them (a bdrp predicate, a NATS "
            + "subject, a JMS selector). Reports delivered messages per second, losses and CPU.",
        "Needs nats-server on PATH (Debian package nats-server) for the nats column. "
            + "'bdrp+reliable' is bdrp with its publisher publishing reliably (sendReliable: "
            + "kept until every router of D has each message, confirmed). 'nats+js' is "
            + "nats-server with JetStream: a memory stream over the subjects, publishes awaiting "
            + "the server's acknowledgement, one push consumer with explicit acks per subscriber; "
            + "redeliveries are reported as duplicates, not counted as deliveries.",
      })
  static final class Fanout implements Callable<Integer> {
    @ParentCommand BenchCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--subscribers",
        defaultValue = "10",
        description = "Default: ${DEFAULT-VALUE}.")
    int subscribers;

    @Option(
        names = "--body-bytes",
        defaultValue = "200",
        description = "Default: ${DEFAULT-VALUE}.")
    int bodyBytes;

    @Option(
        names = "--seconds",
        defaultValue = "10",
        description = "Measured seconds per system and workload (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(
        names = "--warmup",
        defaultValue = "3",
        description = "Warm-up seconds (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(
        names = "--window",
        defaultValue = "20000",
        description = "Deliveries that may be outstanding (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(
        names = "--workloads",
        split = ",",
        defaultValue = "fanout,selective",
        description = "Workloads (default: ${DEFAULT-VALUE}).")
    List<String> workloads;

    /** Whether systems run without a feature (TLS, auth), with it, or both ways in turn. */
    enum Mode {
      off,
      on,
      both
    }

    @Option(
        names = "--tls",
        defaultValue = "off",
        description =
            "TLS 1.3 between clients and server, with certificates from a development CA made "
                + "for the run: off, on, or both (each system plain, then with TLS, and the "
                + "cost of TLS as TLS ÷ plain). bdrp and nats only (default: ${DEFAULT-VALUE}).")
    Mode tls;

    @Option(
        names = "--auth",
        defaultValue = "off",
        description =
            "Client authentication and permissions: off, on, or both (each system open, then "
                + "with auth, and the cost as auth ÷ open). With auth, anonymous clients are "
                + "refused and every client signs in as its own user with a secret made for the "
                + "run. bdrp: auth.clients with tokens; the publisher's publish permission, "
                + "checked on every message, and the subscribers' subscribe permission are the "
                + "range 'bucket >= 0 && bucket < N' (N subscribers). nats: users with "
                + "passwords; the publisher may publish to bench.0 to bench.N-1, subscribers "
                + "subscribe to bench.*. Combines with --tls. bdrp and nats only (default: "
                + "${DEFAULT-VALUE}).")
    Mode auth;

    @Override
    public Integer call() throws Exception {
      PrintWriter w = spec.commandLine().getOut();
      if (tls != Mode.off && parent.systems.contains("activemq")) {
        throw new IllegalArgumentException(
            "--tls: runs bdrp and nats only (add --systems bdrp,nats)");
      }
      if (auth != Mode.off && parent.systems.contains("activemq")) {
        throw new IllegalArgumentException(
            "--auth: runs bdrp and nats only (add --systems bdrp,nats)");
      }
      if (auth != Mode.off && parent.systems.contains("nats+js")) {
        throw new IllegalArgumentException(
            "--auth: nats+js runs without client authentication (leave it out of --systems)");
      }
      FanoutBenchmark.Options o =
          new FanoutBenchmark.Options(
              subscribers,
              bodyBytes,
              Duration.ofSeconds(warmup),
              Duration.ofSeconds(seconds),
              window);
      Path dir = parent.runFolder("fanout");
      List<FanoutBenchmark.Result> results = new ArrayList<>();
      for (String wl : workloads) {
        FanoutBenchmark.Workload workload =
            switch (wl) {
              case "fanout" -> FanoutBenchmark.Workload.FANOUT;
              case "selective" -> FanoutBenchmark.Workload.SELECTIVE;
              default ->
                  throw new IllegalArgumentException(
                      "--workloads: unknown workload '" + wl + "' (known: fanout, selective)");
            };
        for (String s : parent.systems) {
          for (boolean withTls : modes(tls)) {
            for (boolean withAuth : modes(auth)) {
              PubSubSystem sys =
                  parent.system(
                      s,
                      withTls,
                      withAuth ? new PubSubSystem.Auth(subscribers, subscribers) : null);
              w.printf("== %s, %s: 1 publisher, %d subscribers%n", sys.name(), wl, subscribers);
              w.flush();
              try (var ps = new java.io.PrintStream(new WriterStream(w), true)) {
                results.add(
                    FanoutBenchmark.run(sys, workload, o, dir.resolve(sys.name() + "-" + wl), ps));
              }
            }
          }
        }
      }
      try (CsvFile csv =
          CsvFile.create(
              dir.resolve("fanout.csv"),
              "system",
              "workload",
              "subscribers",
              "published",
              "expected",
              "delivered",
              "lost",
              "duplicates",
              "seconds",
              "delivered_per_s",
              "server_cpu_s",
              "client_cpu_s",
              "refused",
              "tls_over_plain",
              "auth_over_open")) {
        for (FanoutBenchmark.Result r : results) {
          csv.row(
              r.system(),
              r.workload().name().toLowerCase(Locale.ROOT),
              r.subscribers(),
              r.published(),
              r.expected(),
              r.delivered(),
              r.lost(),
              r.duplicates(),
              CsvFile.fixed(3, r.seconds()),
              CsvFile.fixed(0, r.deliveredPerSecond()),
              CsvFile.fixed(2, r.serverCpuSeconds()),
              CsvFile.fixed(2, r.clientCpuSeconds()),
              r.refused(),
              cost(results, r, TLS),
              cost(results, r, AUTH));
        }
      }
      StringBuilder md = new StringBuilder();
      boolean tlsBoth = tls == Mode.both;
      boolean authBoth = auth == Mode.both;
      boolean withAuth = auth != Mode.off;
      boolean redelivered = results.stream().anyMatch(r -> r.duplicates() > 0);
      md.append("| workload | system | delivered msg/s | vs bdrp |")
          .append(tlsBoth ? " TLS ÷ plain |" : "")
          .append(authBoth ? " auth ÷ open |" : "")
          .append(" published | lost |")
          .append(redelivered ? " duplicates |" : "")
          .append(withAuth ? " refused |" : "")
          .append(" server CPU (cores) | harness CPU (cores) |\n");
      md.append("|---|---|---:|---:|")
          .append(tlsBoth ? "---:|" : "")
          .append(authBoth ? "---:|" : "")
          .append("---:|---:|")
          .append(redelivered ? "---:|" : "")
          .append(withAuth ? "---:|" : "")
          .append("---:|---:|\n");
      for (FanoutBenchmark.Result r : results) {
        String suffix =
            (r.system().contains(TLS) ? TLS : "") + (r.system().contains(AUTH) ? AUTH : "");
        double base = rate(results, r.workload(), "bdrp" + suffix);
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %,.0f | %s |%s%s %,d | %,d |%s%s %.2f | %.2f |%n",
                r.workload().name().toLowerCase(Locale.ROOT),
                r.system(),
                r.deliveredPerSecond(),
                ratio(base, r.deliveredPerSecond()),
                tlsBoth ? " " + costCell(results, r, TLS) + " |" : "",
                authBoth ? " " + costCell(results, r, AUTH) + " |" : "",
                r.published(),
                r.lost(),
                redelivered ? String.format(Locale.ROOT, " %,d |", r.duplicates()) : "",
                withAuth ? String.format(Locale.ROOT, " %,d |", r.refused()) : "",
                r.serverCpuSeconds() / r.seconds(),
                r.clientCpuSeconds() / r.seconds()));
      }
      Files.writeString(dir.resolve("summary.md"), md);
      w.println();
      w.print(md);
      w.println(
          "('vs bdrp' is bdrp's rate divided by the row's, bdrp with the row's TLS and auth: above"
              + " 1 means bdrp delivers more.)");
      w.println("Results: " + dir.toAbsolutePath());
      w.flush();
      return results.stream()
              .anyMatch(r -> (r.system().startsWith("bdrp") && r.lost() > 0) || r.refused() > 0)
          ? 1
          : 0;
    }

    private static final String TLS = "+tls";
    private static final String AUTH = "+auth";

    private static List<Boolean> modes(Mode m) {
      return switch (m) {
        case off -> List.of(false);
        case on -> List.of(true);
        case both -> List.of(false, true);
      };
    }

    /**
     * The cost of {@code variant} ("+tls" or "+auth") for row {@code r}: its rate divided by that
     * of the same system and workload without it, as a plain number for the CSV; empty if the row
     * is not of that variant or the other was not run.
     */
    static String cost(List<FanoutBenchmark.Result> results, FanoutBenchmark.Result r, String v) {
      if (!r.system().contains(v)) {
        return "";
      }
      double without = rate(results, r.workload(), r.system().replace(v, ""));
      return without > 0 ? CsvFile.fixed(3, r.deliveredPerSecond() / without) : "";
    }

    /** As {@link #cost}, for the summary: "0.85×", blank where there is none. */
    private static String costCell(
        List<FanoutBenchmark.Result> results, FanoutBenchmark.Result r, String v) {
      if (!r.system().contains(v)) {
        return "";
      }
      return ratio(r.deliveredPerSecond(), rate(results, r.workload(), r.system().replace(v, "")));
    }

    private static double rate(
        List<FanoutBenchmark.Result> results, FanoutBenchmark.Workload workload, String system) {
      return results.stream()
          .filter(x -> x.workload() == workload && x.system().equals(system))
          .mapToDouble(FanoutBenchmark.Result::deliveredPerSecond)
          .findFirst()
          .orElse(0);
    }
  }

  /** {@code bdrp bench latency}. */
  @Command(
      name = "latency",
      footerHeading = "%nExamples:%n",
      footer = {
        "  ./bdrp bench latency",
        "  ./bdrp bench latency --systems bdrp --servers 2 --link-transports tcp,shm"
      },
      mixinStandardHelpOptions = true,
      description = {
        "End-to-end latency across a line of servers on loopback at low load: the publisher on "
            + "the first, the subscriber on the last. Reports percentiles in microseconds.",
        "NATS servers form a full-mesh cluster, so for nats a message crosses one route only."
      })
  static final class Latency implements Callable<Integer> {
    @ParentCommand BenchCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--servers", defaultValue = "3", description = "Default: ${DEFAULT-VALUE}.")
    int servers;

    @Option(
        names = "--rate",
        defaultValue = "1000",
        description = "Messages/s (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--seconds", defaultValue = "10", description = "Default: ${DEFAULT-VALUE}.")
    int seconds;

    @Option(names = "--warmup", defaultValue = "3", description = "Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(
        names = "--link-transports",
        split = ",",
        defaultValue = "tcp",
        description =
            "How bdrp's routers carry DATA between them: tcp, udp or shm (a shared-memory ring);"
                + " several run bdrp once each, as bdrp, bdrp+udp, bdrp+shm (default:"
                + " ${DEFAULT-VALUE}).")
    List<String> linkTransports;

    @Override
    public Integer call() throws Exception {
      PrintWriter w = spec.commandLine().getOut();
      LatencyBenchmark.Options o =
          new LatencyBenchmark.Options(
              servers, rate, 200, Duration.ofSeconds(warmup), Duration.ofSeconds(seconds));
      Path dir = parent.runFolder("latency");
      List<LatencyBenchmark.Result> results = new ArrayList<>();
      List<PubSubSystem> systems = new ArrayList<>();
      for (String s : parent.systems) {
        if (s.equals("bdrp")) {
          List<String> jvm = Arrays.stream(parent.serverJvmOptions.trim().split("\\s+")).toList();
          for (String t : linkTransports) {
            systems.add(new BdrpSystem(jvm, false, t));
          }
        } else {
          systems.add(parent.system(s));
        }
      }
      for (PubSubSystem sys : systems) {
        w.printf("== %s: %d servers in a line, %,d msg/s%n", sys.name(), servers, rate);
        w.flush();
        try (var ps = new java.io.PrintStream(new WriterStream(w), true)) {
          results.add(LatencyBenchmark.run(sys, o, dir.resolve(sys.name()), ps));
        }
      }
      StringBuilder md = new StringBuilder();
      md.append(
          "| system | servers | sent | received | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |\n");
      md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      try (CsvFile csv =
          CsvFile.create(
              dir.resolve("latency.csv"),
              "system",
              "servers",
              "sent",
              "received",
              "p50_us",
              "p90_us",
              "p99_us",
              "p999_us",
              "max_us")) {
        for (LatencyBenchmark.Result r : results) {
          csv.row(
              r.system(),
              r.servers(),
              r.sent(),
              r.received(),
              CsvFile.fixed(1, r.p50()),
              CsvFile.fixed(1, r.p90()),
              CsvFile.fixed(1, r.p99()),
              CsvFile.fixed(1, r.p999()),
              CsvFile.fixed(1, r.max()));
          md.append(
              String.format(
                  Locale.ROOT,
                  "| %s | %d | %,d | %,d | %.0f | %.0f | %.0f | %.0f | %.0f |%n",
                  r.system(),
                  r.servers(),
                  r.sent(),
                  r.received(),
                  r.p50(),
                  r.p90(),
                  r.p99(),
                  r.p999(),
                  r.max()));
        }
      }
      Files.writeString(dir.resolve("summary.md"), md);
      w.println();
      w.print(md);
      w.println("Results: " + dir.toAbsolutePath());
      w.flush();
      return results.stream().anyMatch(r -> r.received() < r.sent()) ? 1 : 0;
    }
  }

  /** {@code bdrp bench ring}. */
  @Command(
      name = "ring",
      footerHeading = "%nExamples:%n",
      footer = {"  ./bdrp bench ring", "  ./bdrp bench ring --no-pin"},
      mixinStandardHelpOptions = true,
      description = {
        "The link transport alone, between two processes on this host: a shared-memory ring (the"
            + " router's transport: shm) against a TCP loopback connection. A writer streams"
            + " fixed-size frames to a reader process at low load and high load (fixed rates), then"
            + " as fast as it goes, then not at all (the idle reader's CPU); reports frames per"
            + " second, one-way latency percentiles and, around the full-load phase, how fast a"
            + " cache line crosses between the two CPUs (which says whether the host ran them on"
            + " cores that share a cache). --systems does not apply."
      })
  static final class Ring implements Callable<Integer> {
    @ParentCommand BenchCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--transports",
        split = ",",
        defaultValue = "shm,tcp",
        description = "Transports, in order (default: ${DEFAULT-VALUE}).")
    List<String> transports;

    @Option(
        names = "--frame-bytes",
        defaultValue = "200",
        description = "Bytes per frame (default: ${DEFAULT-VALUE}).")
    int frameBytes;

    @Option(
        names = "--low-rate",
        defaultValue = "10000",
        description = "Frames per second at low load (default: ${DEFAULT-VALUE}).")
    int lowRate;

    @Option(
        names = "--high-rate",
        defaultValue = "1000000",
        description = "Frames per second at high load (default: ${DEFAULT-VALUE}).")
    int highRate;

    @Option(
        names = "--seconds",
        defaultValue = "5",
        description = "Seconds of each loaded phase (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(
        names = "--idle-seconds",
        defaultValue = "5",
        description = "Seconds of the idle phase (default: ${DEFAULT-VALUE}).")
    int idleSeconds;

    @Option(
        names = "--pin",
        negatable = true,
        defaultValue = "true",
        fallbackValue = "true",
        description =
            "Pin the writer to CPU 0 and the reader to CPU 1 (with two CPUs or more and taskset;"
                + " default: pinned).")
    boolean pin;

    @Option(
        names = "--ring-bytes",
        defaultValue = "8388608",
        description =
            "Ring capacity, as the router's limits.ringBytes (default: ${DEFAULT-VALUE}).")
    int ringBytes;

    @Override
    public Integer call() throws Exception {
      PrintWriter w = spec.commandLine().getOut();
      RingBench.Options o =
          new RingBench.Options(
              frameBytes,
              lowRate,
              highRate,
              Duration.ofSeconds(seconds),
              Duration.ofSeconds(idleSeconds),
              ringBytes,
              pin);
      Path dir = parent.runFolder("ring");
      List<RingBench.Run> runs = new ArrayList<>();
      for (String t : transports) {
        w.printf(
            "== %s: %d-byte frames at %,d/s, %,d/s, then as fast as it goes%n",
            t, frameBytes, lowRate, highRate);
        w.flush();
        try (var ps = new java.io.PrintStream(new WriterStream(w), true)) {
          runs.add(RingBench.run(t, o, dir.resolve(t), ps));
        }
      }
      StringBuilder md = new StringBuilder();
      md.append(
          "| transport | load | frames/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |"
              + " idle reader (cores) |\n");
      md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
      try (CsvFile csv =
          CsvFile.create(
              dir.resolve("ring.csv"),
              "transport",
              "load",
              "sent",
              "frames",
              "seconds",
              "frames_per_s",
              "p50_us",
              "p90_us",
              "p99_us",
              "p999_us",
              "max_us",
              "idle_reader_cores",
              "round_trip_before_ns",
              "round_trip_after_ns")) {
        for (RingBench.Run r : runs) {
          for (RingBench.Phase p : r.phases()) {
            csv.row(
                p.transport(),
                p.load(),
                p.sent(),
                p.frames(),
                CsvFile.fixed(6, p.seconds()),
                CsvFile.fixed(0, p.perSecond()),
                CsvFile.fixed(2, p.p50us()),
                CsvFile.fixed(2, p.p90us()),
                CsvFile.fixed(2, p.p99us()),
                CsvFile.fixed(2, p.p999us()),
                CsvFile.fixed(2, p.maxUs()),
                CsvFile.fixed(4, r.idleReaderCores()),
                CsvFile.fixed(0, r.roundTripBeforeNs()),
                CsvFile.fixed(0, r.roundTripAfterNs()));
            md.append(
                String.format(
                    Locale.ROOT,
                    "| %s | %s | %,.0f | %.1f | %.1f | %.1f | %.1f | %.0f | %.3f |%n",
                    p.transport(),
                    p.load(),
                    p.perSecond(),
                    p.p50us(),
                    p.p90us(),
                    p.p99us(),
                    p.p999us(),
                    p.maxUs(),
                    r.idleReaderCores()));
          }
        }
      }
      RingBench.Phase shmMost = phase(runs, "shm", "most");
      RingBench.Phase tcpMost = phase(runs, "tcp", "most");
      RingBench.Phase shmHigh = phase(runs, "shm", "high");
      RingBench.Phase tcpHigh = phase(runs, "tcp", "high");
      RingBench.Phase shmLow = phase(runs, "shm", "low");
      RingBench.Phase tcpLow = phase(runs, "tcp", "low");
      if (shmMost != null && tcpMost != null && shmLow != null && tcpLow != null) {
        md.append(
            String.format(
                Locale.ROOT,
                "%nshm ÷ tcp: throughput %s (as fast as it goes); p50 latency %s at low load, %s at"
                    + " high load; p99 %s at low load, %s at high load.%n",
                ratio(shmMost.perSecond(), tcpMost.perSecond()),
                ratio(shmLow.p50us(), tcpLow.p50us()),
                ratio(shmHigh.p50us(), tcpHigh.p50us()),
                ratio(shmLow.p99us(), tcpLow.p99us()),
                ratio(shmHigh.p99us(), tcpHigh.p99us())));
      }
      for (RingBench.Run r : runs) {
        if (!Double.isNaN(r.roundTripBeforeNs())) {
          md.append(
              String.format(
                  Locale.ROOT,
                  "%s at full load: a cache line from CPU 0 to CPU 1 and back took %.0f ns before,"
                      + " %.0f ns after.%n",
                  r.transport(),
                  r.roundTripBeforeNs(),
                  r.roundTripAfterNs()));
        }
      }
      if (runs.size() > 1 && !samePlacement(runs)) {
        md.append(
            "The round trips differ by more than 2×: the host ran the two CPUs on cores further"
                + " apart for one transport than for the other, so the full-load throughputs do not"
                + " compare; run again.\n");
      }
      Files.writeString(dir.resolve("summary.md"), md);
      w.println();
      w.print(md);
      w.println("Results: " + dir.toAbsolutePath());
      w.flush();
      return runs.stream().flatMap(r -> r.phases().stream()).anyMatch(p -> p.frames() != p.sent())
          ? 1
          : 0;
    }

    /** Whether every run saw about the same CPU-to-CPU round trip (within 2×), before and after. */
    private static boolean samePlacement(List<RingBench.Run> runs) {
      double lo = Double.MAX_VALUE;
      double hi = 0;
      for (RingBench.Run r : runs) {
        for (double ns : new double[] {r.roundTripBeforeNs(), r.roundTripAfterNs()}) {
          if (Double.isNaN(ns)) {
            return true; // unpinned: not measured
          }
          lo = Math.min(lo, ns);
          hi = Math.max(hi, ns);
        }
      }
      return hi <= 2 * lo;
    }

    private static RingBench.Phase phase(List<RingBench.Run> runs, String t, String load) {
      return runs.stream()
          .filter(r -> r.transport().equals(t))
          .flatMap(r -> r.phases().stream())
          .filter(p -> p.load().equals(load))
          .findFirst()
          .orElse(null);
    }
  }

  /** {@code bdrp bench mqtt}. */
  @Command(
      name = "mqtt",
      footerHeading = "%nExamples:%n",
      footer = {
        "  ./bdrp bench mqtt --seconds 10 --warmup 30",
        "  ./bdrp bench mqtt --systems bdrp,mosquitto --workloads line --qos 0"
      },
      mixinStandardHelpOptions = true,
      description = {
        "bdrp's MQTT port against MQTT brokers, every system driven by the same MQTT 3.1.1 client "
            + "(Eclipse Paho mqttv3) and the same harness as bench fanout: one publisher, N "
            + "subscribers, 200-byte payloads, at QoS 0 and QoS 1. 'fanout': one server, every "
            + "subscriber takes every message (bench/#); 'selective': one server, each takes 1/N "
            + "of them (bdrp: the content filter bench/+/m?mqtt.level.1 = \"j\"; brokers: the "
            + "topic bench/j/m). 'line': three servers in a line, the publisher on the first, "
            + "the subscribers on the last all taking one bucket in ten (bdrp's content filter "
            + "against a Mosquitto bridge chain forwarding #); reports delivered rate, latency "
            + "loaded and paced, and the bytes on the inter-server links.",
        "Systems: bdrp, mosquitto (Debian package mosquitto), nats (nats-server with JetStream "
            + "and its MQTT listener), hivemq (HiveMQ CE from Maven Central, in its own JVM); "
            + "'line' runs bdrp and mosquitto only. A system whose server is not installed is "
            + "skipped, and said so."
      })
  static final class Mqtt implements Callable<Integer> {
    @ParentCommand BenchCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    /** The systems when --systems is not given. */
    static final List<String> SYSTEMS = List.of("bdrp", "mosquitto", "nats", "hivemq");

    @Option(
        names = "--subscribers",
        defaultValue = "10",
        description = "Default: ${DEFAULT-VALUE}.")
    int subscribers;

    @Option(
        names = "--body-bytes",
        defaultValue = "200",
        description = "Default: ${DEFAULT-VALUE}.")
    int bodyBytes;

    @Option(
        names = "--seconds",
        defaultValue = "10",
        description =
            "Measured seconds per system, workload and QoS ('line': per phase; default:"
                + " ${DEFAULT-VALUE}).")
    int seconds;

    @Option(
        names = "--warmup",
        defaultValue = "3",
        description = "Warm-up seconds (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(
        names = "--window",
        defaultValue = "5000",
        description =
            "Deliveries that may be outstanding: below bdrp's MQTT delivery window (1024 QoS 1"
                + " deliveries in flight per session) times the subscribers, since bdrp queues"
                + " nothing beyond it (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(
        names = "--paced-rate",
        defaultValue = "2000",
        description =
            "'line': messages/s published in the paced phase (default: ${DEFAULT-VALUE}).")
    int pacedRate;

    @Option(
        names = "--qos",
        split = ",",
        defaultValue = "0,1",
        description = "QoS of publishes and subscriptions, 0 and/or 1 (default: ${DEFAULT-VALUE}).")
    List<Integer> qos;

    @Option(
        names = "--workloads",
        split = ",",
        defaultValue = "fanout,selective,line",
        description = "Workloads (default: ${DEFAULT-VALUE}).")
    List<String> workloads;

    /** Whether --systems was given, before or after the subcommand's name. */
    private boolean systemsGiven() {
      picocli.CommandLine.ParseResult own = spec.commandLine().getParseResult();
      picocli.CommandLine up = spec.commandLine().getParent();
      return own.hasMatchedOption("--systems")
          || (up != null && up.getParseResult().hasMatchedOption("--systems"));
    }

    MqttSystem system(String name, int q) {
      List<String> jvm = Arrays.stream(parent.serverJvmOptions.trim().split("\\s+")).toList();
      return switch (name) {
        case "bdrp" -> new BdrpMqtt(jvm, q);
        case "mosquitto" -> new MosquittoSystem(q);
        case "nats" -> new NatsMqtt(q);
        case "hivemq" -> new HiveMqSystem(jvm, q);
        default ->
            throw new IllegalArgumentException(
                "--systems: unknown MQTT system '"
                    + name
                    + "' (known: bdrp, mosquitto, nats, hivemq)");
      };
    }

    @Override
    public Integer call() throws Exception {
      PrintWriter w = spec.commandLine().getOut();
      List<String> systems = systemsGiven() ? parent.systems : SYSTEMS;
      for (String s : systems) {
        system(s, 0); // names checked before anything runs
      }
      for (int q : qos) {
        if (q != 0 && q != 1) {
          throw new IllegalArgumentException("--qos: 0 or 1, got " + q);
        }
      }
      for (String wl : workloads) {
        if (!List.of("fanout", "selective", "line").contains(wl)) {
          throw new IllegalArgumentException(
              "--workloads: unknown workload '" + wl + "' (known: fanout, selective, line)");
        }
      }
      FanoutBenchmark.Options fo =
          new FanoutBenchmark.Options(
              subscribers,
              bodyBytes,
              Duration.ofSeconds(warmup),
              Duration.ofSeconds(seconds),
              window);
      MqttLineBenchmark.Options lo =
          new MqttLineBenchmark.Options(
              3,
              subscribers,
              10,
              bodyBytes,
              Duration.ofSeconds(warmup),
              Duration.ofSeconds(seconds),
              window,
              pacedRate);
      Path dir = parent.runFolder("mqtt");
      List<String> skipped = new ArrayList<>();
      List<String> failed = new ArrayList<>();
      List<Single> single = new ArrayList<>();
      List<MqttLineBenchmark.Result> line = new ArrayList<>();
      try (var ps = new java.io.PrintStream(new WriterStream(w), true)) {
        for (String wl : workloads) {
          for (int q : qos) {
            for (String s : systems) {
              MqttSystem sys = system(s, q);
              String why = sys.missing();
              if (why == null && wl.equals("line") && !LINE_SYSTEMS.contains(s)) {
                why = "the line compares bdrp with a Mosquitto bridge chain only";
              }
              if (why != null) {
                String note =
                    String.format(Locale.ROOT, "%s, %s, QoS %d: skipped: %s", s, wl, q, why);
                skipped.add(note);
                w.println("== " + note);
                w.flush();
                continue;
              }
              Path sub = dir.resolve(s + "-" + wl + "-qos" + q);
              try {
                if (wl.equals("line")) {
                  w.printf(
                      "== %s, line of 3, QoS %d: 1 publisher on the first, %d subscribers of one"
                          + " bucket in ten on the last%n",
                      s, q, subscribers);
                  w.flush();
                  line.add(MqttLineBenchmark.run(sys, lo, sub, ps));
                } else {
                  w.printf(
                      "== %s, %s, QoS %d: 1 publisher, %d subscribers%n", s, wl, q, subscribers);
                  w.flush();
                  FanoutBenchmark.Workload workload =
                      wl.equals("fanout")
                          ? FanoutBenchmark.Workload.FANOUT
                          : FanoutBenchmark.Workload.SELECTIVE;
                  FanoutBenchmark.Result r = FanoutBenchmark.run(sys, workload, fo, sub, ps);
                  single.add(new Single(q, r, sys.disconnects()));
                }
              } catch (Exception e) {
                // One system that does not start or stalls is reported; the others still run.
                String note = String.format(Locale.ROOT, "%s, %s, QoS %d: %s", s, wl, q, e);
                failed.add(note);
                w.println("== failed: " + note + " (logs in " + sub + ")");
                w.flush();
              }
            }
          }
        }
      }
      StringBuilder md = new StringBuilder();
      if (!single.isEmpty()) {
        writeSingle(dir, single, md);
      }
      if (!line.isEmpty()) {
        writeLine(dir, line, md);
      }
      for (String s : skipped) {
        md.append("\nSkipped: ").append(s).append('\n');
      }
      for (String s : failed) {
        md.append("\nFailed: ").append(s).append('\n');
      }
      Files.writeString(dir.resolve("summary.md"), md);
      w.println();
      w.print(md);
      w.println(
          "('vs bdrp' is bdrp's rate divided by the row's, at the same workload and QoS: above 1"
              + " means bdrp delivers more.)");
      w.println("Results: " + dir.toAbsolutePath());
      w.flush();
      boolean bdrpLost =
          single.stream()
                  .anyMatch(
                      x ->
                          x.r().system().equals("bdrp")
                              && (x.r().lost() > 0 || x.disconnects() > 0))
              || line.stream()
                  .anyMatch(
                      r -> r.system().equals("bdrp") && (r.lost() > 0 || r.disconnects() > 0));
      boolean refused = single.stream().anyMatch(x -> x.r().refused() > 0);
      return bdrpLost || refused || !failed.isEmpty() ? 1 : 0;
    }

    /** bdrp's rate over a row's, or "-" where either was not measured. */
    static String vsBdrp(double bdrp, double row) {
      return bdrp > 0 && row > 0 ? ratio(bdrp, row) : "-";
    }

    /** The systems of the line. */
    static final List<String> LINE_SYSTEMS = List.of("bdrp", "mosquitto");

    /** A single-server result and its QoS. */
    record Single(int qos, FanoutBenchmark.Result r, long disconnects) {}

    private static void writeSingle(Path dir, List<Single> results, StringBuilder md)
        throws IOException {
      try (CsvFile csv =
          CsvFile.create(
              dir.resolve("mqtt.csv"),
              "system",
              "workload",
              "qos",
              "subscribers",
              "published",
              "expected",
              "delivered",
              "lost",
              "seconds",
              "delivered_per_s",
              "bdrp_over_system",
              "server_cpu_s",
              "client_cpu_s",
              "disconnects")) {
        for (Single x : results) {
          FanoutBenchmark.Result r = x.r();
          double base = rate(results, r.workload(), x.qos(), "bdrp");
          csv.row(
              r.system(),
              r.workload().name().toLowerCase(Locale.ROOT),
              x.qos(),
              r.subscribers(),
              r.published(),
              r.expected(),
              r.delivered(),
              r.lost(),
              CsvFile.fixed(3, r.seconds()),
              CsvFile.fixed(0, r.deliveredPerSecond()),
              base > 0 ? CsvFile.fixed(3, base / r.deliveredPerSecond()) : "",
              CsvFile.fixed(2, r.serverCpuSeconds()),
              CsvFile.fixed(2, r.clientCpuSeconds()),
              x.disconnects());
        }
      }
      md.append("| workload | QoS | system | delivered msg/s | vs bdrp | published | lost |")
          .append(" server CPU (cores) | harness CPU (cores) |\n");
      md.append("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
      for (Single x : results) {
        FanoutBenchmark.Result r = x.r();
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %d | %s | %,.0f | %s | %,d | %,d | %.2f | %.2f |%n",
                r.workload().name().toLowerCase(Locale.ROOT),
                x.qos(),
                r.system(),
                r.deliveredPerSecond(),
                vsBdrp(rate(results, r.workload(), x.qos(), "bdrp"), r.deliveredPerSecond()),
                r.published(),
                r.lost(),
                r.serverCpuSeconds() / r.seconds(),
                r.clientCpuSeconds() / r.seconds()));
      }
      double bdrp = rate(results, FanoutBenchmark.Workload.FANOUT, 0, "bdrp");
      double mosquitto = rate(results, FanoutBenchmark.Workload.FANOUT, 0, "mosquitto");
      double nats = rate(results, FanoutBenchmark.Workload.FANOUT, 0, "nats");
      if (bdrp > 0 && (mosquitto > 0 || nats > 0)) {
        md.append(
            String.format(
                Locale.ROOT,
                "%nTargets (issue 27), QoS 0 fan-out: bdrp ÷ Mosquitto %s (≥ 1.5×), bdrp ÷"
                    + " nats-server %s (≥ 1.0×), nothing lost (bdrp lost %,d).%n",
                vsBdrp(bdrp, mosquitto),
                vsBdrp(bdrp, nats),
                results.stream()
                    .filter(x -> x.qos() == 0 && x.r().system().equals("bdrp"))
                    .filter(x -> x.r().workload() == FanoutBenchmark.Workload.FANOUT)
                    .mapToLong(x -> x.r().lost())
                    .sum()));
      }
    }

    private static double rate(
        List<Single> results, FanoutBenchmark.Workload workload, int qos, String system) {
      return results.stream()
          .filter(x -> x.qos() == qos && x.r().workload() == workload)
          .filter(x -> x.r().system().equals(system))
          .mapToDouble(x -> x.r().deliveredPerSecond())
          .findFirst()
          .orElse(0);
    }

    private static void writeLine(
        Path dir, List<MqttLineBenchmark.Result> results, StringBuilder md) throws IOException {
      try (CsvFile csv =
          CsvFile.create(
              dir.resolve("line.csv"),
              "system",
              "qos",
              "published",
              "expected",
              "delivered",
              "seconds",
              "delivered_per_s",
              "link_bytes",
              "link_bytes_per_msg",
              "loaded_p50_us",
              "loaded_p99_us",
              "paced_sent",
              "paced_expected",
              "paced_delivered",
              "paced_p50_us",
              "paced_p99_us",
              "lost",
              "server_cpu_s",
              "disconnects")) {
        for (MqttLineBenchmark.Result r : results) {
          csv.row(
              r.system(),
              r.qos(),
              r.published(),
              r.expected(),
              r.delivered(),
              CsvFile.fixed(3, r.seconds()),
              CsvFile.fixed(0, r.deliveredPerSecond()),
              r.linkBytes(),
              CsvFile.fixed(1, r.linkBytesPerMessage()),
              CsvFile.fixed(0, r.loadedP50()),
              CsvFile.fixed(0, r.loadedP99()),
              r.pacedSent(),
              r.pacedExpected(),
              r.pacedDelivered(),
              CsvFile.fixed(0, r.pacedP50()),
              CsvFile.fixed(0, r.pacedP99()),
              r.lost(),
              CsvFile.fixed(2, r.serverCpuSeconds()),
              r.disconnects());
        }
      }
      md.append("\nLine of 3 servers, subscribers selecting one message in ten:\n\n");
      md.append(
          "| QoS | system | delivered msg/s | vs bdrp | link bytes/msg | link MB | loaded p50/p99"
              + " µs | paced p50/p99 µs | lost | server CPU (cores) |\n");
      md.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      for (MqttLineBenchmark.Result r : results) {
        double base =
            results.stream()
                .filter(x -> x.qos() == r.qos() && x.system().equals("bdrp"))
                .mapToDouble(MqttLineBenchmark.Result::deliveredPerSecond)
                .findFirst()
                .orElse(0);
        md.append(
            String.format(
                Locale.ROOT,
                "| %d | %s | %,.0f | %s | %.1f | %.1f | %.0f / %.0f | %.0f / %.0f | %,d | %.2f |%n",
                r.qos(),
                r.system(),
                r.deliveredPerSecond(),
                vsBdrp(base, r.deliveredPerSecond()),
                r.linkBytesPerMessage(),
                r.linkBytes() / 1e6,
                r.loadedP50(),
                r.loadedP99(),
                r.pacedP50(),
                r.pacedP99(),
                r.lost(),
                r.serverCpuSeconds() / r.seconds()));
      }
      for (MqttLineBenchmark.Result b : results) {
        for (MqttLineBenchmark.Result m : results) {
          if (b.system().equals("bdrp")
              && m.system().equals("mosquitto")
              && b.qos() == m.qos()
              && m.linkBytesPerMessage() > 0) {
            md.append(
                String.format(
                    Locale.ROOT,
                    "%nQoS %d: bdrp's links carried %.2f× the bytes per message of the bridge"
                        + " chain's.%n",
                    b.qos(),
                    b.linkBytesPerMessage() / m.linkBytesPerMessage()));
          }
        }
      }
    }
  }

  /** Progress lines from the benchmarks to the command's output. */
  private static final class WriterStream extends java.io.OutputStream {
    private final PrintWriter w;

    WriterStream(PrintWriter w) {
      this.w = w;
    }

    @Override
    public void write(int b) {
      w.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      w.write(new String(b, off, len, java.nio.charset.StandardCharsets.UTF_8));
    }

    @Override
    public void flush() {
      w.flush();
    }

    @Override
    public void close() {
      w.flush();
    }
  }
}
