package io.bdrp.cli;

import io.bdrp.testbed.net.Emulator;
import io.bdrp.topologies.BriteReader;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
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
    subcommands = {TestbedCommand.Up.class, TestbedCommand.Down.class, TestbedCommand.Status.class})
final class TestbedCommand {
  @Option(
      names = "--name",
      defaultValue = "tb",
      scope = ScopeType.INHERIT,
      description = "Network name, 1-4 lower-case letters or digits (default: ${DEFAULT-VALUE}).")
  String name;

  static Topology topology(String source) throws IOException {
    if (Bundled.names().contains(source)) {
      return Bundled.load(source);
    }
    Path p = Path.of(source);
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException(
          "'" + source + "' is neither a file nor a bundled topology " + Bundled.names());
    }
    return BriteReader.read(p).topology();
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

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      Topology t = topology(source);
      Emulator.Network n =
          Emulator.plan(t, parent.name, rate == null ? 0 : Emulator.parseRate(rate));
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
}
