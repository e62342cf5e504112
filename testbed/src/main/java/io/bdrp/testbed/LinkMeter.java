package io.bdrp.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A byte-counting TCP relay placed on a link between two servers: the dialling server is told to
 * connect to {@link #port()} instead of its neighbour, and every connection accepted there is
 * joined to a new connection to the neighbour's real address, bytes copied both ways as they come
 * (TCP_NODELAY on both sides, so the relay adds a copy but holds nothing back). It counts the bytes
 * it carries in each direction, so that the traffic on an inter-server link is measured the same
 * way whatever system runs on it, with whatever protocol, framing and TLS it uses: what the sockets
 * carried.
 *
 * <p>Threads: one accepting thread, and two copying threads per relayed connection (blocking reads:
 * a benchmark has a handful of links). The counters are atomic and read from any thread.
 */
public final class LinkMeter implements AutoCloseable {
  private final String name;
  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final AtomicLong forward = new AtomicLong();
  private final AtomicLong backward = new AtomicLong();
  private final List<Socket> sockets = new ArrayList<>();
  private volatile boolean closed;

  private LinkMeter(String name, ServerSocket server, String targetHost, int targetPort) {
    this.name = name;
    this.server = server;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
  }

  /**
   * Starts a relay on a free port of 127.0.0.1 towards {@code targetPort} of 127.0.0.1: bytes from
   * the dialling side to the target count as {@link #forwardBytes()}, the others as {@link
   * #backwardBytes()}.
   */
  public static LinkMeter start(String name, int targetPort) throws IOException {
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress("127.0.0.1", Ports.free()));
    LinkMeter m = new LinkMeter(name, s, "127.0.0.1", targetPort);
    Thread t = new Thread(m::accept, "link-meter-" + name);
    t.setDaemon(true);
    t.start();
    return m;
  }

  /** The port the dialling server connects to. */
  public int port() {
    return server.getLocalPort();
  }

  /** Bytes carried from the dialling side to the target so far. */
  public long forwardBytes() {
    return forward.get();
  }

  /** Bytes carried from the target back to the dialling side so far. */
  public long backwardBytes() {
    return backward.get();
  }

  /** Bytes carried both ways so far. */
  public long bytes() {
    return forward.get() + backward.get();
  }

  private void accept() {
    while (!closed) {
      Socket in;
      try {
        in = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      Socket out = new Socket();
      try {
        in.setTcpNoDelay(true);
        out.setTcpNoDelay(true);
        out.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
      } catch (IOException e) {
        closeQuietly(in);
        closeQuietly(out);
        continue; // the target is not up yet: the dialling server retries
      }
      synchronized (sockets) {
        if (closed) {
          closeQuietly(in);
          closeQuietly(out);
          return;
        }
        sockets.add(in);
        sockets.add(out);
      }
      copy(in, out, forward, "->");
      copy(out, in, backward, "<-");
    }
  }

  private void copy(Socket from, Socket to, AtomicLong counter, String way) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[64 * 1024];
              try (InputStream i = from.getInputStream();
                  OutputStream o = to.getOutputStream()) {
                int n;
                while ((n = i.read(buf)) > 0) {
                  o.write(buf, 0, n);
                  counter.addAndGet(n);
                }
              } catch (IOException e) {
                // the connection ended
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "link-meter-" + name + way);
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // nothing more to do
    }
  }

  /** Stops accepting and closes every relayed connection. */
  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // nothing more to do
    }
    synchronized (sockets) {
      sockets.forEach(LinkMeter::closeQuietly);
      sockets.clear();
    }
  }

  @Override
  public String toString() {
    return "link " + name + " (port " + port() + " to " + targetPort + ")";
  }
}
