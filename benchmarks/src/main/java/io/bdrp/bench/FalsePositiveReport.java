package io.bdrp.bench;

import io.bdrp.encoding.Conjunction;
import io.bdrp.encoding.Constraint;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Op;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
    System.out.println("| M | k | filters/router | |D| / routers | false positives in D |");
    System.out.println("|---:|---:|---:|---:|---:|");
    int[][] configs = {
      {128, 2}, {128, 3}, {128, 4}, {192, 3}, {192, 4}, {192, 6}, {256, 3}, {256, 4}, {256, 6},
      {512, 3}, {512, 4}, {512, 6}, {1024, 2}, {1024, 3}, {2048, 2}
    };
    long catInD = 0;
    long catFalse = 0;
    for (int i = 0; i < messages; i++) {
      for (int r = 0; r < routers; r++) {
        if (categoriesMatch(hosts.get(r), stream.get(i))) {
          catInD++;
          if (!truth[i][r]) {
            catFalse++;
          }
        } else if (truth[i][r]) {
          throw new IllegalStateException("categorisation lost a match at router " + r);
        }
      }
    }
    System.out.printf(
        "| categories | - | - | %.4f | %.4f |%n",
        catInD / (double) messages / routers, catInD == 0 ? 0.0 : catFalse / (double) catInD);
    for (int[] c : configs) {
      BloomParameters params = new BloomParameters(c[0], c[1]);
      Encoder enc = new Encoder(params);
      Map<Integer, EncodedPredicate> table = new HashMap<>();
      long filters = 0;
      for (int r = 0; r < routers; r++) {
        EncodedPredicate agg = enc.encode(Predicate.or(hosts.get(r)));
        table.put(r, agg);
        filters += agg.size();
      }
      EncodedIndex index = EncodedIndex.build(params, table);
      long inD = 0;
      long falseInD = 0;
      long missed = 0;
      long[] d = new long[index.routerWords()];
      for (int i = 0; i < messages; i++) {
        java.util.Arrays.fill(d, 0);
        index.match(enc.encode(stream.get(i)), d);
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
          "| %d | %d | %.1f | %.4f | %.4f |%n",
          c[0],
          c[1],
          filters / (double) routers,
          inD / (double) messages / routers,
          inD == 0 ? 0.0 : falseInD / (double) inD);
    }
  }

  /**
   * Whether the message's categories include all categories of some conjunction of some host: an
   * equality constraint needs an attribute of that name with an equal value, any other typed
   * constraint an attribute of that name and type, exists any attribute of that name.
   */
  private static boolean categoriesMatch(List<Predicate> hosts, Message m) {
    for (Predicate p : hosts) {
      for (Conjunction c : p.conjunctions()) {
        boolean all = true;
        for (Constraint k : c.constraints()) {
          Value v = m.get(k.name());
          if (v == null
              || (k.op() != Op.EXISTS && !k.value().type().comparableWith(v.type()))
              || (k.op() == Op.EQ && !k.value().sameValue(v))) {
            all = false;
            break;
          }
        }
        if (all) {
          return true;
        }
      }
    }
    return false;
  }

  private static int arg(String[] args, int i, int dflt) {
    return args.length > i ? Integer.parseInt(args[i]) : dflt;
  }
}
