package io.bdrp.router;

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
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/** The metrics endpoint: {@code GET /metrics} answers the Prometheus text; anything else 404. */
final class MetricsHttp {
  private MetricsHttp() {}

  static ChannelInitializer<SocketChannel> initializer(Supplier<String> render) {
    return initializer(render, null, () -> null);
  }

  /**
   * The endpoint with {@code access} (null: open, plain HTTP): basic authentication when it names a
   * user (401 otherwise), and TLS with the client port's current certificate when it asks.
   */
  static ChannelInitializer<SocketChannel> initializer(
      Supplier<String> render, MetricsAccess access, Supplier<ClientTls> tls) {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        if (access != null && access.tls() && tls.get() != null) {
          ch.pipeline().addLast(tls.get().context().newHandler(ch.alloc()));
        }
        ch.pipeline()
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
                      ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
                      return;
                    }
                    boolean ok =
                        req.method().equals(HttpMethod.GET)
                            && (req.uri().equals("/metrics") || req.uri().startsWith("/metrics?"));
                    ByteBuf body =
                        Unpooled.copiedBuffer(
                            ok ? render.get() : "not found; try /metrics\n",
                            StandardCharsets.UTF_8);
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
                    ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
                  }

                  @Override
                  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    ctx.close();
                  }
                });
      }
    };
  }
}
