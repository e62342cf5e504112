package io.bdrp.bench;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.encoding.codec.MessageView;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What reading a published message's attributes in place costs the router ({@link MessageView}, on
 * every SEND it takes and every DATA it matches), per message: {@code selective}, the fan-out
 * harness's messages (a {@code bucket} integer of ten values and a 200-byte body); {@code quotes},
 * four attributes (a symbol among 50, a price, a volume, an exchange among 5) and a 64-byte body.
 * Each operation copies the message into the view's buffer and wraps it, as the router does.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MessageViewBenchmark {
  private static final int N = 64;

  @Param({"selective", "quotes"})
  public String shape;

  private final byte[][] messages = new byte[N][];
  private final MessageView view = new MessageView();

  @Setup
  public void setup() {
    java.util.Random r = new java.util.Random(3);
    for (int i = 0; i < N; i++) {
      Message m =
          shape.equals("selective")
              ? Message.builder().put("bucket", i % 10).body(new byte[200]).build()
              : Message.builder()
                  .put("symbol", "SYM" + r.nextInt(50))
                  .put("price", 100 + r.nextInt(10_000) / 100.0)
                  .put("volume", (long) r.nextInt(1_000))
                  .put("exchange", "X" + r.nextInt(5))
                  .body(new byte[64])
                  .build();
      messages[i] = MessageCodec.toBytes(m);
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public int wrap() {
    int sum = 0;
    for (byte[] m : messages) {
      System.arraycopy(m, 0, view.buffer(m.length), 0, m.length);
      if (view.wrap(m.length)) {
        sum += view.size();
      }
    }
    return sum;
  }
}
