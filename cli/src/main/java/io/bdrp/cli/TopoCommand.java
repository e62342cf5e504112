package io.bdrp.cli;

import io.bdrp.topologies.BriteGenerator;
import io.bdrp.topologies.BriteReader;
import io.bdrp.topologies.BriteWriter;
import io.bdrp.topologies.Bundled;
import io.bdrp.topologies.ReadResult;
import io.bdrp.topologies.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IntSummaryStatistics;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code bdrp topo}: inspects and generates BRITE topology files. */
@Command(
    name = "topo",
    mixinStandardHelpOptions = true,
    description = "Inspects and generates BRITE topology files.",
    subcommands = {TopoCommand.Show.class, TopoCommand.Generate.class})
final class TopoCommand {
  /** {@code bdrp topo show}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description =
          "Reads a BRITE file (or a bundled topology by name) and prints its size, degrees,"
              + " diameter and any warnings from reading it.")
  static final class Show implements Callable<Integer> {
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
        paramLabel = "FILE|NAME",
        description = "A BRITE file or one of ${COMPLETION-CANDIDATES}.",
        completionCandidates = SimCommand.BundledNames.class)
    String source;

    @Override
    public Integer call() throws IOException {
      PrintWriter o = spec.commandLine().getOut();
      ReadResult r;
      if (Bundled.names().contains(source)) {
        r = new ReadResult(Bundled.load(source), java.util.List.of());
      } else {
        Path p = Path.of(source);
        if (!Files.isRegularFile(p)) {
          throw new IllegalArgumentException(
              "'" + source + "' is neither a file nor a bundled topology " + Bundled.names());
        }
        r = BriteReader.read(p);
      }
      Topology t = r.topology();
      IntSummaryStatistics deg =
          IntStream.range(0, t.nodeCount()).map(t::degree).summaryStatistics();
      o.printf("%s: %d routers, %d links%n", source, t.nodeCount(), t.edgeCount());
      o.printf(
          "  degree: min %d, mean %.2f, max %d%n", deg.getMin(), deg.getAverage(), deg.getMax());
      if (t.isConnected()) {
        o.printf("  connected, diameter %d hops%n", t.diameter());
      } else {
        o.printf("  NOT connected: some routers cannot reach others%n");
      }
      for (String line : t.modelLines()) {
        o.printf("  model: %s%n", line.strip());
      }
      for (String w : r.warnings()) {
        o.printf("  warning: %s%n", w);
      }
      o.flush();
      return 0;
    }
  }

  /** {@code bdrp topo generate}. */
  @Command(
      name = "generate",
      mixinStandardHelpOptions = true,
      description =
          "Generates a router-level topology (Waxman or Barabasi-Albert) and writes it as a BRITE"
              + " file; the model line records the parameters and the seed.")
  static final class Generate implements Callable<Integer> {
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--model",
        defaultValue = "waxman",
        description = "waxman or ba (default: ${DEFAULT-VALUE}).")
    String model;

    @Option(names = "--routers", required = true, description = "Number of routers.")
    int routers;

    @Option(
        names = "--links-per-router",
        defaultValue = "2",
        description = "Links each new router adds, m (default: ${DEFAULT-VALUE}).")
    int m;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--out", required = true, description = "The BRITE file to write.")
    Path out;

    @Override
    public Integer call() throws IOException {
      BriteGenerator.Params p =
          switch (model) {
            case "waxman" -> BriteGenerator.Params.waxman(routers, m, seed);
            case "ba" -> BriteGenerator.Params.barabasiAlbert(routers, m, seed);
            default ->
                throw new IllegalArgumentException(
                    "--model must be waxman or ba, got '" + model + "'");
          };
      Topology t = BriteGenerator.generate(p);
      BriteWriter.write(t, out);
      spec.commandLine()
          .getOut()
          .printf("wrote %s: %d routers, %d links%n", out, t.nodeCount(), t.edgeCount());
      spec.commandLine().getOut().flush();
      return 0;
    }
  }
}
