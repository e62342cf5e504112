package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way the first connect can fail leaves nothing behind: the exception says what happened, the
 * connection is closed (the server reads EOF) and no thread the client started is alive when {@code
 * connect()} has thrown. Servers here are plain sockets that misbehave on purpose.
 *
 * <p>Threads are told apart by thread group, not by name: the client is used from a thread of a
 * fresh group, and every thread it starts (directly, or from its own threads) belongs to that
 * group. The one exception is Netty's process-wide {@code GlobalEventExecutor} thread, which Netty
 * starts to report an event loop's termination and which ends by itself after a second of idleness.
 */
class FailedConnectTest {
  /** What a call threw, and the threads started during it that were still alive once it ended. */
  private record Outcome(Throwable thrown, List<Thread> leftAlive) {}

  /** Runs {@code action} on a thread of a new thread group; see the class comment. */
  private static Outcome inNewThreadGroup(Executable action) throws Exception {
    ThreadGroup group = new ThreadGroup("client-under-test");
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread runner =
        new Thread(
            group,
            () -> {
              try {
                action.execute();
                thrown.complete(null);
              } catch (Throwable t) {
                thrown.complete(t);
              }
            },
            "test-runner");
    runner.start();
    Throwable t = thrown.get(60, TimeUnit.SECONDS);
    runner.join(10_000);
    assertFalse(runner.isAlive(), "the test's own runner has ended");
    Thread[] all = new Thread[group.activeCount() + 16];
    int n = group.enumerate(all, true);
    List<Thread> left =
        Arrays.stream(all, 0, n)
            .filter(Thread::isAlive)
            .filter(x -> !x.getName().startsWith("globalEventExecutor"))
            .toList();
    return new Outcome(t, left);
  }

  /** Asserts that {@code connect} throws a {@code type} and that it leaves no thread alive. */
  private static <T extends Throwable> T assertFailsLeavingNoThread(
      Class<T> type, Executable connect) throws Exception {
    Outcome o = inNewThreadGroup(connect);
    assertInstanceOf(type, o.thrown(), () -> "thrown: " + o.thrown());
    assertEquals(List.of(), o.leftAlive(), "threads started by the client, still alive");
    return type.cast(o.thrown());
  }

  private static BdrpClient.Builder client(int port) {
    return BdrpClient.builder()
        .router("127.0.0.1", port)
        .name("failing")
        .connectTimeout(Duration.ofSeconds(2));
  }

  /** A loopback server socket that accepts one connection on a thread of its own. */
  private static final class OneShotServer implements AutoCloseable {
    final ServerSocket server;
    final CompletableFuture<Socket> accepted = new CompletableFuture<>();

    OneShotServer() throws IOException {
      server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
      Thread t =
          new Thread(
              () -> {
                try {
                  accepted.complete(server.accept());
                } catch (IOException e) {
                  accepted.completeExceptionally(e);
                }
              },
              "test-server");
      t.setDaemon(true);
      t.start();
    }

    int port() {
      return server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      server.close();
      Socket s = accepted.getNow(null);
      if (s != null) {
        s.close();
      }
    }
  }

  /** Reads one frame (length prefix included) from {@code in}. */
  private static byte[] readFrame(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    int length = d.readInt();
    byte[] rest = new byte[length];
    d.readFully(rest);
    return rest;
  }

  /**
   * Reads the client's HELLO off {@code s} and answers it with {@code reply}; the HELLO's bytes.
   */
  private static byte[] answerHello(java.net.Socket s, ClientFrame reply) throws IOException {
    byte[] hello = readFrame(s.getInputStream());
    s.getOutputStream().write(encode(reply));
    s.getOutputStream().flush();
    return hello;
  }

