package io.bdrp.client;

import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.DeliverReader;
import io.bdrp.transport.Frames;
import io.bdrp.transport.ProtocolException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One connection's session, the last handler of its pipeline: says HELLO when the connection is up
 * (and gives up if no answer comes within the connect timeout), matches OK, ERROR and PONG to the
 * {@link Requests} they answer, hands CONFIRM, CONFIRM_RANGE, UNREACHED and the ERRORs that answer
 * a SEND_RELIABLE (their correlation ids have the top bit set) to the {@link ReliableSender},
 * answers PING, gathers the messages of one read into a batch (DELIVER frames reach it from the
 * {@link DeliverReader} of its frame decoder, as {@link #delivered(Message)} calls), and tells its
 * {@link Session} when the session opens, what it delivers and how it ends. A new handler for every
 * connection; owned by the connection's event loop.
 */
final class SessionHandler extends SimpleChannelInboundHandler<ClientFrame>
    implements DeliverReader.Sink {
  /** What a session tells the client; called on the connection's event loop. */
  interface Session {
    /**
     * The router accepted the HELLO. False if the client was closed meanwhile: the handler then
     * closes the connection.
     */
    boolean opened(Channel channel, int routerNumber);

    /** Messages delivered by one read, in order. */
    void delivered(List<Message> batch);

    /** The router refused the HELLO; the connection is being closed. */
    void refused(int code, String message);

    /** The router reported an error that answers no waiting request. */
    void error(int code, String message);

    /**
     * CONFIRM ({@code firstSeq == lastSeq}) or CONFIRM_RANGE of reliable messages {@code firstSeq}
     * to {@code lastSeq} of {@code publisher}.
     */
    void confirmed(Channel channel, long publisher, long firstSeq, long lastSeq);

    /** UNREACHED of a reliable message. */
    void unreached(Channel channel, ClientFrame.Unreached unreached);

    /** ERROR answering the SEND_RELIABLE with {@code correlationId}. */
    void reliableRefused(Channel channel, long correlationId, BdrpClient.RouterException error);

    /**
     * The PONG of the reliable sender's PING ({@link ReliableSender#BARRIER}): every answer to what
     * it wrote before the PING has arrived.
     */
    void reliableBarrier(Channel channel);

    /** The connection is closed, for {@code cause}; called once, after {@link #opened} or not. */
    void ended(Channel channel, Throwable cause);
  }

  private final ClientOptions options;
  private final Requests requests;
  private final Session session;

  private boolean helloDone;
  private List<Message> delivered = new ArrayList<>();

  /** Why the connection is being closed, when this side closes it during the handshake. */
  private Throwable failure;

  private ScheduledFuture<?> helloTimer;

  SessionHandler(ClientOptions options, Requests requests, Session session) {
    this.options = options;
    this.requests = requests;
    this.session = session;
  }

  /** Ends the connection during the handshake, for a reason reported to the connect future. */
  private void abandon(ChannelHandlerContext ctx, Throwable why) {
    if (failure == null) {
      failure = why;
    }
    ctx.close();
  }

  /**
   * A delivered message, into this read's batch: from a {@link ClientFrame.Deliver} or straight
   * from the frame decoder's input ({@link DeliverReader}).
   */
  @Override
  public void delivered(Message m) {
    delivered.add(m);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (!delivered.isEmpty()) {
      session.delivered(delivered);
      delivered = new ArrayList<>();
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    long ms = options.connectTimeout().toMillis();
    helloTimer =
        ctx.executor()
            .schedule(
                () -> {
                  if (!helloDone) {
                    abandon(ctx, new IOException("no answer to HELLO within " + ms + " ms"));
                  }
                },
                ms,
                TimeUnit.MILLISECONDS);
    ctx.writeAndFlush(
        new ClientFrame.Hello(Frames.SESSION_VERSION, options.name(), options.authToken()));
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, ClientFrame f) {
    switch (f) {
      case ClientFrame.HelloOk ok -> {
        if (helloDone) {
          return;
        }
        helloDone = true;
        helloTimer.cancel(false);
        if (!session.opened(ctx.channel(), ok.routerNumber())) {
          ctx.close();
        }
      }
      case ClientFrame.Ok ok -> requests.complete(ok.correlationId(), null);
      case ClientFrame.Error e -> {
        if (!helloDone) {
          // The router refused the HELLO; it closes the connection, and so does this side.
          abandon(
              ctx,
              new BdrpClient.RouterException(
                  e.code(),
                  "router " + options.where() + " refused the session: " + e.message(),
                  0));
          session.refused(e.code(), e.message());
          return;
        }
        BdrpClient.RouterException ex =
            new BdrpClient.RouterException(e.code(), e.message(), e.position());
        if (ReliableSender.isReliable(e.correlationId())) {
          session.reliableRefused(ctx.channel(), e.correlationId(), ex);
          return;
        }
        if (e.correlationId() != 0 && requests.complete(e.correlationId(), ex)) {
          return;
        }
        session.error(e.code(), e.message());
      }
      case ClientFrame.Deliver d -> delivered(d.message());
      case ClientFrame.Confirm c -> {
        if (helloDone) {
          session.confirmed(ctx.channel(), c.publisher(), c.publisherSeq(), c.publisherSeq());
        }
      }
      case ClientFrame.ConfirmRange c -> {
        if (helloDone) {
          session.confirmed(ctx.channel(), c.publisher(), c.firstSeq(), c.lastSeq());
        }
      }
      case ClientFrame.Unreached u -> {
        if (helloDone) {
          session.unreached(ctx.channel(), u);
        }
      }
      case ClientFrame.Ping p -> ctx.writeAndFlush(new ClientFrame.Pong(p.nonce()));
      case ClientFrame.Pong p -> {
        if (p.nonce() == ReliableSender.BARRIER) {
          session.reliableBarrier(ctx.channel());
        } else {
          requests.complete(p.nonce(), null);
        }
      }
      case ClientFrame.TraceResult t -> requests.complete(t.correlationId(), t, null);
      case ClientFrame.Bye b -> ctx.close();
      default -> {}
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (helloTimer != null) {
      helloTimer.cancel(false);
    }
    Throwable cause;
    if (failure != null) {
      cause = failure;
    } else if (!helloDone) {
      cause = new IOException("the router closed the connection during the handshake");
    } else {
      cause = new IOException("session with " + options.where() + " closed");
    }
    session.ended(ctx.channel(), cause);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (!helloDone || cause instanceof ProtocolException) {
      // A frame that does not decode names its fault: the session ends for it, and the listener
      // hears it.
      abandon(ctx, cause);
    } else {
      ctx.close();
    }
  }
}
