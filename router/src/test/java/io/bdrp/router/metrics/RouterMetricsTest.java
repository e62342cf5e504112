package io.bdrp.router.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.DataPlane;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.routing.RoutingNode;
import io.bdrp.transport.ProtocolErrorCounters;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The data plane's series as a scrape renders them. */
class RouterMetricsTest {
  private static long series(Metrics m, String name) {
    Matcher x =
        Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\d+)(?:\\.0)?$")
            .matcher(Metrics.format(m.scrape()));
    return x.find() ? Long.parseLong(x.group(1)) : -1;
  }

  /**
   * Broadcasts the kernel fast path dropped as duplicates never reach the data plane: they are
   * counted with its own duplicates, and with no other reason.
   */
  @Test
  void theKernelsDuplicatesAreCountedAmongTheRoutersDrops() {
    RoutingNode node =
        new RoutingNode(1, 1, RoutingConfig.DEFAULT, BloomParameters.DEFAULT, () -> 0L);
    Metrics m = new Metrics();
    RouterMetrics rm = new RouterMetrics(m, node, new ProtocolErrorCounters());
    DataPlane<Message> dp =
        new DataPlane<>(
            node,
            new DataPlane.Output<>() {
              @Override
              public boolean send(
                  int neighbour, int hopLimit, int source, long messageId, long[] d, Message msg) {
                return true;
              }

              @Override
              public boolean deliver(int host, long messageId, Message msg) {
                return true;
              }

              @Override
              public Message decode(Message msg) {
                return msg;
              }
            },
            System::nanoTime);
    AtomicLong kernel = new AtomicLong();
    rm.dataPlane(dp, () -> 0, kernel::get);
    assertEquals(0, series(m, "bdrp_drops_total{reason=\"duplicate\"}"));
    kernel.set(7);
    assertEquals(7, series(m, "bdrp_drops_total{reason=\"duplicate\"}"));
    assertEquals(0, series(m, "bdrp_drops_total{reason=\"hop_limit\"}"));
    assertEquals(0, series(m, "bdrp_drops_total{reason=\"not_on_tree\"}"));
  }
}
