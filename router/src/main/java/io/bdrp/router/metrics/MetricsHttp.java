package io.bdrp.router.metrics;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.router.security.ClientTls;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The metrics endpoint: {@code GET /metrics} answers the Prometheus text, {@code /admin/...} the
 * {@linkplain AdminApi admin API} (JSON) when the router serves one; anything else 404.
 *
 * <p>Its connections live on a thread of their own, not on the router's event loop: accepting, TLS
 * handshakes and HTTP parsing never delay forwarding. At most {@link #MAX_CONNECTIONS} are open at
 * once (more are closed as they arrive) and a connection that sends nothing for {@link #IDLE_MS} is
 * closed, both counted ({@code bdrp_connections_closed_total{port="metrics"}}). What a series needs
 * from files (under {@code /proc}) is read first on the connection's thread, then the series are
 * read on {@code scrapeOn} (the router's loop, which owns the state the gauges read: numbers only,
 * no file read, nothing formatted), then formatted and written back on the connection's thread. The
 * admin API's answers are read likewise by the {@link AdminApi} and written as JSON here. Both are
 * behind the same authentication and TLS.
 */
public final class MetricsHttp {
  /** Most connections open at once on the metrics port. */
  public static final int MAX_CONNECTIONS = 16;

  /** A metrics connection that sends nothing this long is closed. */
  static final int IDLE_MS = 10_000;

  /** Writes the admin API's answers (used on the port's threads; thread-safe once configured). */
  private static final ObjectMapper JSON = new ObjectMapper();

  private MetricsHttp() {}

  /**
   * The metrics port of a router: {@code read} (file and kernel reads) on the port's thread, the
   * series read on {@code loop}, formatted on the port's thread again.
   */
  public static ChannelInitializer<SocketChannel> initializer(
      RouterMetrics metrics,
      Runnable read,
      Executor loop,
      MetricsAccess access,
      Supplier<ClientTls> tls,
      AdminApi admin) {
    return initializer(
        read,
        metrics.registry()::scrape,
        loop,
        Metrics::format,
        access,
        tls,
        admin,
        metrics.connectionsClosed("metrics", "connections"),
        metrics.connectionsClosed("metrics", "idle"));
  }

  /**
   * The endpoint with {@code access} (null: open, plain HTTP): basic authentication when it names a
   * user (401 otherwise), and TLS with the client port's current certificate when it asks.
   *
   * @param read reads what the series need from files; run on the connection's thread
   * @param scrape reads the series; run on {@code scrapeOn}
   * @param format makes the text of what {@code scrape} read; run on the connection's thread
   * @param admin answers {@code /admin/...}, or null: 404 there
   * @param full counted when a connection beyond {@link #MAX_CONNECTIONS} is closed
   * @param idle counted when a connection is closed for {@link #IDLE_MS} of silence
   */
  public static <S> ChannelInitializer<SocketChannel> initializer(
      Runnable read,
      Supplier<S> scrape,
      Executor scrapeOn,
      Function<S, String> format,
      MetricsAccess access,
      Supplier<ClientTls> tls,
      AdminApi admin,
      Metrics.Counter full,
      Metrics.Counter idle) {
    AtomicInteger open = new AtomicInteger();
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        if (open.incrementAndGet() > MAX_CONNECTIONS) {
          open.decrementAndGet();
          full.inc();
          ch.close();
          return;
        }
        ch.closeFuture().addListener(f -> open.decrementAndGet());
        if (access != null && access.tls()) {
          ClientTls now = tls.get();
          if (now == null) {
            ch.close(); // never plain HTTP where TLS was asked for
            return;
          }
          ch.pipeline().addLast(now.context().newHandler(ch.alloc()));
        }
        ch.pipeline()
            .addLast(new IdleStateHandler(IDLE_MS, 0, 0, TimeUnit.MILLISECONDS))
            .addLast(new HttpServerCodec(4096, 8192, 8192))
            .addLast(new HttpObjectAggregator(8192))
            .addLast(
                new SimpleChannelInboundHandler<FullHttpRequest>() {
                  @Override
                  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                    if (access != null
                        && !access.admits(req.headers().get(HttpHeaderNames.AUTHORIZATION))) {
                      ByteBuf body =
                          Unpooled.copiedBuffer(
                              "authentication required\n", StandardCharsets.UTF_8);
                      FullHttpResponse res =
                          new DefaultFullHttpResponse(
                              HttpVersion.HTTP_1_1, HttpResponseStatus.UNAUTHORIZED, body);
                      res.headers()
                          .set(HttpHeaderNames.WWW_AUTHENTICATE, "Basic realm=\"bdrp\"")
                          .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                          .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                      answerAndClose(ctx, res);
                      return;
                    }
                    QueryStringDecoder uri = new QueryStringDecoder(req.uri());
                    if (admin != null
                        && (uri.path().equals(AdminApi.PREFIX)
                            || uri.path().startsWith(AdminApi.PREFIX + "/"))) {
                      admin(ctx, req.method(), uri);
                      return;
                    }
                    boolean ok =
                        req.method().equals(HttpMethod.GET)
                            && (req.uri().equals("/metrics") || req.uri().startsWith("/metrics?"));
                    if (!ok) {
                      respond(ctx, false, "not found; try /metrics\n");
                      return;
                    }
                    read.run();
                    CompletableFuture.supplyAsync(scrape, scrapeOn)
                        .thenApplyAsync(format, ctx.executor())
                        .whenComplete(
                            (text, failed) ->
                                ctx.executor()
                                    .execute(
                                        () -> {
                                          if (failed != null) {
                                            ctx.close();
                                          } else {
                                            respond(ctx, true, text);
                                          }
                                        }));
                  }

                  private void admin(
                      ChannelHandlerContext ctx, HttpMethod method, QueryStringDecoder uri) {
                    if (!method.equals(HttpMethod.GET)) {
                      json(
                          ctx,
                          AdminApi.Reply.error(
                              HttpResponseStatus.METHOD_NOT_ALLOWED,
                              "method " + method + " not allowed; the admin API answers GET only"));
                      return;
                    }
                    CompletableFuture<AdminApi.Reply> reply;
                    try {
                      reply = admin.get(uri.path(), uri.parameters());
                    } catch (RuntimeException e) {
                      reply = CompletableFuture.failedFuture(e);
                    }
                    reply.whenComplete(
                        (r, failed) ->
                            ctx.executor()
                                .execute(
                                    () ->
                                        json(
                                            ctx,
                                            failed != null
                                                ? AdminApi.Reply.error(
                                                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                                                    "the router could not answer: " + failed)
                                                : r)));
                  }

                  private void json(ChannelHandlerContext ctx, AdminApi.Reply r) {
                    byte[] bytes;
                    try {
                      bytes = JSON.writeValueAsBytes(r.body());
                    } catch (JsonProcessingException e) {
                      ctx.close();
                      return;
                    }
                    ByteBuf body = Unpooled.wrappedBuffer(bytes);
                    FullHttpResponse res =
                        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, r.status(), body);
                    res.headers()
                        .set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                    if (r.status().equals(HttpResponseStatus.METHOD_NOT_ALLOWED)) {
                      res.headers().set(HttpHeaderNames.ALLOW, "GET");
                    }
                    answerAndClose(ctx, res);
                  }

                  private void respond(ChannelHandlerContext ctx, boolean ok, String text) {
                    ByteBuf body = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
                    FullHttpResponse res =
                        new DefaultFullHttpResponse(
                            HttpVersion.HTTP_1_1,
                            ok ? HttpResponseStatus.OK : HttpResponseStatus.NOT_FOUND,
                            body);
                    res.headers()
                        .set(
                            HttpHeaderNames.CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8")
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                    answerAndClose(ctx, res);
                  }

                  @Override
                  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof IdleStateEvent) {
                      idle.inc();
                      ctx.close();
                    } else {
                      ctx.fireUserEventTriggered(evt);
                    }
                  }

                  @Override
                  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    ctx.close();
                  }
                });
      }
    };
  }

  /**
   * Writes {@code res} and closes the connection, saying so in the answer: a client that keeps
   * connections (the JDK's {@code HttpClient}, browsers) would otherwise send its next request on a
   * connection the port is closing, and read no answer at all.
   */
  private static void answerAndClose(ChannelHandlerContext ctx, FullHttpResponse res) {
    res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
  }
}
