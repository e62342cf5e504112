package io.bdrp.testbed.cli;

import io.bdrp.testbed.chaos.ChaosReport;
import io.bdrp.testbed.chaos.ChaosRun;
import io.bdrp.testbed.chaos.ChaosSpec;
import io.bdrp.testbed.chaos.Fault;
import io.bdrp.testbed.chaos.Targets;
import io.bdrp.testbed.net.Emulator;
import io.bdrp.testbed.wan.ActiveMqWan;
import io.bdrp.testbed.wan.BdrpWan;
import io.bdrp.testbed.wan.Report;
import io.bdrp.testbed.wan.Scenario;
import io.bdrp.testbed.wan.Scenarios;
import io.bdrp.testbed.wan.Suite;
import io.bdrp.testbed.wan.WanRun;
import io.bdrp.testbed.wan.WanSystem;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp testbed}: an emulated wide-area network on this machine — a network namespace per
 * router, shaped veth links along a topology's edges — to run routers and their peers on.
 */
@Command(
    name = "testbed",
    footerHeading = "%nExamples:%n",
    footer = {"  sudo ./bdrp testbed run ci-4", "  sudo ./bdrp testbed run fig45-8 --tls"},
    mixinStandardHelpOptions = true,
    description = {
      "An emulated wide-area network on this machine: one network namespace per router, one "
          + "veth pair per edge of a topology, shaped on both ends (HTB) at the file's bandwidth "
          + "or a uniform rate, and an unshaped link from every router to this namespace for "
          + "clients and measurement. Needs root and iproute2.",
      "Everything a network creates carries its name, so 'down' removes it all even after a "
          + "crashed run."
    },
    subcommands = {
      TestbedCommand.Up.class,
      TestbedCommand.Down.class,
      TestbedCommand.Status.class,
      TestbedCommand.Run.class,
      TestbedCommand.Chaos.class,
      TestbedCommand.Transit.class
    })
public final class TestbedCommand {
  @Option(
      names = "--name",
      defaultValue = "tb",
      scope = ScopeType.INHERIT,
      description = "Network name, 1-4 lower-case letters or digits (default: ${DEFAULT-VALUE}).")
  String name;

  static Topology topology(String source) throws IOException {
    return Bundled.loadOrRead(source).topology();
  }

  /** {@code out}, or {@code runs/NAME-DATE-TIME} when none was given. */
  static Path runFolder(Path out, String name) {
    return out != null
        ? out
        : Path.of(
            "runs",
            name
                + "-"
                + java.time.LocalDateTime.now()
                    .format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
  }

  /** {@code bdrp testbed up}. */
  @Command(
      name = "up",
      footerHeading = "%nExamples:%n",
      footer = {"  sudo ./bdrp testbed up routers-8 --rate 8mbit"},
      mixinStandardHelpOptions = true,
      description = "Creates the emulated network of a topology.")
  static final class Up implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "FILE|NAME",
        description = "A BRITE file or one of ${COMPLETION-CANDIDATES}.",
        completionCandidates = Bundled.Names.class)
    String source;

    @Option(
        names = "--rate",
        description =
            "Every link's rate, each direction: 8mbit, 1MB/s, ... (default: each edge's"
                + " bandwidth from the file, in Mbit/s).")
    String rate;

