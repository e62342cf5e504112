package io.bdrp.bench;

import io.bdrp.router.HotPathRig;
import io.netty.util.ResourceLeakDetector;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one message costs router 0's data path in process ({@link HotPathRig}: the router's real
 * client sessions, data plane, link output and data receiver on embedded channels, no sockets), for
 * its allocation per message: run with {@code -prof gc} and read {@code gc.alloc.rate.norm}, bytes
 * per operation, one operation being one message. {@code publish}: a SEND's bytes as the session
 * reads them, to the DELIVER frames of every matching local host and a DATA copy per next hop;
 * {@code receive}: a DATA frame from neighbour 1 that names router 0 and the other neighbours, to
 * its deliveries and onward copies. The {@code Batch16} forms take 16 messages in one turn of the
 * loop (one read, one output batch per channel), as a busy router does; the others flush after each
 * message, so they also carry what every output batch costs.
 *
 * <p>{@code fanout}: 4 neighbours and 20 local hosts, all matching; {@code selective}: 1 of 4
 * neighbours and 2 of 20 hosts.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Djmh.executor=CUSTOM",
      "-Djmh.executor.class=io.bdrp.bench.FastThreadExecutor",
      "-Dio.netty.leakDetection.level=disabled"
    })
public class HotPathBenchmark {
  @Param({"fanout", "selective"})
  public String match;

  private HotPathRig rig;

  @Setup(Level.Trial)
  public void setup() {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    rig = match.equals("fanout") ? new HotPathRig(4, 4, 20, 20) : new HotPathRig(4, 1, 20, 2);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    rig.close();
  }

  @Benchmark
  public long publish() {
    return rig.publish();
  }

  @Benchmark
  @OperationsPerInvocation(16)
  public long publishBatch16() {
    return rig.publish(16);
  }

  @Benchmark
  public long receive() {
    return rig.receive();
  }

  @Benchmark
  @OperationsPerInvocation(16)
  public long receiveBatch16() {
    return rig.receive(16);
  }
}
