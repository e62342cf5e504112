package io.bdrp.bench;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import io.bdrp.encoding.bloom.EncodedIndex;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Matching a message filter against the encoded predicates of many routers: the ingress router's
 * computation of the destination set D. The trie index is measured side by side with a linear scan
 * of every filter of every router (the straightforward matcher) on the same data.
 *
 * <p>Workload: the paper's model; each router advertises the encoding of one predicate of 20
 * conjunctions of 1 to 5 constraints (up to 20 filters after minimisation). One operation is one
 * message, so ops/s is messages per second on one core.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EncodedMatchBenchmark {
  /** Bloom parameters as "M/k". */
  @Param({"256/4", "512/3", "1024/2", "2048/2", "8192/1"})
  public String bloom;

  /** Category scheme: sharp (the default) or paper. */
  @Param({"sharp", "paper"})
  public String categories;

  @Param({"1000"})
  public int routers;

  /** Filters checked directly instead of splitting a trie node further. */
  @Param({"16"})
  public int bucket;

  /** Size of each attribute name pool (string and integer names). */
  @Param({"100"})
  public int names;

  private static final int MESSAGES = 4096;

  private EncodedIndex index;
  private EncodedPredicate[] predicates;
  private Message[] messages;
  private long[][] messageFilters;
  private long[] destinations;
  private long[] scratch;
  private Encoder encoder;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    String[] mk = bloom.split("/");
    BloomParameters params =
        new BloomParameters(
            Integer.parseInt(mk[0]), Integer.parseInt(mk[1]), CategoryScheme.parse(categories));
    encoder = new Encoder(params);
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER.withNames(names, names), 7);
    Map<Integer, EncodedPredicate> table = new HashMap<>();
    predicates = new EncodedPredicate[routers];
    for (int r = 0; r < routers; r++) {
      predicates[r] = encoder.encode(g.predicate());
      table.put(r, predicates[r]);
    }
    index = EncodedIndex.build(params, table, bucket);
    messages = new Message[MESSAGES];
    messageFilters = new long[MESSAGES][];
    for (int i = 0; i < MESSAGES; i++) {
      messages[i] = g.message();
      messageFilters[i] = encoder.encode(messages[i]);
    }
    destinations = new long[index.routerWords()];
    scratch = params.newFilter();
  }

  /** D by the trie index, message filter already computed. */
  @Benchmark
  public long[] indexed() {
    long[] d = destinations;
    Arrays.fill(d, 0L);
    index.match(messageFilters[next++ & (MESSAGES - 1)], d);
    return d;
  }

  /** D by testing every filter of every router (the peer in this comparison). */
  @Benchmark
  public long[] linearScan() {
    long[] d = destinations;
    Arrays.fill(d, 0L);
    long[] m = messageFilters[next++ & (MESSAGES - 1)];
    for (int r = 0; r < predicates.length; r++) {
      if (predicates[r].matches(m)) {
        d[r >>> 6] |= 1L << r;
      }
    }
    return d;
  }

  /** Ingress work per message: encode the message, then D by the trie index. */
  @Benchmark
  public long[] encodeAndIndexed() {
    long[] d = destinations;
    Arrays.fill(d, 0L);
    encoder.encodeInto(messages[next++ & (MESSAGES - 1)], scratch);
    index.match(scratch, d);
    return d;
  }
}
