package io.bdrp.bench;

import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.DeliverReader;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What one message costs the client library's codec path, for its allocation per message: run with
 * {@code -prof gc} and read {@code gc.alloc.rate.norm}, bytes per operation, one operation being
 * one message. The messages are the fan-out harness's: a {@code bucket} integer and a 200-byte
 * body. {@code encodeSends}: 64 SENDs encoded into one batch buffer, as the client's outbox does in
 * one drain ({@code ClientFrameCodec.encodeMeasured}, the frame measured once); {@code
 * decodeDelivers}: 64 DELIVER frames of one read decoded into the messages handed to the
 * subscribers, as the client's session does ({@code DeliverReader}, in the frame decoder's input).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled"})
public class ClientCodecBenchmark {
  private static final int N = 64;

  private final ClientFrame[] sends = new ClientFrame[N];
  private ByteBuf batch;
  private ByteBuf directBatch;
  private ByteBuf read;
  private final List<Message> delivered = new ArrayList<>(N);
  private final DeliverReader deliveries = new DeliverReader(delivered::add);

  @Setup(Level.Trial)
  public void setup() {
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    batch = Unpooled.buffer(64 * 1024); // on the heap, as the client's outbox encodes
    directBatch = Unpooled.directBuffer(64 * 1024);
    // Direct, as the client's event loop reads a connection into pooled direct buffers.
    read = Unpooled.directBuffer(64 * 1024);
    for (int i = 0; i < N; i++) {
      Message m = Message.builder().put("bucket", i % 8).body(new byte[200]).build();
      sends[i] = new ClientFrame.Send(0, m);
      ClientFrameCodec.encode(new ClientFrame.Deliver(m), read);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    batch.release();
    directBatch.release();
    read.release();
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void encodeSends(Blackhole bh) {
    bh.consume(encodeAll(batch));
  }

  /**
   * As {@link #encodeSends}, into a direct buffer rather than on the heap: what the outbox would
   * write without the channel's copy of a heap buffer into direct memory (which {@link
   * #encodeSends} leaves out), each write through a view that checks its memory's liveness.
   */
  @Benchmark
  @OperationsPerInvocation(N)
  public void encodeSendsIntoDirectMemory(Blackhole bh) {
    bh.consume(encodeAll(directBatch));
  }

  /** The SENDs encoded into {@code out}, from its start, as the outbox does; the bytes written. */
  private int encodeAll(ByteBuf out) {
    out.clear();
    for (ClientFrame f : sends) {
      int n = ClientFrameCodec.encodedLength(f);
      if (out.writableBytes() < n) {
        throw new IllegalStateException("batch full");
      }
      ClientFrameCodec.encodeMeasured(f, out, n);
    }
    return out.writerIndex();
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void decodeDelivers(Blackhole bh) {
    delivered.clear();
    read.readerIndex(0);
    while (read.isReadable()) {
      int start = read.readerIndex();
      int total = Frames.LENGTH_BYTES + read.getInt(start);
      read.readerIndex(start + total);
      // As FrameDecoder hands the session's DeliverReader each frame (the context is used only
      // for a fault).
      if (!deliveries.take(null, read, start, total)) {
        throw new IllegalStateException("not a DELIVER");
      }
    }
    bh.consume(delivered.size());
  }
}
