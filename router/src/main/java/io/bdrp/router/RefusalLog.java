package io.bdrp.router;

import io.bdrp.routing.PredicateTable;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of versions of PREDICATES refused for a bound: a WARN at most every 10 s, the refusals in
 * between counted in the next line (every one is counted in the metrics by the routing state), so
 * that a neighbour flooding refused versions cannot flood the log.
 *
 * <p>Owned by the router's event loop.
 */
final class RefusalLog implements Consumer<PredicateTable.Refusal> {
  private static final Logger log = LoggerFactory.getLogger(RefusalLog.class);

  private final int router;
  private final WarnEvery every = new WarnEvery();

  RefusalLog(int router) {
    this.router = router;
  }

  @Override
  public void accept(PredicateTable.Refusal r) {
    long unlogged = every.due();
    if (unlogged < 0) {
      return;
    }
    log.warn(
        "router {}: {}{}",
        router,
        r.message(),
        unlogged == 0 ? "" : " (and " + unlogged + " more refusals since the last such line)");
  }
}
