package io.bdrp.bench;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.match.ExactMatcher;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
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
 * Exact matching of a message against the predicates of a router's local hosts (LOCAL-PREDICATES):
 * the counting-algorithm index side by side with evaluating every host's predicate in turn (the
 * peer), on the same hosts and messages. One operation is one message.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ExactMatchBenchmark {
  @Param({"1000"})
  public int hosts;

  /** Size of each attribute name pool (string and integer names). */
  @Param({"100"})
  public int names;

  private static final int MESSAGES = 4096;

  private ExactMatcher matcher;
  private Predicate[] predicates;
  private Message[] messages;
  private int next;
  private int matched;

  @Setup(Level.Trial)
  public void setUp() {
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER.withNames(names, names), 11);
    matcher = new ExactMatcher();
    predicates = new Predicate[hosts];
    for (int h = 0; h < hosts; h++) {
      predicates[h] = g.predicate();
      matcher.put(h, predicates[h]);
    }
    messages = new Message[MESSAGES];
    for (int i = 0; i < MESSAGES; i++) {
      messages[i] = g.message();
    }
  }

  /** Matching hosts by the counting index. */
  @Benchmark
  public int indexed() {
    matched = 0;
    matcher.match(messages[next++ & (MESSAGES - 1)], h -> matched++);
    return matched;
  }

  /** Matching hosts by evaluating every predicate (the peer in this comparison). */
  @Benchmark
  public int naive() {
    Message m = messages[next++ & (MESSAGES - 1)];
    int n = 0;
    for (Predicate p : predicates) {
      if (p.matches(m)) {
        n++;
      }
    }
    return n;
  }
}
