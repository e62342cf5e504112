package io.bdrp.cli;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedMatcher;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.match.ExactMatcher;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp demo}: a federation of routers in one process, each with its hosts' exact predicates
 * (LOCAL-PREDICATES) and every router's Bloom-encoded aggregate (PREDICATES). Each message is
 * matched once at its ingress router, which computes the destination set D; every router of D
 * delivers by exact matching. Deliveries are checked against an oracle that evaluates every host's
 * predicate directly.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Run a local federation on the paper's workload and print a delivery summary.",
      "Each message is matched once at its ingress router against every router's "
          + "Bloom-encoded predicate; the routers in D deliver by exact matching; an "
          + "independent oracle checks every delivery. Exits 1 if any delivery is wrong."
    })
public final class DemoCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--routers",
      defaultValue = "8",
      description = "Routers (default: ${DEFAULT-VALUE}).")
  int routers;

  @Option(
      names = "--hosts",
      defaultValue = "80",
      description = "Hosts, spread evenly over the routers (default: ${DEFAULT-VALUE}).")
  int hosts;

  @Option(
      names = "--messages",
      defaultValue = "20000",
      description = "Messages to publish (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--constraints",
      defaultValue = "1",
      description =
          "Most constraints per conjunction; the paper's comparisons use 1 (default: ${DEFAULT-VALUE}).")
  int maxConstraints;

  @Option(
      names = "--names",
      defaultValue = "100",
      description = "Attribute names of each type in the workload (default: ${DEFAULT-VALUE}).")
  int names;

  @Mixin BloomOption bloom;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Workload seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--out",
      defaultValue = "runs",
      description = "Folder for the run's CSV (default: ${DEFAULT-VALUE}).")
  Path out;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    if (routers < 1 || hosts < 1 || messages < 1) {
      throw new IllegalArgumentException("--routers, --hosts and --messages must be at least 1");
    }
    BloomParameters params = bloom.parameters();
    WorkloadSpec workload =
        WorkloadSpec.PAPER.withNames(names, names).withConstraints(1, maxConstraints);
    WorkloadGenerator g = new WorkloadGenerator(workload, seed);
    Encoder encoder = new Encoder(params);

    // Hosts, their routers and predicates.
    int[] routerOf = new int[hosts];
    Predicate[] predicateOf = new Predicate[hosts];
    ExactMatcher[] local = new ExactMatcher[routers];
    List<List<Predicate>> byRouter = new ArrayList<>();
    for (int r = 0; r < routers; r++) {
      local[r] = new ExactMatcher();
      byRouter.add(new ArrayList<>());
    }
    for (int h = 0; h < hosts; h++) {
      routerOf[h] = h % routers;
      predicateOf[h] = g.predicate();
      local[routerOf[h]].put(h, predicateOf[h]);
      byRouter.get(routerOf[h]).add(predicateOf[h]);
    }
    EncodedMatcher table = new EncodedMatcher(params);
    long filters = 0;
    for (int r = 0; r < routers; r++) {
      var aggregate = encoder.encode(Predicate.or(byRouter.get(r)));
      table.put(r, aggregate);
      filters += aggregate.size();
    }
    EncodedIndex index = table.snapshot();
    o.printf(
        "bdrp demo: %d routers, %d hosts, Bloom M=%d k=%d, seed %d%n",
        routers, hosts, params.bits(), params.hashes(), seed);
    o.printf(
        "  each host: %d conjunctions of 1-%d constraints; filters advertised per router: %.1f%n",
        workload.conjunctionsPerPredicate(), maxConstraints, filters / (double) routers);
    o.flush();

    long expected = 0;
    long delivered = 0;
    long undelivered = 0;
    long duplicates = 0;
    long spurious = 0;
    long[] inD = new long[routers];
    long[] falseInD = new long[routers];
    long[] deliveredAt = new long[routers];
    int[] seen = new int[hosts]; // delivery count per host for the current message
    long[] d = new long[index.routerWords()];
    long[] mf = params.newFilter();
    int[] here = {0}; // hosts delivered to at the router being looked at
    IntConsumer deliverIngress = h -> seen[h]++;
    IntConsumer deliver =
        h -> {
          seen[h]++;
          here[0]++;
        };
    long matchNanos = 0;
    long start = System.nanoTime();
    long lastReport = start;
    for (int i = 0; i < messages; i++) {
      Message m = g.message();
      int ingress = i % routers; // publishers take turns across the routers
      Arrays.fill(seen, 0);
      long t0 = System.nanoTime();
      // Match once, at the ingress router: local hosts, then D from the encoded predicates.
      local[ingress].match(m, deliverIngress);
      Arrays.fill(d, 0L);
      encoder.encodeInto(m, mf);
      index.match(mf, d);
      matchNanos += System.nanoTime() - t0;
      d[ingress >>> 6] &= ~(1L << ingress);
      for (int r = 0; r < routers; r++) {
        if ((d[r >>> 6] & (1L << r)) == 0) {
          continue;
        }
        inD[r]++;
        here[0] = 0;
        local[r].match(m, deliver);
        if (here[0] == 0) {
          falseInD[r]++; // a false positive of the encoding, dropped after exact matching
        }
      }
      // Oracle: every host's predicate, evaluated directly.
      for (int h = 0; h < hosts; h++) {
        boolean want = predicateOf[h].matches(m);
        if (want) {
          expected++;
        }
        if (seen[h] > 0) {
          delivered++;
          deliveredAt[routerOf[h]]++;
          if (!want) {
            spurious++;
          }
          if (seen[h] > 1) {
            duplicates += seen[h] - 1;
          }
        } else if (want) {
          undelivered++;
        }
      }
      long now = System.nanoTime();
      if (now - lastReport > 1_000_000_000L) {
        o.printf("  ... %d/%d messages%n", i + 1, messages);
        o.flush();
        lastReport = now;
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long totalInD = Arrays.stream(inD).sum();
    long totalFalse = Arrays.stream(falseInD).sum();
    Path csv = writeCsv(inD, falseInD, deliveredAt, routerOf);

    o.printf("  published                 %,12d messages in %.2f s%n", messages, seconds);
    o.printf(
        "  ingress matching          %,12.0f messages/s (exact local + encode + D, one core)%n",
        messages / (matchNanos / 1e9));
    o.printf("  expected deliveries       %,12d (oracle: every predicate evaluated)%n", expected);
    o.printf("  delivered                 %,12d%n", delivered);
    o.printf("  undelivered               %,12d%n", undelivered);
    o.printf("  duplicates                %,12d%n", duplicates);
    o.printf("  spurious                  %,12d%n", spurious);
    o.printf(
        "  routers in D per message  %12.2f (of which false positives %.1f%%, dropped by exact matching)%n",
        totalInD / (double) messages, totalInD == 0 ? 0.0 : 100.0 * totalFalse / totalInD);
    o.printf("  per-router CSV            %s%n", csv);
    o.flush();
    return undelivered == 0 && duplicates == 0 && spurious == 0 ? 0 : 1;
  }

  private Path writeCsv(long[] inD, long[] falseInD, long[] deliveredAt, int[] routerOf) {
    try {
      Path dir =
          out.resolve(
              "demo-"
                  + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS")));
      Files.createDirectories(dir);
      Path file = dir.resolve("routers.csv");
      List<String> lines = new ArrayList<>();
      lines.add("router,hosts,messages_in_D,false_positives,host_deliveries");
      for (int r = 0; r < inD.length; r++) {
        int rr = r;
        long h = Arrays.stream(routerOf).filter(x -> x == rr).count();
        lines.add(r + "," + h + "," + inD[r] + "," + falseInD[r] + "," + deliveredAt[r]);
      }
      Files.write(file, lines);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the run's CSV under " + out, e);
    }
  }
}
