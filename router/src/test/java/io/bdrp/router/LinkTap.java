package io.bdrp.router;

import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A relay in the middle of a plain (not TLS) router link, on loopback: a router dials {@link
 * #address()} instead of its neighbour's router address, and every frame is passed on whole and
 * logged with its direction and type, in the order the relay saw them. The log is the link's own
 * record of what each side sent.
 */
final class LinkTap implements AutoCloseable {
  /**
   * One frame on the link: {@code fromTarget} for frames the router dialled through the tap sent;
   * {@code nanos} when the tap read it ({@link System#nanoTime}).
   */
  record Frame(boolean fromTarget, int type, long nanos) {}

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final List<Frame> log = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();

  private LinkTap(InetSocketAddress target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "link-tap-accept");
    accept.setDaemon(true);
    accept.start();
  }

  /** A tap in front of the router address {@code target}. */
  static LinkTap start(InetSocketAddress target) throws IOException {
    return new LinkTap(target);
  }

  /** Where to dial to reach the target through the tap. */
  InetSocketAddress address() {
    return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
  }

  /** The frames seen so far, in order. */
  synchronized List<Frame> frames() {
    return List.copyOf(log);
  }

  /** How many frames of {@code type} the target has sent so far. */
  synchronized int fromTarget(int type) {
    int n = 0;
    for (Frame f : log) {
      if (f.fromTarget && f.type == type) {
        n++;
      }
    }
    return n;
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket dialler = server.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        dialler.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        synchronized (this) {
          sockets.add(dialler);
          sockets.add(upstream);
        }
        pump(dialler, upstream, false);
        pump(upstream, dialler, true);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void pump(Socket from, Socket to, boolean fromTarget) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    Thread t =
        new Thread(
            () -> {
              try {
                for (ByteBuf f; (f = RawFrames.readFrame(in)) != null; ) {
                  try {
                    synchronized (this) {
                      log.add(
                          new Frame(
                              fromTarget,
                              f.getUnsignedByte(Frames.TYPE_OFFSET),
                              System.nanoTime()));
                    }
                    f.readBytes(out, f.readableBytes());
                    out.flush();
                  } finally {
                    f.release();
                  }
                }
              } catch (IOException e) {
                // the link or the tap closed
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "link-tap-" + (fromTarget ? "from-target" : "to-target"));
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    synchronized (this) {
      sockets.forEach(LinkTap::closeQuietly);
    }
  }
}
