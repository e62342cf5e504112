package io.bdrp.cli.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bdrp.cli.JsonMessages;
import io.bdrp.cli.TraceCommand;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.transport.ClientFrame;
import io.bdrp.transport.ErrorCode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * The console's traces ({@code POST /api/trace}, docs/console.md): runs {@link BdrpClient#trace} as
 * a client of the chosen ingress router, at the client address its admin API gives ({@link
 * Federation#clientAddress}), with the credentials the console was given, and answers the result in
 * the JSON form of {@code bdrp trace --json} with its text tree beside it.
 *
 * <p>Bounds what it accepts: a request of at most {@link #MAX_REQUEST_BYTES}, a timeout of at most
 * {@link #MAX_TIMEOUT_MS}, and one trace at a time (a second one meanwhile is answered 429), so
 * that a page cannot tie up the console server or load the routers.
 *
 * <p>Thread-safe: each request connects its own client and closes it.
 */
public final class Tracer {
  /** The largest request body accepted, message included: 64 KiB. */
  public static final int MAX_REQUEST_BYTES = 64 * 1024;

  /** The longest a trace may let its ingress wait for the reports: 10 s. */
  public static final long MAX_TIMEOUT_MS = 10_000;

  /** The timeout of a request that names none: 2 s, as {@code bdrp trace}'s. */
  public static final long DEFAULT_TIMEOUT_MS = BdrpClient.DEFAULT_TRACE_TIMEOUT.toMillis();

  /** How long connecting to the ingress may take. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Federation federation;
  private final UnaryOperator<BdrpClient.Builder> client;
  private final Semaphore one = new Semaphore(1);

  /** An answer: its HTTP status and JSON body. */
  public record Answer(int status, byte[] body) {}

  /**
   * @param federation where the ingress routers' client addresses come from
   * @param client applies the credentials and TLS settings of the console's traces to a client
   *     builder (token, CA, client certificate); the identity operator for an open router
   */
  public Tracer(Federation federation, UnaryOperator<BdrpClient.Builder> client) {
    this.federation = federation;
    this.client = client;
  }

  /**
   * Runs the trace that {@code request} asks for: {@code {"router": N, "message": "JSON object as
   * bdrp pub takes it", "timeoutMs": 1..10000}} ({@code timeoutMs} optional). Answers 200 with
   * {@code {"router": N, "address": "HOST:PORT", "result": {...bdrp trace --json...}, "text":
   * "...bdrp trace's tree..."}}, or an error status with {@code {"error": "what went wrong"}}: 400
   * a bad request, 404 a router whose client address is not known, 429 a trace already running or
   * the router overloaded, 403 the trace refused by the router's permissions, 502 the router not
   * reached or refusing for another reason, 504 no answer in time.
   */
  public Answer trace(byte[] request) {
    JsonNode req;
    try {
      req = JSON.readTree(request);
    } catch (IOException e) {
      return error(400, "the request is not JSON: " + e.getMessage());
    }
    if (req == null || !req.isObject()) {
      return error(400, "the request must be a JSON object");
    }
    if (!req.path("router").canConvertToInt() || req.path("router").asInt() < 0) {
      return error(400, "choose the ingress router (\"router\": its number)");
    }
    int router = req.get("router").asInt();
    if (!req.path("message").isTextual()) {
      return error(400, "\"message\" must be the message as text, a JSON object");
    }
    long timeoutMs = DEFAULT_TIMEOUT_MS;
    if (req.hasNonNull("timeoutMs")) {
      JsonNode t = req.get("timeoutMs");
      if (!t.canConvertToLong() || t.asLong() < 1 || t.asLong() > MAX_TIMEOUT_MS) {
        return error(400, "the timeout must be from 1 to " + MAX_TIMEOUT_MS + " ms, got " + t);
      }
      timeoutMs = t.asLong();
    }
    Message m;
    try {
      m = JsonMessages.parse(req.get("message").asText());
    } catch (IllegalArgumentException e) {
      return error(400, "the message: " + e.getMessage());
    }
    InetSocketAddress at = federation.clientAddress(router);
    if (at == null) {
      return error(
          404,
          "router "
              + router
              + ": no client address known (it has not answered the console, or does not listen"
              + " for clients)");
    }
    if (!one.tryAcquire()) {
      return error(429, "another trace is running; try again when it has finished");
    }
    try {
      return run(router, at, m, timeoutMs);
    } finally {
      one.release();
    }
  }

  private Answer run(int router, InetSocketAddress at, Message m, long timeoutMs) {
    String where = "router " + router + " at " + at.getHostString() + ":" + at.getPort();
    BdrpClient.Builder b =
        client
            .apply(BdrpClient.builder())
            .router(at)
            .name("bdrp-console-trace")
            .connectTimeout(CONNECT_TIMEOUT)
            .reconnect(false);
    try (BdrpClient c = b.connect()) {
      ClientFrame.TraceResult r =
          c.trace(m, Duration.ofMillis(timeoutMs))
              .get(timeoutMs + CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      ObjectNode o = JSON.createObjectNode();
      o.put("router", router);
      o.put("address", at.getHostString() + ":" + at.getPort());
      o.set("result", JSON.readTree(TraceCommand.json(r)));
      o.put("text", TraceCommand.text(r));
      return new Answer(200, JSON.writeValueAsBytes(o));
    } catch (ExecutionException e) {
      Throwable why = e.getCause();
      if (why instanceof BdrpClient.RouterException re) {
        if (re.code() == ErrorCode.NOT_AUTHORIZED.number()) {
          return error(403, where + " refused the trace: " + re.getMessage());
        }
        if (re.code() == ErrorCode.OVERLOADED.number()) {
          return error(429, where + " is overloaded with traces: " + re.getMessage());
        }
        return error(502, where + " refused the trace: " + re.getMessage());
      }
      return error(502, where + ": the trace failed: " + why.getMessage());
    } catch (TimeoutException e) {
      return error(504, where + " did not answer the trace within " + timeoutMs + " ms");
    } catch (IOException | RuntimeException e) {
      return error(502, "cannot reach " + where + ": " + message(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return error(503, "the console is stopping");
    }
  }

  private static String message(Throwable e) {
    StringBuilder s = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
      if (c.getMessage() != null && !s.toString().contains(c.getMessage())) {
        s.append(": ").append(c.getMessage());
      }
    }
    return s.toString();
  }

  private static Answer error(int status, String message) {
    ObjectNode o = JSON.createObjectNode().put("error", message);
    try {
      return new Answer(status, JSON.writeValueAsBytes(o));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write an error", e);
    }
  }
}