  private static byte[] encode(ClientFrame f) {
    ByteBuf b = ClientFrameCodec.encode(Unpooled.buffer().alloc(), f);
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /** Asserts that the peer of {@code s} closes the connection (EOF) within a bounded wait. */
  private static void assertClosedByClient(Socket s) throws IOException {
    s.setSoTimeout(10_000); // a bound: read() throws SocketTimeoutException if nothing comes
    InputStream in = s.getInputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        return;
      }
    }
  }

  @Test
  void aRefusedConnectionFailsClearlyAndLeavesNoThread() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      port = s.getLocalPort();
    } // closed: nothing listens on the port any more
    IOException e = assertFailsLeavingNoThread(IOException.class, () -> client(port).connect());
    assertTrue(
        e.getMessage().startsWith("cannot connect to 127.0.0.1:" + port + ": "), e.getMessage());
    assertTrue(e.getMessage().contains("refused"), e.getMessage());
  }

  @Test
  void aHelloRefusedWithAnErrorFailsWithTheRoutersReasonAndClosesTheConnection() throws Exception {
    try (OneShotServer server = new OneShotServer()) {
      CompletableFuture<Void> served =
          server.accepted.thenAcceptAsync(
              s -> {
                try {
                  byte[] hello =
                      answerHello(
                          s,
                          new ClientFrame.Error(0, ErrorCode.NOT_AUTHORIZED, "token refused", 0));
                  assertTrue(hello.length > 2, "a HELLO frame");
                  // The server does not close: the client must close its side itself.
                  assertClosedByClient(s);
                } catch (IOException x) {
                  throw new java.io.UncheckedIOException(x);
                }
              });
      BdrpClient.RouterException e =
          assertFailsLeavingNoThread(
              BdrpClient.RouterException.class, () -> client(server.port()).connect());
      assertEquals(ErrorCode.NOT_AUTHORIZED.number(), e.code());
      assertEquals(
          "router 127.0.0.1:" + server.port() + " refused the session: token refused (code 7)",
          e.getMessage());
      served.get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void aConnectionClosedDuringTheHandshakeFailsAndLeavesNoThread() throws Exception {
    try (OneShotServer server = new OneShotServer()) {
      server.accepted.thenAccept(
          s -> {
            try {
              s.close();
            } catch (IOException x) {
              // closed anyway
            }
          });
      IOException e =
          assertFailsLeavingNoThread(IOException.class, () -> client(server.port()).connect());
      assertTrue(
          e.getMessage().startsWith("cannot connect to 127.0.0.1:" + server.port() + ": "),
          e.getMessage());
      assertTrue(
          e.getMessage().contains("closed the connection during the handshake")
              || e.getMessage().contains("reset"),
          e.getMessage());
    }
  }

  @Test
  void aRouterThatNeverAnswersHelloTimesOutAndTheConnectionIsClosed() throws Exception {
    try (OneShotServer server = new OneShotServer()) {
      long start = System.nanoTime();
      IOException e =
          assertFailsLeavingNoThread(
              IOException.class,
              () -> client(server.port()).connectTimeout(Duration.ofMillis(300)).connect());
      assertTrue(e.getMessage().contains("no answer to HELLO within 300 ms"), e.getMessage());
      assertTrue(
          System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5),
          "the HELLO timeout ends the attempt, not the outer safety net");
      assertClosedByClient(server.accepted.get(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void aFailedAsyncConnectReleasesTheConnectionAndDoesNotReconnect() throws Exception {
    try (OneShotServer server = new OneShotServer()) {
      server.accepted.thenAccept(
          s -> {
            try {
              answerHello(s, new ClientFrame.Error(0, ErrorCode.UNSUPPORTED_VERSION, "too new", 0));
            } catch (IOException x) {
              // the assertions below say what went wrong
            }
          });
      CompletableFuture<BdrpClient> f = client(server.port()).reconnect(true).connectAsync();
      java.util.concurrent.ExecutionException e =
          assertThrows(
              java.util.concurrent.ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof BdrpClient.RouterException, e.toString());
      assertClosedByClient(server.accepted.get(10, TimeUnit.SECONDS));
      // No second attempt: the one-shot server's backlog would take it, so accept with a bound.
      server.server.setSoTimeout(1_000);
      assertThrows(java.net.SocketTimeoutException.class, server.server::accept);
    }
  }

  @Test
  void aFailedConnectOnASharedGroupClosesItsChannelButNotTheGroup() throws Exception {
    EventLoopGroup shared = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try (OneShotServer server = new OneShotServer()) {
      server.accepted.thenAccept(
          s -> {
            try {
              answerHello(s, new ClientFrame.Error(0, ErrorCode.NOT_AUTHORIZED, "no", 0));
            } catch (IOException x) {
              // the assertions below say what went wrong
            }
          });
      assertThrows(
          BdrpClient.RouterException.class,
          () -> client(server.port()).eventLoopGroup(shared).connect());
      assertClosedByClient(server.accepted.get(10, TimeUnit.SECONDS));
      assertFalse(shared.isShuttingDown(), "a group given to the builder belongs to the caller");
    } finally {
      shared.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void closeAfterASessionSaysByeAndEndsEveryThread() throws Exception {
    try (OneShotServer server = new OneShotServer()) {
      CompletableFuture<String> seen =
          server.accepted.thenApplyAsync(
              s -> {
                try {
                  answerHello(s, new ClientFrame.HelloOk(Frames.VERSION, 3, "fake"));
                  byte[] bye = readFrame(s.getInputStream());
                  assertClosedByClient(s);
                  return ClientFrameCodec.clientType(bye[1] & 0xFF).name();
                } catch (IOException x) {
                  throw new java.io.UncheckedIOException(x);
                }
              });
      List<String> whileConnected = new java.util.concurrent.CopyOnWriteArrayList<>();
      Outcome o =
          inNewThreadGroup(
              () -> {
                BdrpClient c = client(server.port()).connect();
                assertEquals(3, c.routerNumber());
                Thread[] all = new Thread[64];
                int n = Thread.currentThread().getThreadGroup().enumerate(all, true);
                for (int i = 0; i < n; i++) {
                  whileConnected.add(all[i].getName() + (all[i].isDaemon() ? " (daemon)" : ""));
                }
                c.close();
              });
      assertEquals(null, o.thrown());
      assertTrue(
          whileConnected.stream()
              .anyMatch(t -> t.startsWith("bdrp-client-io") && t.endsWith("(daemon)")),
          "the client's I/O thread is a daemon thread: " + whileConnected);
      assertEquals(List.of(), o.leftAlive(), "threads started by the client, still alive");
      assertEquals("BYE", seen.get(20, TimeUnit.SECONDS));
    }
  }

  /**
   * A program whose only client fails to connect, and which then returns from {@code main}, ends:
   * nothing the client started keeps its JVM alive.
   */
  @Test
  void aProgramWhoseConnectFailsExits(@TempDir Path dir) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      port = s.getLocalPort();
    }
    ProcessBuilder pb =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    ConnectOnce.class.getName(),
                    Integer.toString(port)))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("out.txt").toFile());
    Process p = pb.start();
    try {
      boolean exited = p.waitFor(30, TimeUnit.SECONDS);
      String out = Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8);
      assertTrue(exited, "the program exits; output so far: " + out);
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("connect failed: cannot connect to 127.0.0.1:" + port), out);
    } finally {
      p.destroyForcibly();
    }
  }

  /** The program of {@link #aProgramWhoseConnectFailsExits}: no System.exit, main just returns. */
  static final class ConnectOnce {
    public static void main(String[] args) throws InterruptedException {
      try {
        BdrpClient.builder().router("127.0.0.1", Integer.parseInt(args[0])).connect();
        System.out.println("connected?!");
      } catch (IOException e) {
        System.out.println("connect failed: " + e.getMessage());
      }
    }
  }
}
