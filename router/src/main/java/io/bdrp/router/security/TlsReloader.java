package io.bdrp.router.security;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.metrics.Metrics;
import io.bdrp.router.metrics.RouterMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads the TLS certificates, keys and CA of a running router when their files change, so that a
 * renewed certificate is used without a restart: the files are read once every {@link #CHECK_MS},
 * and when their content differs from what was loaded, new contexts are built and used for every
 * connection made from then on. Sessions already open keep theirs. A file that cannot be used (half
 * written, a key that does not match) leaves the old contexts in place, with a WARN; the next
 * change is tried again.
 *
 * <p>The files are read, digested and loaded on a thread of their own ({@code bdrp-tls-N}), never
 * on the router's loop: a slow or hung file system delays reloads, not forwarding. The loop reads
 * the contexts now in use (volatile, immutable) and is handed, as a task, what else must change
 * with the router's certificate (see {@link #start}).
 */
public final class TlsReloader {
  private static final Logger log = LoggerFactory.getLogger(TlsReloader.class);

  /** How often the files are read. */
  static final long CHECK_MS = 1_000;

  private final int router;
  private final Metrics.Counter reloaded;
  private final Metrics.Counter failed;
  private volatile ClientTls clientTls;
  private volatile RouterTls routerTls;
  private byte[] loaded; // on the reloader's thread after start
  private byte[] pending;
  private ScheduledExecutorService thread; // null until started
  private Executor loop;
  private Function<RouterTls, Runnable> renewed;

  public TlsReloader(RouterConfig config, RouterMetrics metrics) {
    this.router = config.router();
    this.clientTls = config.clientTls();
    this.routerTls = config.routerTls();
    this.reloaded = metrics.tlsReloads("ok");
    this.failed = metrics.tlsReloads("failed");
    this.loaded = digest();
  }

  /** TLS on the client port now (null: none). */
  public ClientTls clientTls() {
    return clientTls;
  }

  /** TLS on router links now (null: none). */
  public RouterTls routerTls() {
    return routerTls;
  }

  /** Whether there are files to watch. */
  public boolean watching() {
    return files().findAny().isPresent();
  }

  /**
   * Checks the files every {@link #CHECK_MS} on the reloader's own thread. After a reload of the
   * router links' files, {@code renewed} is called on that thread with the new ones; the task it
   * returns (or null: none) runs on {@code loop}.
   */
  public synchronized void start(int router, Executor loop, Function<RouterTls, Runnable> renewed) {
    this.loop = loop;
    this.renewed = renewed;
    thread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bdrp-tls-" + router);
              t.setDaemon(true);
              return t;
            });
    thread.scheduleWithFixedDelay(
        () -> {
          try {
            check();
          } catch (RuntimeException e) { // the checks go on
            log.warn("router {}: checking the TLS files failed", router, e);
          }
        },
        CHECK_MS,
        CHECK_MS,
        TimeUnit.MILLISECONDS);
  }

  /** Stops the checks (the router stops); a load under way is interrupted or ends unused. */
  public synchronized void close() {
    if (thread != null) {
      thread.shutdownNow();
    }
  }

  /**
   * Reads the files and, if they changed since the last load and stayed the same since the previous
   * check (so that a certificate and key written one after the other are taken together), loads
   * them.
   */
  void check() {
    byte[] now = digest();
    if (now == null || Arrays.equals(now, loaded)) {
      pending = null;
      return;
    }
    if (!Arrays.equals(now, pending)) {
      pending = now; // changed: load it if it is the same at the next check
      return;
    }
    pending = null;
    try {
      ClientTls c = clientTls == null ? null : clientTls.reload();
      RouterTls r = routerTls == null || routerTls.cert() == null ? routerTls : routerTls.reload();
      boolean routerFiles = r != routerTls;
      // The links' part is made (files read) here; the loop only swaps it in.
      Runnable onLoop = routerFiles && renewed != null ? renewed.apply(r) : null;
      clientTls = c;
      routerTls = r;
      loaded = now;
      reloaded.inc();
      log.info("router {}: TLS certificates reloaded; new connections use them", router);
      if (onLoop != null) {
        try {
          loop.execute(onLoop);
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
          // The router has stopped.
        }
      }
    } catch (IllegalArgumentException e) {
      loaded = now; // tried: wait for the next change
      failed.inc();
      log.warn(
          "router {}: TLS files changed but cannot be used, keeping the previous ones: {}",
          router,
          e.getMessage());
    }
  }

  private Stream<Path> files() {
    Stream<Path> c =
        clientTls == null ? Stream.empty() : Stream.of(clientTls.cert(), clientTls.key());
    Stream<Path> r =
        routerTls == null || routerTls.cert() == null
            ? Stream.empty()
            : Stream.of(routerTls.cert(), routerTls.key(), routerTls.ca());
    return Stream.concat(c, r).filter(Objects::nonNull);
  }

  /** A digest of every watched file's content, or null if one cannot be read now. */
  private byte[] digest() {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (Path p : files().toList()) {
        d.update(p.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        d.update(Files.readAllBytes(p));
      }
      return d.digest();
    } catch (IOException e) {
      return null;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
