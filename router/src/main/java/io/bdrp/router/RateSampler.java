package io.bdrp.router;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.hosts.Hosts;
import io.bdrp.router.links.Link;
import io.bdrp.router.links.RouterLinks;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Turns the counters of links and hosts into rates per second for the admin API: once every {@link
 * #PERIOD_MS}, a task on the router's loop (which owns those counters) reads each link's DATA
 * frames and bytes each way and each host's messages published and delivered, and keeps their rates
 * over the period just ended ({@link Link#sample}, {@link
 * io.bdrp.router.hosts.AttachedHost#sample}). A task costs one pass over the links and the hosts.
 *
 * <p>Owned by the router's event loop; {@link #start} and {@link #stop} may be called from any
 * thread.
 */
final class RateSampler {
  /** The sample period: rates are those of the last complete second. */
  static final long PERIOD_MS = 1000;

  private final EventLoop loop;
  private final RouterConfig config;
  private final RouterLinks links;
  private final Hosts hosts;
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> task;
  private long last; // System.nanoTime() of the last sample

  RateSampler(EventLoop loop, RouterConfig config, RouterLinks links, Hosts hosts) {
    this.loop = loop;
    this.config = config;
    this.links = links;
    this.hosts = hosts;
  }

  void start() {
    loop.execute(
        () -> {
          if (stopped) {
            return;
          }
          last = System.nanoTime();
          sample(); // the baseline: the first rates are those of the first whole period
          task =
              loop.scheduleAtFixedRate(this::sample, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
        });
  }

  void stop() {
    stopped = true;
    ScheduledFuture<?> f = task;
    if (f != null) {
      f.cancel(false);
    }
  }

  private void sample() {
    long now = System.nanoTime();
    long elapsed = now - last;
    last = now;
    for (RouterConfig.Neighbour n : config.neighbours()) {
      Link l = links.get(n.router());
      if (l != null) {
        l.sample(elapsed);
      }
    }
    hosts.forEachSession(h -> h.sample(elapsed));
  }
}