    @Mixin LinkDelayOption linkDelay;

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      Topology t = topology(source);
      Emulator.Network n =
          Emulator.plan(
              t, parent.name, rate == null ? 0 : Emulator.parseRate(rate), linkDelay.micros());
      long t0 = System.nanoTime();
      Emulator.up(n);
      o.printf(
          "network %s up in %.1f s: %d namespaces (bdrp-%s-r0..%d), %d shaped links%n",
          n.name(),
          (System.nanoTime() - t0) / 1e9,
          n.routers().size(),
          n.name(),
          n.routers().size() - 1,
          n.links().size());
      o.printf(
          "router I is reached from here at its host address (router 0: %s); inside its"
              + " namespace: ip netns exec bdrp-%s-rI ...%n",
          n.routers().get(0).address(), n.name());
      if (n.links().stream().anyMatch(l -> l.delayMicros() > 0)) {
        o.printf(
            "links delayed by a bdrp-delayer in each namespace (its log:"
                + " /run/bdrp-testbed/NAMESPACE.delayer.log);"
                + " see: bdrp testbed status --name %s%n",
            n.name());
      }
      o.printf("remove it with: bdrp testbed down --name %s%n", n.name());
      return 0;
    }
  }

  /** {@code bdrp testbed down}. */
  @Command(
      name = "down",
      footerHeading = "%nExamples:%n",
      footer = {"  sudo ./bdrp testbed down"},
      mixinStandardHelpOptions = true,
      description =
          "Removes an emulated network: ends processes left in its namespaces and deletes the"
              + " namespaces and their links.")
  static final class Down implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      int n = Emulator.down(Emulator.checkName(parent.name));
      spec.commandLine().getOut().printf("network %s: %d namespaces removed%n", parent.name, n);
      return 0;
    }
  }

  /** {@code bdrp testbed status}. */
  @Command(
      name = "status",
      footerHeading = "%nExamples:%n",
      footer = {"  sudo ./bdrp testbed status"},
      mixinStandardHelpOptions = true,
      description = "Shows an emulated network's links with their rate and counters.")
  static final class Status implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      if (Emulator.namespaces(Emulator.checkName(parent.name)).isEmpty()) {
        o.printf("network %s is not up%n", parent.name);
        return 1;
      }
      o.print(Emulator.status(Emulator.load(parent.name)));
      o.flush();
      return 0;
    }
  }

  /** {@code bdrp testbed run}. */
  @Command(
      name = "run",
      footerHeading = "%nExamples:%n",
      footer = {
        "  sudo ./bdrp testbed run fig45-8 --systems bdrp,activemq",
        "  sudo ./bdrp testbed run ci-4 --link-transport udp --fast-path ebpf",
        "  sudo ./bdrp testbed run fig45-8 --service reliable"
      },
      mixinStandardHelpOptions = true,
      description = {
        "Runs a scenario on a freshly made emulated network, for each system in turn: predicates"
            + " first, a settle pause, then Poisson traffic from every client; every message is"
            + " accounted for against an oracle. Writes per-second CSV, a Markdown summary and a"
            + " PNG plot to the run folder. Scenarios: ci-4, fig3, fig45-1, fig45-2, fig45-4,"
            + " fig45-8, fig7-42 and fig7-42's variations (fig7-clients-630, fig7-filters-10|40,"
            + " fig7-constraints-1-3|2-6, fig7-links-half|double).",
        "Suites run several scenarios and plot them together: fig45 (fig45-1 to fig45-8, a"
            + " panel per network size and system, like the paper's Figures 4-5) and fig7 (the"
            + " 42-router runs, a panel per varied dimension with a line per value, like its"
            + " Figure 7).",
        "Exits 1 if bdrp delivered a duplicate or a spurious message."
      })
  static final class Run implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "SCENARIO", description = "A scenario or suite name.")
    String scenario;

    @Option(
        names = "--systems",
        split = ",",
        defaultValue = "bdrp",
        description = "Systems to run, in order (default: ${DEFAULT-VALUE}).")
    java.util.List<String> systems;

    @Option(names = "--seconds", description = "Traffic duration (default: the scenario's).")
    Integer seconds;

    @Option(
        names = "--link-rate",
        description = "Every link's rate, such as 256kB/s or 2mbit (default: the scenario's).")
    String linkRate;

    @Mixin LinkDelayOption linkDelay;

    @Option(
        names = "--link-transport",
        defaultValue = "tcp",
        description =
            "How bdrp's routers carry DATA between neighbours: tcp, or udp (one datagram per"
                + " packet; control stays on TCP) (default: ${DEFAULT-VALUE}).")
    String linkTransport;

    @Option(
        names = "--fast-path",
        defaultValue = "jvm",
        description =
            "Where bdrp's routers forward transit DATA that arrives by UDP: jvm, or ebpf (in the"
                + " kernel, at TC ingress; needs --link-transport udp and root; a router that cannot"
                + " load it says why in its log and forwards in the JVM) (default:"
                + " ${DEFAULT-VALUE}).")
    String fastPath;

    @Option(
        names = "--broadcast-fraction",
        description =
            "bdrp's routing.broadcastFraction: a message for more than this fraction of the"
                + " routers is broadcast along the source's tree instead of forwarded by D; 1:"
                + " never (default: the router's).")
    Double broadcastFraction;

    @Option(
        names = "--service",
        defaultValue = "best-effort",
        description =
            "How bdrp's clients publish: best-effort, or reliable (every message confirmed once"
                + " every router of its D has it; the run waits up to 70 s more for the last"
                + " confirmations); the summary gives the DATA and acknowledgement bytes the"
                + " routers sent. Other systems publish as always (default: ${DEFAULT-VALUE}).")
    String service;

    @Option(
        names = "--server-jvm-opts",
        defaultValue = "-Xms512m -Xmx512m",
        description = "JVM options of routers and brokers (default: ${DEFAULT-VALUE}).")
    String serverJvmOptions;

    @Option(
        names = "--tls",
        description =
            "bdrp's client ports speak TLS 1.3 and its router links mutual TLS, with certificates"
                + " from a development CA made in the run folder (docs/security.md).")
    boolean tls;

    @Option(names = "--out", description = "Run folder (default: runs/testbed-SCENARIO-DATE-TIME).")
    Path out;

    @Option(
        names = "--start-rate",
        description =
            "Each client's messages/s at the start of the traffic (default: the scenario's).")
    Double startRate;

    @Option(
        names = "--end-rate",
        description =
            "Each client's messages/s at the end of the traffic (default: the scenario's).")
    Double endRate;

    private Scenario override(Scenario sc) {
      if (startRate != null && startRate < 0 || endRate != null && endRate < 0) {
        throw new IllegalArgumentException("--start-rate and --end-rate must not be negative");
      }
      Scenario out =
          sc.withRamp(
              startRate != null ? startRate : sc.startRate(),
              endRate != null ? endRate : sc.endRate(),
              seconds != null ? seconds : sc.seconds());
      return linkRate != null ? out.withLinkRate(Emulator.parseRate(linkRate)) : out;
    }

    @Override
    public Integer call() throws Exception {
      PrintWriter o = spec.commandLine().getOut();
      BdrpWan.checkOptions(linkTransport, fastPath, broadcastFraction);
      BdrpWan.checkService(service);
      Suite suite = Scenarios.suites().get(scenario);
      List<Scenario> runs;
      if (suite != null) {
        suite = suite.map(this::override);
        runs = suite.scenarios();
      } else {
        Scenario sc = Scenarios.all().get(scenario);
        if (sc == null) {
          throw new IllegalArgumentException(
              "unknown scenario '"
                  + scenario
                  + "' (scenarios: "
                  + String.join(", ", Scenarios.all().keySet())
                  + "; suites: "
                  + String.join(", ", Scenarios.suites().keySet())
                  + ")");
        }
        runs = List.of(override(sc));
      }
      long delayMicros = linkDelay.micros();
      if (delayMicros != 0) {
        o.printf(
            "links delayed by %s each way%n",
            delayMicros == Emulator.DELAY_FROM_FILE
                ? "the file's edge delays"
                : Emulator.delay(delayMicros));
      }
      if (tls) {
        o.println(
            "bdrp: TLS 1.3 on client ports, mutual TLS on router links (certificates in each"
                + " run's bdrp/tls)");
      }
      if (service.equals("reliable") && systems.contains("bdrp")) {
        o.println("bdrp: every message published with the reliable service");
      }
      Path dir = runFolder(out, "testbed-" + scenario);
      List<String> jvm = java.util.Arrays.stream(serverJvmOptions.trim().split("\\s+")).toList();
      List<WanRun.Result> results = new ArrayList<>();
      Map<String, List<WanRun.Result>> byScenario = new LinkedHashMap<>();
      var progress =
          new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
      int k = 0;
      for (Scenario sc : runs) {
        Topology t = topology(sc.topology());
        Path runDir = suite != null ? dir.resolve(sc.name()) : dir;
        List<WanRun.Result> these = new ArrayList<>();
        for (String s : systems) {
          WanSystem sys =
              switch (s) {
                case "bdrp" ->
                    new BdrpWan(jvm, linkTransport, fastPath, broadcastFraction, tls, service);
                case "activemq" -> new ActiveMqWan(jvm);
                default ->
                    throw new IllegalArgumentException(
                        "--systems: unknown system '" + s + "' (known: bdrp, activemq)");
              };
          k++;
          o.printf(
              "== [%d/%d] %s: %s on %s, %d clients, %d s%n",
              k,
              runs.size() * systems.size(),
              s,
              sc.name(),
              sc.topology(),
              sc.clients(),
              sc.seconds());
          o.flush();
          these.add(WanRun.run(sys, sc, t, parent.name, runDir.resolve(s), progress, delayMicros));
          // written after every system, so that a later failure keeps what was measured
          Report.write(runDir, these);
        }
        byScenario.put(sc.name(), these);
        results.addAll(these);
      }
      o.println();
      if (suite != null) {
        o.print(Report.writeSuite(dir, suite, byScenario));
        o.println(
            "Results: "
                + dir.toAbsolutePath()
                + " (summary.md, plot.png; SCENARIO/SYSTEM/seconds.csv,"
                + " SCENARIO/bdrp/frame-bytes.csv)");
      } else {
        o.print(Report.summary(results));
        o.println(
            "Results: "
                + dir.toAbsolutePath()
                + " (summary.md, plot.png, SYSTEM/seconds.csv, bdrp/frame-bytes.csv)");
      }
      o.flush();
      return results.stream()
              .anyMatch(r -> r.system().equals("bdrp") && (r.duplicates() > 0 || r.spurious() > 0))
          ? 1
          : 0;
    }
  }

  /** {@code bdrp testbed chaos}. */
  @Command(
      name = "chaos",
      footerHeading = "%nExamples:%n",
      footer = {"  sudo ./bdrp testbed chaos"},
      mixinStandardHelpOptions = true,
      description = {
        "A fault campaign: bdrp routers on a freshly made emulated network with cycles, the"
            + " paper's workload flowing throughout, and faults injected one after the other, each"
            + " after a warm-up, then healed and followed by a recovery phase: link-down,"
            + " silent-link, partition, kill-restart, client-churn, slow-consumer, never-reads."
            + " Campaigns: mesh-8 (the default: routers-8, every fault, about 6 minutes) and"
            + " square-4 (routers-4, shorter phases).",
        "For each fault it reports, from the oracle's per-message accounting: missing deliveries"
            + " (expected loss apart), the loss window, duplicates, spurious deliveries, the time"
            + " until delivery is exact again, and every router's peak RSS (sampled every 250 ms)."
            + " Writes summary.md, faults.csv, faults.json, seconds.csv, rss.csv, plot.png and"
            + " each fault's seconds.csv and router metrics to the run folder.",
        "Exits 1 if a fault missed a target: a duplicate or spurious delivery, loss of a message"
            + " sent outside [fault, fault + dead interval], delivery not exact by the end of the"
            + " recovery, a router over the RSS bound, or a finding (a router that died, sessions"
            + " it kept)."
      })
  static final class Chaos implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "CAMPAIGN",
        arity = "0..1",
        defaultValue = "mesh-8",
        description = "mesh-8 or square-4 (default: ${DEFAULT-VALUE}).")
    String campaign;

    @Option(
        names = "--topology",
        paramLabel = "FILE|NAME",
        description = "A BRITE file or bundled topology with cycles (default: the campaign's).")
    String topology;

    @Option(
        names = "--faults",
        split = ",",
        description =
            "Faults to run, in order (default: all: link-down, silent-link, partition,"
                + " kill-restart, client-churn, slow-consumer, never-reads).")
    List<String> faults;

    @Option(
        names = "--warmup",
        description = "Seconds of traffic before each fault (default: the campaign's).")
    Integer warmup;

    @Option(names = "--fault", description = "Seconds each fault lasts (default: the campaign's).")
    Integer fault;

    @Option(
        names = "--recovery",
        description = "Seconds of traffic after each heal (default: the campaign's).")
    Integer recovery;

    @Option(
        names = "--settle",
        description = "Seconds of pause after the predicates are set (default: the campaign's).")
    Integer settle;

    @Option(
        names = "--rate",
        description = "Messages/s each client publishes (default: the campaign's, 8).")
    Double rate;

    @Option(
        names = "--clients-per-router",
        description = "Workload clients per router (default: the campaign's).")
    Integer clientsPerRouter;

    @Option(
        names = "--link-rate",
        description = "Every link's rate, such as 256kB/s or 2mbit (default: the campaign's).")
    String linkRate;

    @Mixin LinkDelayOption linkDelay;

    @Option(
        names = "--hello-interval",
        description = "The routers' hello interval in ms (default: the campaign's, 1000).")
    Long hello;

    @Option(
        names = "--dead-interval",
        description = "The routers' dead interval in ms (default: the campaign's, 3500).")
    Long dead;

    @Option(
        names = "--link",
        paramLabel = "A-B",
        description =
            "The link of link-down and silent-link (default: the busiest link on a cycle).")
    String link;

    @Option(
        names = "--router",
        description =
            "The router of kill-restart, client-churn, slow-consumer and never-reads (default:"
                + " the busiest transit router whose loss leaves the others connected).")
    Integer router;

    @Option(
        names = "--cut",
        paramLabel = "A-B,...",
        split = ",",
        description =
            "The links the partition cuts (default: an even split into two connected halves"
                + " with the fewest links between them).")
    List<String> cut;

    @Option(
        names = "--churn-cycles",
        description = "Sessions of client-churn (default: the campaign's).")
    Integer churnCycles;

    @Option(
        names = "--rss-bound",
        description = "MiB every router's resident set must stay under (default: the campaign's).")
    Long rssBound;

    @Option(
        names = "--link-transport",
        defaultValue = "tcp",
        description = "How routers carry DATA between neighbours: tcp or udp (default: tcp).")
    String linkTransport;

    @Option(
        names = "--fast-path",
        defaultValue = "jvm",
        description =
            "Where routers forward transit DATA that arrives by UDP: jvm, or ebpf (the kernel fast"
                + " path; needs --link-transport udp) (default: ${DEFAULT-VALUE}).")
    String fastPath;

    @Option(
        names = "--broadcast-fraction",
        description =
            "The routers' routing.broadcastFraction; 1: every message goes by D (default: the"
                + " router's).")
    Double broadcastFraction;

    @Option(
        names = "--service",
        defaultValue = "best-effort",
        description =
            "How the clients publish: best-effort, or reliable (every message confirmed; the"
                + " targets become no loss beyond the killed router's own hosts, no duplicate,"
                + " nothing out of order, everything confirmed) (default: ${DEFAULT-VALUE}).")
    String service;

    @Option(
        names = "--server-jvm-opts",
        defaultValue = "-Xms256m -Xmx256m",
        description = "JVM options of the routers (default: ${DEFAULT-VALUE}).")
    String serverJvmOptions;

    @Option(names = "--out", description = "Run folder (default: runs/chaos-CAMPAIGN-DATE-TIME).")
    Path out;

    @Override
    public Integer call() throws Exception {
      PrintWriter o = spec.commandLine().getOut();
      ChaosSpec base = ChaosSpec.all().get(campaign);
      if (base == null) {
        throw new IllegalArgumentException(
            "unknown campaign '"
                + campaign
                + "' (campaigns: "
                + String.join(", ", ChaosSpec.all().keySet())
                + ")");
      }
      io.bdrp.testbed.wan.BdrpWan.checkOptions(linkTransport, fastPath, broadcastFraction);
      List<Fault> fs = faults == null ? base.faults() : faults.stream().map(Fault::of).toList();
      ChaosSpec sc =
          new ChaosSpec(
              base.name(),
              topology != null ? topology : base.topology(),
              linkRate != null ? Emulator.parseRate(linkRate) : base.linkRateBits(),
              clientsPerRouter != null ? clientsPerRouter : base.clientsPerRouter(),
              rate != null ? rate : base.rate(),
              base.workload(),
              base.bodyBytes(),
              fs,
              warmup != null ? warmup : base.warmupSeconds(),
              fault != null ? fault : base.faultSeconds(),
              recovery != null ? recovery : base.recoverySeconds(),
              settle != null ? settle : base.settleSeconds(),
              hello != null ? hello : base.helloMillis(),
              dead != null ? dead : base.deadMillis(),
              churnCycles != null ? churnCycles : base.churnCycles(),
              base.floodBytesPerSecond(),
              base.slowReadBytesPerSecond(),
              base.pingsPerSecond(),
              rssBound != null ? rssBound : base.rssBoundMiB(),
              base.seed());
      var choices =
          new ChaosRun.Choices(
              link == null ? null : Targets.Link.parse(link),
              router,
              cut == null ? null : cut.stream().map(Targets.Link::parse).toList(),
              fastPath,
              broadcastFraction,
              service);
      Path dir = runFolder(out, "chaos-" + campaign);
      List<String> jvm = java.util.Arrays.stream(serverJvmOptions.trim().split("\\s+")).toList();
      o.printf(
          "== chaos %s on %s (%s service): faults %s; warm-up %d s, fault %d s, recovery %d s"
              + " each%n",
          sc.name(),
          sc.topology(),
          service,
          String.join(",", sc.faults().stream().map(Fault::id).toList()),
          sc.warmupSeconds(),
          sc.faultSeconds(),
          sc.recoverySeconds());
      o.flush();
      var progress =
          new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
      var result =
          ChaosRun.run(
              sc,
              topology(sc.topology()),
              parent.name,
              dir,
              progress,
              jvm,
              linkTransport,
              linkDelay.micros(),
              choices);
      String summary = ChaosReport.write(dir, result);
      o.println();
      o.print(summary);
      o.println(
          "Results: "
              + dir.toAbsolutePath()
              + " (summary.md, faults.csv, faults.json, seconds.csv, rss.csv, plot.png,"
              + " N-FAULT/seconds.csv, router logs and metrics)");
      o.flush();
      return ChaosReport.targetsMet(result) ? 0 : 1;
    }
  }

  /** {@code bdrp testbed transit}. */
  @Command(
      name = "transit",
      footerHeading = "%nExamples:%n",
      footer = {
        "  sudo ./bdrp testbed transit",
        "  sudo ./bdrp testbed transit --udp-auth none",
        "  sudo ./bdrp testbed transit --broadcast --fan-out 3 --udp-auth none"
      },
      mixinStandardHelpOptions = true,
      description = {
        "How fast one transit router forwards, in the JVM and in the kernel (fastPath: ebpf):"
            + " router 0 - router 1 - sinks in namespaces over unshaped UDP links. A C blaster in"
            + " router 0's namespace offers router 1 DATA datagrams for the sinks at each rate;"
            + " the copies reaching the sinks' interfaces are counted. Prints, per path and rate,"
            + " the loss and the CPU time per packet (the whole machine's, and router 1's JVM's),"
            + " and the highest rate each path forwards without loss. Each path runs with the"
            + " links' datagrams authenticated (auth.udp: mac; the blaster seals them with router"
            + " 0's key, which the routers log to the run folder) and without (none), so that"
            + " the summary shows the cost of authentication (mac / none). Needs root and the"
            + " kernel fast path.",
        "Writes transit.csv and summary.md to the run folder."
      })
  static final class Transit implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--fan-out",
        defaultValue = "1",
        description = "Sinks behind router 1; each packet is split this many ways (default: 1).")
    int fanOut;

    @Option(
        names = "--broadcast",
        description =
            "Offer broadcasts of router 0 (each with its own message id) instead of DATA by D:"
                + " router 1 copies each to the sinks, its children on router 0's tree.")
    boolean broadcast;

    @Option(
        names = "--rates",
        split = ",",
        defaultValue = "10000,20000,40000,80000,120000,160000,240000",
        description = "Packets per second offered, in turn (default: ${DEFAULT-VALUE}).")
    double[] rates;

    @Option(names = "--seconds", defaultValue = "4", description = "Each rate's duration (s).")
    double seconds;

    @Option(
        names = "--body",
        defaultValue = "100",
        description = "Message body bytes (default: ${DEFAULT-VALUE}).")
    int body;

    @Option(
        names = "--paths",
        split = ",",
        defaultValue = "jvm,ebpf",
        description = "Paths to measure, in order (default: ${DEFAULT-VALUE}).")
    List<String> paths;

    @Option(
        names = "--udp-auth",
        defaultValue = "both",
        description =
            "What protects the links' datagrams (auth.udp): mac, none, or both, each path run"
                + " with mac and then with none in the same run, so that the summary shows the"
                + " cost of authentication (default: ${DEFAULT-VALUE}).")
    String udpAuth;

    @Option(
        names = "--server-jvm-opts",
        defaultValue = "-Xms512m -Xmx512m",
        description = "JVM options of the routers (default: ${DEFAULT-VALUE}).")
    String serverJvmOptions;

    @Option(names = "--out", description = "Run folder (default: runs/transit-DATE-TIME).")
    Path out;

    @Override
    public Integer call() throws Exception {
      if (fanOut < 1 || fanOut > 60) {
        throw new IllegalArgumentException("--fan-out must be 1..60, got " + fanOut);
      }
      for (String p : paths) {
        if (!p.equals("jvm") && !p.equals("ebpf")) {
          throw new IllegalArgumentException("--paths: expected jvm or ebpf, got '" + p + "'");
        }
      }
      List<String> auths =
          switch (udpAuth) {
            case "both" -> io.bdrp.testbed.net.TransitBench.UDP_AUTH;
            case "mac", "none" -> List.of(udpAuth);
            default ->
                throw new IllegalArgumentException(
                    "--udp-auth: expected mac, none or both, got '" + udpAuth + "'");
          };
      if (paths.contains("ebpf") && !io.bdrp.router.fastpath.EbpfFastPath.isAvailable()) {
        throw new IllegalStateException(
            "the kernel fast path is not available here: "
                + io.bdrp.router.fastpath.EbpfFastPath.unavailabilityReason());
      }
      PrintWriter o = spec.commandLine().getOut();
      Path dir = runFolder(out, "transit");
      java.nio.file.Files.createDirectories(dir);
      List<String> jvm = java.util.Arrays.stream(serverJvmOptions.trim().split("\\s+")).toList();
      var progress =
          new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
      List<io.bdrp.testbed.net.TransitBench.Result> results = new ArrayList<>();
      for (String p : paths) {
        for (String a : auths) {
          o.printf(
              "== %s, auth.udp %s, fan-out %d%s%n", p, a, fanOut, broadcast ? ", broadcast" : "");
          o.flush();
          results.add(
              io.bdrp.testbed.net.TransitBench.run(
                  parent.name,
                  p,
                  a,
                  fanOut,
                  broadcast,
                  rates,
                  seconds,
                  body,
                  jvm,
                  dir.resolve(p + "-" + a),
                  progress));
        }
      }
      String md = io.bdrp.testbed.net.TransitBench.writeReport(dir, results);
      o.println();
      o.print(md);
      o.println("Results: " + dir.toAbsolutePath() + " (transit.csv, summary.md)");
      return 0;
    }
  }
}
