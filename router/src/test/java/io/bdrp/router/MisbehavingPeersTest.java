package io.bdrp.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import io.bdrp.transport.Frames;
import io.bdrp.transport.RouterFrameCodec;
import io.bdrp.transport.RouterHello;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Peers that send garbage or stop at a handshake step get an ERROR frame with a reason and a
 * counter, their session is closed where the stream cannot be trusted, and the router goes on
 * serving a well-behaved client throughout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MisbehavingPeersTest {
  private Router router;
  private BdrpClient good;
  private final LinkedBlockingQueue<Message> inbox = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() throws Exception {
    router = Router.start(Federation.routerWithNeighbourOne());
    good = BdrpClient.builder().router(router.clientAddress()).name("good").connect();
    good.subscribe(Predicate.parse("x = 1"), inbox::add).get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() {
    if (good != null) {
      good.close();
    }
    if (router != null) {
      router.close();
    }
  }

  /** The well-behaved client still publishes and receives. */
  private void goodClientStillServed(long n) throws Exception {
    good.send(Message.builder().put("x", 1L).put("n", n).build()).get(10, TimeUnit.SECONDS);
    Message m = inbox.poll(10, TimeUnit.SECONDS);
    assertTrue(m != null && m.get("n").asLong() == n, "the good client got message " + n);
  }

  private static Socket open(InetSocketAddress a) throws IOException {
    Socket s = new Socket(a.getAddress(), a.getPort());
    s.setSoTimeout(10_000);
    return s;
  }

  /** Reads one frame off the socket and decodes it as a client-session frame. */
  private static ClientFrame read(InputStream in) throws IOException {
    return RawFrames.readClientFrame(in);
  }

  private static void assertClosed(InputStream in) throws IOException {
    try {
      assertEquals(-1, in.read(), "the router closed the session");
    } catch (java.net.SocketException e) {
      // reset by the router: closed as well
    }
  }

  private static ClientFrame.Error expectError(InputStream in, ErrorCode code) throws IOException {
    ClientFrame f = read(in);
    ClientFrame.Error e = assertInstanceOf(ClientFrame.Error.class, f, "an ERROR frame");
    assertEquals(code.number(), e.code(), "code of " + e);
    assertTrue(!e.message().isEmpty(), "with a reason");
    return e;
  }

  @Test
  void garbageInsteadOfAFrameIsAnsweredAndClosed() throws Exception {
    try (Socket s = open(router.clientAddress())) {
      OutputStream out = s.getOutputStream();
      out.write(new byte[] {0, 0, 0, 12, 9, 9, 'g', 'a', 'r', 'b', 'a', 'g', 'e', '!', '!', '!'});
      out.flush();
      expectError(s.getInputStream(), ErrorCode.UNSUPPORTED_VERSION);
      assertClosed(s.getInputStream());
    }
    goodClientStillServed(1);
    assertTrue(
        router
            .metricsText()
            .contains("bdrp_protocol_errors_total{code=\"unsupported_version\"} 1.0"));
  }

  @Test
  void anOversizeFrameIsRefusedFromItsLengthAlone() throws Exception {
    try (Socket s = open(router.clientAddress())) {
      s.getOutputStream().write(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff});
      s.getOutputStream().flush();
      expectError(s.getInputStream(), ErrorCode.FRAME_TOO_LARGE);
      assertClosed(s.getInputStream());
    }
    goodClientStillServed(2);
  }

  @Test
  void aFrameBeforeHelloIsAProtocolViolation() throws Exception {
    try (Socket s = open(router.clientAddress())) {
      s.getOutputStream()
          .write(RawFrames.client(new ClientFrame.Send(7, Message.builder().put("x", 1L).build())));
      s.getOutputStream().flush();
      expectError(s.getInputStream(), ErrorCode.PROTOCOL_VIOLATION);
      assertClosed(s.getInputStream());
    }
    goodClientStillServed(3);
  }

  @Test
  void aBadPredicateIsAnsweredAndTheSessionGoesOn() throws Exception {
    try (Socket s = open(router.clientAddress())) {
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      out.write(
          RawFrames.client(new ClientFrame.Hello(Frames.VERSION, "bad-predicate", new byte[0])));
      assertInstanceOf(ClientFrame.HelloOk.class, read(in));
      // A SET_PREDICATE whose predicate bytes are nonsense: correlation id 42, then 0xFF...
      byte[] body = {0, 0, 0, 0, 0, 0, 0, 42, (byte) 0xff, (byte) 0xff, (byte) 0xff};
      ByteBuf frame = Unpooled.buffer();
      frame.writeInt(2 + body.length).writeByte(Frames.VERSION).writeByte(0x03).writeBytes(body);
      out.write(ByteBufUtil.getBytes(frame));
      frame.release();
      ClientFrame.Error e = expectError(in, ErrorCode.BAD_PREDICATE);
      assertEquals(42, e.correlationId(), "the error answers request 42");
      out.write(RawFrames.client(new ClientFrame.Ping(5)));
      assertEquals(new ClientFrame.Pong(5), read(in), "the session goes on");
    }
    goodClientStillServed(4);
  }

  @Test
  void aPeerThatStopsMidFrameDoesNotHoldUpOthers() throws Exception {
    try (Socket s = open(router.clientAddress())) {
      byte[] hello =
          RawFrames.client(new ClientFrame.Hello(Frames.VERSION, "stalled", new byte[0]));
      s.getOutputStream().write(hello, 0, hello.length / 2); // and then nothing
      s.getOutputStream().flush();
      goodClientStillServed(5);
    }
    goodClientStillServed(6);
  }

  @Test
  void aRouterThatSendsGarbageAfterAValidHelloIsCutOff() throws Exception {
    try (Socket s = open(router.routerAddress())) {
      ByteBuf b =
          RouterFrameCodec.encode(
              Unpooled.buffer().alloc(),
              new RouterHello(1, 5, 64, BloomParameters.DEFAULT, 0, "secret".getBytes()));
      OutputStream out = s.getOutputStream();
      out.write(ByteBufUtil.getBytes(b));
      b.release();
      out.write(new byte[] {0, 0, 0, 3, 1, (byte) 0x7e, 0}); // unknown frame type 0x7e
      out.flush();
      ClientFrame.Error e = RawFrames.firstError(s.getInputStream(), 10);
      assertTrue(e != null, "an ERROR frame");
      assertEquals(ErrorCode.UNKNOWN_TYPE.number(), e.code(), e.toString());
      assertClosed(s.getInputStream());
    }
    goodClientStillServed(8);
  }

  @Test
  void aRouterThatConnectsAndSaysNothingHoldsUpNobody() throws Exception {
    try (Socket s = open(router.routerAddress())) {
      assertTrue(s.isConnected());
      goodClientStillServed(9);
    }
    goodClientStillServed(10);
  }

  @Test
  void aRouterHelloFromAnUnknownRouterOrWithTheWrongTokenIsRefused() throws Exception {
    for (RouterHello h :
        List.of(
            new RouterHello(9, 5, 64, BloomParameters.DEFAULT, 0, "secret".getBytes()),
            new RouterHello(1, 5, 64, BloomParameters.DEFAULT, 0, "wrong".getBytes()))) {
      try (Socket s = open(router.routerAddress())) {
        s.getOutputStream().write(RawFrames.router(h));
        s.getOutputStream().flush();
        // The router greets first with its own hello; then comes the refusal.
        ClientFrame.Error e = RawFrames.firstError(s.getInputStream(), 3);
        assertTrue(e != null, "an ERROR frame for " + h);
        assertEquals(ErrorCode.NOT_AUTHORIZED.number(), e.code(), e.toString());
        assertClosed(s.getInputStream());
      }
    }
    goodClientStillServed(7);
  }
}
