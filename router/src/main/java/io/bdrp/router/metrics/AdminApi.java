package io.bdrp.router.metrics;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The admin API served beside {@code /metrics} on the metrics port ({@code /admin/v1/...}, see
 * docs/admin-api.md): {@link MetricsHttp} checks authentication and TLS as for {@code /metrics},
 * hands each GET under {@code /admin} here, and writes the answer as JSON on the port's thread.
 */
public interface AdminApi {
  /** The path every version of the API is under. */
  String PREFIX = "/admin";

  /**
   * An answer: its status and its body, made of maps, lists, strings, numbers, booleans and nulls
   * only (written as JSON on the port's thread, so nothing in it may be shared state).
   */
  record Reply(HttpResponseStatus status, Object body) {
    /** A JSON error body {@code {"error": what}} with {@code status}. */
    public static Reply error(HttpResponseStatus status, String what) {
      return new Reply(status, Map.of("error", what));
    }
  }

  /**
   * Answers a GET of {@code path} (starting with {@link #PREFIX}, without its query) with the
   * decoded {@code query}. The future may complete on any thread; reading the router's state is the
   * implementation's to do on the threads that own it.
   */
  CompletableFuture<Reply> get(String path, Map<String, List<String>> query);
}
