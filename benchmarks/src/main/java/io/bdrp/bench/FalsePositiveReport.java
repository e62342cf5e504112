package io.bdrp.bench;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Measures the false-positive rate of the encoding on the paper's workload: of the routers an
 * ingress router puts in D, the fraction that have no host whose exact predicate the message
 * satisfies. Such a router receives the message and drops it after exact matching.
 *
 * <p>Two causes add up: categorisation (a non-equality constraint only asks for the attribute to
 * exist) and Bloom filter collisions. The row with M = 8192, k = 1 is nearly free of collisions and
 * so shows categorisation alone.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.bdrp.bench.FalsePositiveReport [routers]
 * [hostsPerRouter] [messages] [names] [maxConstraints] [seed]}; prints a Markdown table.
 */
public final class FalsePositiveReport {
  private FalsePositiveReport() {}

  public static void main(String[] args) {
    int routers = arg(args, 0, 200);
    int hostsPerRouter = arg(args, 1, 5);
    int messages = arg(args, 2, 2000);
    int names = arg(args, 3, 100);
    int maxConstraints = arg(args, 4, 5);
    long seed = arg(args, 5, 1);
    WorkloadSpec spec =
        WorkloadSpec.PAPER.withNames(names, names).withConstraints(1, maxConstraints);
    WorkloadGenerator g = new WorkloadGenerator(spec, seed);
    List<List<Predicate>> hosts = new ArrayList<>(routers);
    for (int r = 0; r < routers; r++) {
      List<Predicate> ps = new ArrayList<>(hostsPerRouter);
      for (int h = 0; h < hostsPerRouter; h++) {
        ps.add(g.predicate());
      }
      hosts.add(ps);
    }
    List<Message> stream = new ArrayList<>(messages);
    for (int i = 0; i < messages; i++) {
      stream.add(g.message());
    }
    // Truth: routers with a truly matching host, per message.
    boolean[][] truth = new boolean[messages][routers];
    long trueDestinations = 0;
    long hostDeliveries = 0;
    for (int i = 0; i < messages; i++) {
      for (int r = 0; r < routers; r++) {
        for (Predicate p : hosts.get(r)) {
          if (p.matches(stream.get(i))) {
            truth[i][r] = true;
            hostDeliveries++;
          }
        }
        if (truth[i][r]) {
          trueDestinations++;
        }
      }
    }
    System.out.printf(
        "Workload: %d routers x %d hosts, %d messages, %d string + %d integer names,"
            + " conjunctions of 1-%d constraints, seed %d%n",
        routers, hostsPerRouter, messages, names, names, maxConstraints, seed);
    System.out.printf(
        "Client replication %.4f, router replication %.4f%n%n",
        hostDeliveries / (double) messages / (routers * hostsPerRouter),
        trueDestinations / (double) messages / routers);
    System.out.println(
        "| categories | M | k | filters/router | ad bytes/router | message bits set"
            + " | |D| / routers | false positives in D |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
    int[][] configs = {
      {256, 4}, {512, 3}, {1024, 2}, {1024, 3}, {2048, 1}, {2048, 2}, {2048, 3}, {2048, 4},
      {4096, 1}, {4096, 2}, {8192, 1}, {8192, 2}
    };
    for (CategoryScheme scheme : CategoryScheme.values()) {
      report(scheme, hosts, stream, truth, routers, messages);
      for (int[] c : configs) {
        report(new BloomParameters(c[0], c[1], scheme), hosts, stream, truth, routers, messages);
      }
    }
  }

  /** The row of exact category matching, without Bloom filters: categorisation alone. */
  private static void report(
      CategoryScheme scheme,
      List<List<Predicate>> hosts,
      List<Message> stream,
      boolean[][] truth,
      int routers,
      int messages) {
    Encoder enc = new Encoder(BloomParameters.DEFAULT.withCategories(scheme));
    List<List<long[]>> alternatives = new ArrayList<>(routers);
    for (List<Predicate> ps : hosts) {
      List<long[]> all = new ArrayList<>();
      for (Predicate p : ps) {
        for (Conjunction c : p.conjunctions()) {
          all.addAll(enc.categories(c));
        }
      }
      alternatives.add(all);
    }
    long inD = 0;
    long falseInD = 0;
    long categories = 0;
    for (int i = 0; i < messages; i++) {
      Set<Long> mine = new HashSet<>();
      enc.categories(stream.get(i), mine::add);
      categories += mine.size();
      for (int r = 0; r < routers; r++) {
        boolean in = false;
        for (long[] alt : alternatives.get(r)) {
          boolean all = true;
          for (long c : alt) {
            if (!mine.contains(c)) {
              all = false;
              break;
            }
          }
          if (all) {
            in = true;
            break;
          }
        }
        if (in) {
          inD++;
          if (!truth[i][r]) {
            falseInD++;
          }
        } else if (truth[i][r]) {
          throw new IllegalStateException(
              "categorisation (" + scheme.configName() + ") lost a match at router " + r);
        }
      }
    }
    System.out.printf(
        "| %s | - | - | - | - | %.1f categories | %.4f | %.4f |%n",
        scheme.configName(),
        categories / (double) messages,
        inD / (double) messages / routers,
        inD == 0 ? 0.0 : falseInD / (double) inD);
  }

  private static void report(
      BloomParameters params,
      List<List<Predicate>> hosts,
      List<Message> stream,
      boolean[][] truth,
      int routers,
      int messages) {
    Encoder enc = new Encoder(params);
    Map<Integer, EncodedPredicate> table = new HashMap<>();
    long filters = 0;
    long adBytes = 0;
    for (int r = 0; r < routers; r++) {
      EncodedPredicate agg = enc.encode(Predicate.or(hosts.get(r)));
      table.put(r, agg);
      filters += agg.size();
      adBytes += EncodedPredicateCodec.encodedLength(agg);
    }
    EncodedIndex index = EncodedIndex.build(params, table);
    long inD = 0;
    long falseInD = 0;
    long missed = 0;
    long bits = 0;
    long[] d = new long[index.routerWords()];
    for (int i = 0; i < messages; i++) {
      java.util.Arrays.fill(d, 0);
      long[] f = enc.encode(stream.get(i));
      for (long w : f) {
        bits += Long.bitCount(w);
      }
      index.match(f, d);
      for (int r = 0; r < routers; r++) {
        boolean in = (d[r >>> 6] & (1L << r)) != 0;
        if (in) {
          inD++;
          if (!truth[i][r]) {
            falseInD++;
          }
        } else if (truth[i][r]) {
          missed++;
        }
      }
    }
    if (missed != 0) {
      throw new IllegalStateException("false negatives: " + missed + " with " + params);
    }
    System.out.printf(
        "| %s | %d | %d | %.1f | %.0f | %.1f%% | %.4f | %.4f |%n",
        params.categories().configName(),
        params.bits(),
        params.hashes(),
        filters / (double) routers,
        adBytes / (double) routers,
        100.0 * bits / messages / params.bits(),
        inD / (double) messages / routers,
        inD == 0 ? 0.0 : falseInD / (double) inD);
  }

  private static int arg(String[] args, int i, int dflt) {
    return args.length > i ? Integer.parseInt(args[i]) : dflt;
  }
}
