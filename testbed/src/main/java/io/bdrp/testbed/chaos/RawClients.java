package io.bdrp.testbed.chaos;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Misbehaving clients, on plain sockets speaking the client protocol frame by frame (the client
 * library would not misbehave): sessions reset right after they set a predicate, a subscriber that
 * reads a few kB a second, and one that never reads and floods PINGs.
 */
public final class RawClients {
  private RawClients() {}

  /** The attribute of the flood messages sent for a bad client; no workload predicate names it. */
  public static final String FLOOD = "chaos_flood";

  /** A predicate every workload message and every flood message satisfies. */
  public static Predicate everything(String idAttribute) {
    return Predicate.parse("exists(" + idAttribute + ") || exists(" + FLOOD + ")");
  }

  static byte[] bytes(ClientFrame... frames) {
    ByteBuf b = Unpooled.buffer();
    try {
      for (ClientFrame f : frames) {
        ClientFrameCodec.encode(f, b);
      }
      byte[] out = new byte[b.readableBytes()];
      b.readBytes(out);
      return out;
    } finally {
      b.release();
    }
  }

  /** Closes {@code s} with a reset (SO_LINGER 0): the router sees RST, not FIN. */
  static void reset(Socket s) {
    try {
      s.setSoLinger(true, 0);
    } catch (IOException ignored) {
      // closed already
    }
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  // ---- churn ----

  /**
   * What a churn did: cycles run, cycles whose predicate the router acknowledged, and failures by
   * kind.
   */
  public record ChurnResult(int cycles, int acknowledged, Map<String, Integer> failures) {
    public int failed() {
      return failures.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  /**
   * Runs {@code cycles} sessions against {@code router}, their starts spread evenly until {@code
   * untilNanos} ({@link System#nanoTime()}), on {@code threads} threads: each connects, says HELLO,
   * sets one of {@code predicates} and resets the connection — every other one at once, the others
   * after the router's OK (or 2 s without it). Returns when every cycle is done.
   */
  public static ChurnResult churn(
      InetSocketAddress router,
      List<Predicate> predicates,
      int cycles,
      long untilNanos,
      int threads,
      java.util.function.BooleanSupplier stop)
      throws InterruptedException {
    long start = System.nanoTime();
    long span = Math.max(1, untilNanos - start);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger acked = new AtomicInteger();
    Map<String, Integer> failures = new TreeMap<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                int k;
                while ((k = next.getAndIncrement()) < cycles && !stop.getAsBoolean()) {
                  long due = start + span * k / cycles;
                  long wait;
                  while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                  }
                  try {
                    if (cycle(router, predicates.get(k % predicates.size()), k, k % 2 == 1)) {
                      acked.incrementAndGet();
                    }
                  } catch (IOException | RuntimeException e) {
                    String kind = e.getClass().getSimpleName();
                    synchronized (failures) {
                      failures.merge(kind, 1, Integer::sum);
                    }
                  }
                }
              },
              "chaos-churn-" + t);
      w.setDaemon(true);
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    synchronized (failures) {
      return new ChurnResult(
          Math.min(cycles, next.get()), acked.get(), Map.copyOf(new TreeMap<>(failures)));
    }
  }

  /** One churn session; true if the router's OK was awaited and came. */
  private static boolean cycle(InetSocketAddress router, Predicate p, int k, boolean awaitOk)
      throws IOException {
    Socket s = new Socket();
    try {
      s.connect(router, 2_000);
      s.setSoTimeout(2_000);
      OutputStream out = s.getOutputStream();
      out.write(
          bytes(
              new ClientFrame.Hello(Frames.VERSION, "chaos-churn-" + k, new byte[0]),
              new ClientFrame.SetPredicate(1, p)));
      out.flush();
      if (!awaitOk) {
        return false;
      }
      FrameReader r = new FrameReader();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[8192];
      while (true) {
        int n = in.read(buf);
        if (n < 0) {
          throw new IOException("closed by the router before OK");
        }
        for (ClientFrame f : r.add(buf, 0, n)) {
          if (f instanceof ClientFrame.Ok ok && ok.correlationId() == 1) {
            return true;
          }
          if (f instanceof ClientFrame.Error e) {
            throw new IOException("router error " + e.code() + ": " + e.message());
          }
        }
      }
    } finally {
      reset(s);
    }
  }

