package io.bdrp.cli;

import io.bdrp.testbed.net.Emulator;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
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
      TestbedCommand.Run.class
    })
final class TestbedCommand {
  @Option(
      names = "--name",
      defaultValue = "tb",
      scope = ScopeType.INHERIT,
      description = "Network name, 1-4 lower-case letters or digits (default: ${DEFAULT-VALUE}).")
  String name;

  static Topology topology(String source) throws IOException {
    return TopoCommand.read(source).topology();
  }

  /** {@code bdrp testbed up}. */
  @Command(
      name = "up",
      mixinStandardHelpOptions = true,
      description = "Creates the emulated network of a topology.")
  static final class Up implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "FILE|NAME",
        description = "A BRITE file or one of ${COMPLETION-CANDIDATES}.",
        completionCandidates = SimCommand.BundledNames.class)
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
      mixinStandardHelpOptions = true,
      description = {
        "Runs a scenario on a freshly made emulated network, for each system in turn: predicates"
            + " first, a settle pause, then Poisson traffic from every client; every message is"
            + " accounted for against an oracle. Writes per-second CSV, a Markdown summary and a"
            + " PNG plot to the run folder. Scenarios: ci-4, fig3, fig45-1, fig45-2, fig45-4,"
            + " fig45-8, fig7-42.",
        "Exits 1 if bdrp delivered a duplicate or a spurious message."
      })
  static final class Run implements Callable<Integer> {
    @picocli.CommandLine.ParentCommand TestbedCommand parent;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "SCENARIO", description = "A scenario name.")
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
        names = "--server-jvm-opts",
        defaultValue = "-Xms512m -Xmx512m",
        description = "JVM options of routers and brokers (default: ${DEFAULT-VALUE}).")
    String serverJvmOptions;

    @Option(names = "--out", description = "Run folder (default: runs/testbed-SCENARIO-DATE-TIME).")
    Path out;

    @Override
    public Integer call() throws Exception {
      PrintWriter o = spec.commandLine().getOut();
      io.bdrp.testbed.wan.Scenario sc = io.bdrp.testbed.wan.Scenarios.all().get(scenario);
      if (sc == null) {
        throw new IllegalArgumentException(
            "unknown scenario '"
                + scenario
                + "' (known: "
                + String.join(", ", io.bdrp.testbed.wan.Scenarios.all().keySet())
                + ")");
      }
      if (seconds != null || linkRate != null) {
        sc =
            new io.bdrp.testbed.wan.Scenario(
                sc.name(),
                sc.topology(),
                linkRate != null ? Emulator.parseRate(linkRate) : sc.linkRateBits(),
                sc.clients(),
                sc.workload(),
                sc.startRate(),
                sc.endRate(),
                seconds != null ? seconds : sc.seconds(),
                sc.settleSeconds(),
                sc.graceSeconds(),
                sc.bodyBytes(),
                sc.seed());
      }
      long delayMicros = linkDelay.micros();
      if (delayMicros != 0) {
        o.printf(
            "links delayed by %s each way%n",
            delayMicros == Emulator.DELAY_FROM_FILE
                ? "the file's edge delays"
                : Emulator.delay(delayMicros));
      }
      Path dir =
          out != null
              ? out
              : Path.of(
                  "runs",
                  "testbed-"
                      + scenario
                      + "-"
                      + java.time.LocalDateTime.now()
                          .format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
      java.util.List<String> jvm =
          java.util.Arrays.stream(serverJvmOptions.trim().split("\\s+")).toList();
      Topology t = topology(sc.topology());
      java.util.List<io.bdrp.testbed.wan.WanRun.Result> results = new java.util.ArrayList<>();
      var progress =
          new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
      for (String s : systems) {
        io.bdrp.testbed.wan.WanSystem sys =
            switch (s) {
              case "bdrp" -> new io.bdrp.testbed.wan.BdrpWan(jvm);
              case "activemq" -> new io.bdrp.testbed.wan.ActiveMqWan(jvm);
              default ->
                  throw new IllegalArgumentException(
                      "--systems: unknown system '" + s + "' (known: bdrp, activemq)");
            };
        o.printf(
            "== %s: %s on %s, %d clients, %d s%n",
            s, sc.name(), sc.topology(), sc.clients(), sc.seconds());
        o.flush();
        results.add(
            io.bdrp.testbed.wan.WanRun.run(
                sys, sc, t, parent.name, dir.resolve(s), progress, delayMicros));
      }
      io.bdrp.testbed.wan.Report.write(dir, results);
      o.println();
      o.print(io.bdrp.testbed.wan.Report.summary(results));
      o.println("Results: " + dir.toAbsolutePath() + " (summary.md, plot.png, SYSTEM/seconds.csv)");
      o.flush();
      return results.stream()
              .anyMatch(r -> r.system().equals("bdrp") && (r.duplicates() > 0 || r.spurious() > 0))
          ? 1
          : 0;
    }
  }
}
