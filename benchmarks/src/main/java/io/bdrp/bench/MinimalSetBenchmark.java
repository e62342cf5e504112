package io.bdrp.bench;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.routing.LocalPredicates;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The control-path work a large subscription causes: encoding it to its minimal set of filters,
 * setting it as a host's predicate ({@link LocalPredicates}, the incremental minimal set), and
 * decoding its advertisement. Workload: n conjunctions of three {@code exists} on distinct names,
 * 27 filters of 3 bits each (1,024 conjunctions is the 50 KB predicate that stalled a router with
 * the quadratic minimal set). One operation is one whole predicate; compare n = 256 and 1,024 to
 * see that the cost grows linearly.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class MinimalSetBenchmark {
  /** Conjunctions of the predicate. */
  @Param({"256", "1024"})
  public int conjunctions;

  private final BloomParameters params = BloomParameters.DEFAULT;
  private Encoder encoder;
  private Predicate predicate;
  private byte[] advertisement;

  @Setup
  public void setup() {
    encoder = new Encoder(params);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < conjunctions; i++) {
      if (i > 0) {
        sb.append(" || ");
      }
      sb.append("exists(a").append(i).append(") && exists(b").append(i);
      sb.append(") && exists(c").append(i).append(')');
    }
    predicate = Predicate.parse(sb.toString());
    advertisement = EncodedPredicateCodec.toBytes(encoder.encode(predicate));
  }

  /** Encoding the predicate: its filters and their minimal set ({@code ofFilters}' algorithm). */
  @Benchmark
  public EncodedPredicate encode() {
    return encoder.encode(predicate);
  }

  /** One host subscribing with it and leaving: the incremental minimal set, both ways. */
  @Benchmark
  public EncodedPredicate setAndRemoveHost() {
    LocalPredicates local = new LocalPredicates(params);
    local.set(1, predicate);
    EncodedPredicate aggregate = local.aggregate();
    local.remove(1);
    return aggregate;
  }

  /** A neighbour receiving the advertisement: decoding its filters. */
  @Benchmark
  public EncodedPredicate decodeAdvertisement() {
    return EncodedPredicateCodec.decode(ByteBuffer.wrap(advertisement));
  }
}