  /** Splits a byte stream into client frames. */
  static final class FrameReader {
    private byte[] pending = new byte[0];

    List<ClientFrame> add(byte[] b, int off, int len) {
      byte[] all = new byte[pending.length + len];
      System.arraycopy(pending, 0, all, 0, pending.length);
      System.arraycopy(b, off, all, pending.length, len);
      List<ClientFrame> out = new ArrayList<>();
      int at = 0;
      while (all.length - at >= Frames.LENGTH_BYTES) {
        long length =
            ((all[at] & 0xffL) << 24)
                | ((all[at + 1] & 0xffL) << 16)
                | ((all[at + 2] & 0xffL) << 8)
                | (all[at + 3] & 0xffL);
        if (length > Frames.DEFAULT_MAX_FRAME_BYTES) {
          throw new IllegalStateException("frame of " + length + " bytes from the router");
        }
        int whole = Frames.LENGTH_BYTES + (int) length;
        if (all.length - at < whole) {
          break;
        }
        out.add(ClientFrameCodec.decode(Unpooled.wrappedBuffer(all, at, whole)));
        at += whole;
      }
      pending = java.util.Arrays.copyOfRange(all, at, all.length);
      return out;
    }
  }

  // ---- slow consumer and never-reader ----

  /** What a bad client saw and did. */
  public record BadClientResult(
      String name,
      long connectedAt,
      long closedAt,
      long bytesRead,
      long deliveries,
      long workloadMessages,
      long floodMessages,
      long duplicates,
      long pingsWritten,
      long writeStalls,
      String endedBy) {}

  /**
   * A client attached to a router with a predicate that selects every message, which then either
   * reads at most {@code readBytesPerSecond} ({@link #slow}) or never reads and writes PINGs
   * ({@link #neverReads}), until {@link #close()}.
   */
  public static final class BadClient {
    private final String name;
    private final String idAttribute;
    private final long origin;
    private final Thread thread;
    private volatile boolean stop;
    private volatile String endedBy = "closed by the harness";
    private long connectedAt;
    private long closedAt;
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong flood = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong pings = new AtomicLong();
    private final AtomicLong stalls = new AtomicLong();
    private final BitSet seen = new BitSet();
    private Socket socket;
    private SocketChannel channel;

    private BadClient(String name, String idAttribute, long origin, Runnable body) {
      this.name = name;
      this.idAttribute = idAttribute;
      this.origin = origin;
      this.thread = new Thread(body, "chaos-" + name);
      thread.setDaemon(true);
    }

    /**
     * A subscriber to everything that reads at most {@code readBytesPerSecond}, in reads of 1 kB,
     * with a 4 kB receive buffer.
     */
    public static BadClient slow(
        InetSocketAddress router,
        String name,
        String idAttribute,
        long readBytesPerSecond,
        long origin)
        throws IOException {
      BadClient[] self = new BadClient[1];
      BadClient c =
          new BadClient(name, idAttribute, origin, () -> self[0].readSlowly(readBytesPerSecond));
      self[0] = c;
      c.socket = new Socket();
      c.socket.setReceiveBufferSize(4096);
      c.socket.connect(router, 5_000);
      c.connectedAt = System.nanoTime() - origin;
      c.socket
          .getOutputStream()
          .write(
              bytes(
                  new ClientFrame.Hello(Frames.VERSION, name, new byte[0]),
                  new ClientFrame.SetPredicate(1, everything(idAttribute))));
      c.thread.start();
      return c;
    }

    /**
     * A subscriber to everything that never reads its socket (4 kB receive buffer) and writes up to
     * {@code pingsPerSecond} PINGs a second, as many as the socket takes without blocking.
     */
    public static BadClient neverReads(
        InetSocketAddress router, String name, String idAttribute, int pingsPerSecond, long origin)
        throws IOException {
      BadClient[] self = new BadClient[1];
      BadClient c =
          new BadClient(name, idAttribute, origin, () -> self[0].floodPings(pingsPerSecond));
      self[0] = c;
      c.channel = SocketChannel.open();
      c.channel.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
      c.channel.connect(router);
      c.connectedAt = System.nanoTime() - origin;
      ByteBuffer hello =
          ByteBuffer.wrap(
              bytes(
                  new ClientFrame.Hello(Frames.VERSION, name, new byte[0]),
                  new ClientFrame.SetPredicate(1, everything(idAttribute))));
      while (hello.hasRemaining()) {
        c.channel.write(hello);
      }
      c.channel.configureBlocking(false);
      c.thread.start();
      return c;
    }

