package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ClientFrameCodec;
import io.bdrp.transport.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A router as far as a client sees it, on a loopback socket: it accepts connections, decodes what
 * the client sends into a queue the test reads, answers PING with PONG by itself, and sends what
 * the test tells it to. Each connection is read by a thread of its own; the test waits on queues
 * with a timeout, never on the clock.
 */
final class FakeRouter implements AutoCloseable {
  private static final long WAIT_SECONDS = 10;

  private final ServerSocket server;
  private final BlockingQueue<Peer> accepted = new LinkedBlockingQueue<>();

  FakeRouter() throws IOException {
    server = new ServerSocket(0, 8, InetAddress.getByName("127.0.0.1"));
    Thread t =
        new Thread(
            () -> {
              try {
                while (true) {
                  accepted.add(new Peer(server.accept()));
                }
              } catch (IOException e) {
                // closed
              }
            },
            "fake-router-accept");
    t.setDaemon(true);
    t.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** The next connection, waited for. */
  Peer accept() throws InterruptedException {
    Peer p = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertNotNull(p, "no connection within " + WAIT_SECONDS + " s");
    return p;
  }

  /** The next connection, its HELLO answered with HELLO_OK as router {@code number}. */
  Peer acceptSession(int number) throws Exception {
    Peer p = accept();
    p.next(ClientFrame.Hello.class);
    p.send(new ClientFrame.HelloOk(Frames.VERSION, number, "fake"));
    return p;
  }

  @Override
  public void close() throws IOException {
    server.close();
    Peer p;
    while ((p = accepted.poll()) != null) {
      p.close();
    }
  }

  /** One client connection. */
  static final class Peer implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final BlockingQueue<ClientFrame> frames = new LinkedBlockingQueue<>();

    Peer(Socket socket) throws IOException {
      this.socket = socket;
      this.out = socket.getOutputStream();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      Thread t =
          new Thread(
              () -> {
                try {
                  while (true) {
                    int length = in.readInt();
                    byte[] frame = new byte[Frames.LENGTH_BYTES + length];
                    ByteBuffer.wrap(frame).putInt(length);
                    in.readFully(frame, Frames.LENGTH_BYTES, length);
                    ByteBuf buf = Unpooled.wrappedBuffer(frame);
                    ClientFrame f = ClientFrameCodec.decode(buf);
                    buf.release();
                    if (f instanceof ClientFrame.Ping p) {
                      send(new ClientFrame.Pong(p.nonce()));
                    }
                    frames.add(f);
                  }
                } catch (IOException e) {
                  // the connection ended
                }
              },
              "fake-router-read");
      t.setDaemon(true);
      t.start();
    }

    /** The next frame the client sent, waited for. */
    ClientFrame next() throws InterruptedException {
      ClientFrame f = frames.poll(WAIT_SECONDS, TimeUnit.SECONDS);
      assertNotNull(f, "no frame within " + WAIT_SECONDS + " s");
      return f;
    }

    /** The next frame, which must be a {@code type}. */
    <T extends ClientFrame> T next(Class<T> type) throws InterruptedException {
      return assertInstanceOf(type, next());
    }

    /** Sends {@code f} to the client. */
    synchronized void send(ClientFrame f) throws IOException {
      ByteBuf b = ClientFrameCodec.encode(UnpooledByteBufAllocator.DEFAULT, f);
      try {
        out.write(ByteBufUtil.getBytes(b));
        out.flush();
      } finally {
        b.release();
      }
    }

    /** Sends {@code bytes} to the client as they are: a frame however malformed. */
    synchronized void sendBytes(byte[] bytes) throws IOException {
      out.write(bytes);
      out.flush();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