    private void readSlowly(long bytesPerSecond) {
      FrameReader r = new FrameReader();
      byte[] buf = new byte[1024];
      long periodNanos = Math.max(1_000_000L, 1_000_000_000L * buf.length / bytesPerSecond);
      long next = System.nanoTime();
      try {
        InputStream in = socket.getInputStream();
        while (!stop) {
          int n = in.read(buf);
          if (n < 0) {
            endedBy = "closed by the router";
            return;
          }
          bytesRead.addAndGet(n);
          for (ClientFrame f : r.add(buf, 0, n)) {
            if (f instanceof ClientFrame.Deliver d) {
              count(d.message());
            } else if (f instanceof ClientFrame.Error e) {
              endedBy = "router error " + e.code() + ": " + e.message();
            }
          }
          next += periodNanos;
          long wait;
          while ((wait = next - System.nanoTime()) > 0 && !stop) {
            LockSupport.parkNanos(wait);
          }
        }
      } catch (IOException | RuntimeException e) {
        if (!stop) {
          endedBy = "ended: " + e;
        }
      }
    }

    private void count(Message m) {
      deliveries.incrementAndGet();
      var id = m.get(idAttribute);
      if (id != null) {
        long v = id.asLong();
        if (v >= 0 && v < Integer.MAX_VALUE) {
          synchronized (seen) {
            if (seen.get((int) v)) {
              duplicates.incrementAndGet();
            }
            seen.set((int) v);
          }
        }
      } else if (m.get(FLOOD) != null) {
        flood.incrementAndGet();
      }
    }

    private void floodPings(int perSecond) {
      ByteBuffer pending = ByteBuffer.allocate(0);
      long nonce = 1;
      long periodNanos = 10_000_000L;
      int batch = Math.max(1, perSecond / 100);
      long next = System.nanoTime();
      boolean stalled = false;
      try {
        while (!stop) {
          if (!pending.hasRemaining()) {
            ClientFrame[] frames = new ClientFrame[batch];
            for (int i = 0; i < batch; i++) {
              frames[i] = new ClientFrame.Ping(nonce++);
            }
            pending = ByteBuffer.wrap(bytes(frames));
            pings.addAndGet(batch);
          }
          channel.write(pending);
          if (pending.hasRemaining()) {
            if (!stalled) {
              stalls.incrementAndGet(); // the router stopped taking what this client writes
            }
            stalled = true;
          } else {
            stalled = false;
          }
          next += periodNanos;
          long wait;
          while ((wait = next - System.nanoTime()) > 0 && !stop) {
            LockSupport.parkNanos(wait);
          }
        }
      } catch (IOException | RuntimeException e) {
        if (!stop) {
          endedBy = "ended: " + e;
        }
      }
      // PINGs of a batch the router never took were not written
      pings.addAndGet(-pending.remaining() / 14);
    }

    /** The client's name, as the router knows it. */
    public String name() {
      return name;
    }

    /** Resets the connection and stops the client's thread. */
    public void close() throws InterruptedException {
      stop = true;
      closedAt = System.nanoTime() - origin;
      if (socket != null) {
        reset(socket);
      }
      if (channel != null) {
        try {
          channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException ignored) {
          // closed already
        }
        try {
          channel.close();
        } catch (IOException ignored) {
          // nothing to do
        }
      }
      thread.join(5_000);
    }

    /** What it saw and did (after {@link #close()}). */
    public BadClientResult result() {
      long workload;
      synchronized (seen) {
        workload = seen.cardinality();
      }
      return new BadClientResult(
          name,
          connectedAt,
          closedAt,
          bytesRead.get(),
          deliveries.get(),
          workload,
          flood.get(),
          duplicates.get(),
          pings.get(),
          stalls.get(),
          endedBy);
    }

    /** Workload message numbers it received. */
    public BitSet seen() {
      synchronized (seen) {
        return (BitSet) seen.clone();
      }
    }
  }
}
