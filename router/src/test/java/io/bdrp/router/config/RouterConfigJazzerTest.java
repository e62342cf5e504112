package io.bdrp.router.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.routing.RoutingConfig;
import io.bdrp.transport.Frames;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Coverage-guided fuzz target (Jazzer) for the YAML loader of {@link RouterConfig}. Without {@code
 * JAZZER_FUZZ} it runs as a plain JUnit test over the committed corpus in {@code
 * src/test/resources/io/bdrp/router/RouterConfigJazzerTestInputs/routerConfig/}; {@code
 * scripts/fuzz} runs it in fuzzing mode (see {@code docs/fuzzing.md}).
 *
 * <p>The input is the file's text in UTF-8. The loader may only refuse it with a {@link
 * RouterConfig.ConfigException} whose message starts with the file's name; anything else is a
 * finding. A configuration it accepts must satisfy every documented bound (checked here again, with
 * exact arithmetic), and written back as YAML it must load to an equal configuration.
 */
class RouterConfigJazzerTest {
  private static final String SOURCE = "fuzz.yaml";

  @FuzzTest(maxDuration = "")
  void routerConfig(byte[] input) {
    String yaml = new String(input, StandardCharsets.UTF_8);
    RouterConfig c;
    try {
      c = RouterConfig.parse(yaml, SOURCE);
    } catch (RouterConfig.ConfigException e) {
      assertTrue(e.getMessage().startsWith(SOURCE + ": "), e::getMessage);
      assertTrue(e.getMessage().length() > SOURCE.length() + 2, e::getMessage);
      return;
    }
    checkBounds(c);
    String written = yaml(c);
    assertEquals(c, RouterConfig.parse(written, "written.yaml"), written);
  }

  private static void checkBounds(RouterConfig c) {
    RoutingConfig r = c.routing();
    assertTrue(r.maxRouters() >= 1 && r.maxRouters() <= RoutingConfig.MAX_ROUTERS);
    assertTrue(c.router() >= 0 && c.router() < r.maxRouters(), "router " + c.router());
    assertTrue(c.epoch() >= 1);
    assertNotNull(c.clientListen());
    assertNotNull(c.routerListen());
    Set<Integer> seen = new HashSet<>();
    for (RouterConfig.Neighbour n : c.neighbours()) {
      assertTrue(n.router() >= 0 && n.router() < r.maxRouters() && n.router() != c.router());
      assertTrue(seen.add(n.router()), "neighbour listed twice");
      assertTrue(n.cost() >= 1 && n.cost() <= 0xFFFE);
    }
    assertTrue(exceedsTwice(r.deadIntervalMs(), r.helloIntervalMs()), r::toString);
    assertTrue(exceedsTwice(r.routeExpiryMs(), r.updateIntervalMs()), r::toString);
    assertTrue(r.sourceGcMs() > r.routeExpiryMs());
    assertTrue(r.helloIntervalMs() > 0 && r.updateIntervalMs() > 0 && r.predicateExpiryMs() > 0);
    assertTrue(r.hopLimit() >= 1 && r.hopLimit() <= 255);
    assertTrue(r.seqnoRequestHops() >= 1 && r.seqnoRequestHops() <= 255);
    assertTrue(r.broadcastFraction() > 0);
    BloomParameters b = c.bloom();
    assertTrue(BloomParameters.bitsProblem(b.bits()) == null);
    assertTrue(BloomParameters.hashesProblem(b.hashes()) == null);
    RouterLimits l = c.limits();
    assertTrue(l.maxFrameBytes() >= 1024 && l.maxFrameBytes() <= 64 << 20);
    assertTrue(l.linkLowWaterBytes() >= 0 && l.linkLowWaterBytes() <= l.linkHighWaterBytes());
    assertTrue(l.hostLowWaterBytes() >= 0 && l.hostLowWaterBytes() <= l.hostHighWaterBytes());
    assertTrue(l.maxClients() >= 1 && l.maxDatagramBytes() >= 64 && l.maxDatagramBytes() <= 65_507);
    if (c.routerToken() != null) {
      int bytes = c.routerToken().getBytes(StandardCharsets.UTF_8).length;
      assertTrue(bytes >= 1 && bytes <= Frames.MAX_TOKEN_BYTES);
    }
  }

  /** Whether {@code a > 2 * b}, without overflow. */
  private static boolean exceedsTwice(long a, long b) {
    return BigInteger.valueOf(a).compareTo(BigInteger.valueOf(b).shiftLeft(1)) > 0;
  }

  /** {@code c} as the YAML the loader reads, every field written out. */
  static String yaml(RouterConfig c) {
    StringBuilder y = new StringBuilder();
    y.append("router: ").append(c.router()).append('\n');
    y.append("epoch: ").append(c.epoch()).append('\n');
    y.append("listen:\n");
    address(y, "  clients", c.clientListen());
    address(y, "  routers", c.routerListen());
    address(y, "  metrics", c.metricsListen());
    address(y, "  udp", c.udpListen());
    y.append("neighbours:").append(c.neighbours().isEmpty() ? " []\n" : "\n");
    for (RouterConfig.Neighbour n : c.neighbours()) {
      y.append("  - router: ").append(n.router()).append('\n');
      address(y, "    address", n.address());
      y.append("    cost: ").append(n.cost()).append('\n');
      y.append("    transport: ")
          .append(n.transport().name().toLowerCase(Locale.ROOT))
          .append('\n');
    }
    RoutingConfig r = c.routing();
    y.append("routing:\n");
    y.append("  helloIntervalMs: ").append(r.helloIntervalMs()).append('\n');
    y.append("  deadIntervalMs: ").append(r.deadIntervalMs()).append('\n');
    y.append("  updateIntervalMs: ").append(r.updateIntervalMs()).append('\n');
    y.append("  routeExpiryMs: ").append(r.routeExpiryMs()).append('\n');
    y.append("  sourceGcMs: ").append(r.sourceGcMs()).append('\n');
    y.append("  seqnoRequestHops: ").append(r.seqnoRequestHops()).append('\n');
    y.append("  predicateExpiryMs: ").append(r.predicateExpiryMs()).append('\n');
    y.append("  hopLimit: ").append(r.hopLimit()).append('\n');
    double f = r.broadcastFraction();
    y.append("  broadcastFraction: ")
        .append(Double.isInfinite(f) ? ".inf" : new java.math.BigDecimal(f).toPlainString())
        .append('\n');
    y.append("  maxRouters: ").append(r.maxRouters()).append('\n');
    y.append("bloom: {bits: ")
        .append(c.bloom().bits())
        .append(", hashes: ")
        .append(c.bloom().hashes())
        .append("}\n");
    RouterLimits l = c.limits();
    y.append("limits:\n");
    y.append("  maxFrameBytes: ").append(l.maxFrameBytes()).append('\n');
    y.append("  linkHighWaterBytes: ").append(l.linkHighWaterBytes()).append('\n');
    y.append("  linkLowWaterBytes: ").append(l.linkLowWaterBytes()).append('\n');
    y.append("  hostHighWaterBytes: ").append(l.hostHighWaterBytes()).append('\n');
    y.append("  hostLowWaterBytes: ").append(l.hostLowWaterBytes()).append('\n');
    y.append("  maxClients: ").append(l.maxClients()).append('\n');
    y.append("  maxDatagramBytes: ").append(l.maxDatagramBytes()).append('\n');
    y.append("  udpReceiveBufferBytes: ").append(l.udpReceiveBufferBytes()).append('\n');
    y.append("  udpSendBufferBytes: ").append(l.udpSendBufferBytes()).append('\n');
    if (c.routerToken() != null) {
      y.append("auth:\n  routerToken: ").append(quoted(c.routerToken())).append('\n');
    }
    return y.toString();
  }

  private static void address(StringBuilder y, String key, InetSocketAddress a) {
    if (a != null) {
      // Always in brackets: the loader takes one pair off the host, whatever it holds.
      y.append(key).append(": ").append(quoted("[" + a.getHostString() + "]:" + a.getPort()));
      y.append('\n');
    }
  }

  /** A YAML double-quoted scalar: every character outside printable ASCII as an escape. */
  private static String quoted(String s) {
    StringBuilder q = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') {
        q.append('\\').append(ch);
      } else if (ch >= 0x20 && ch < 0x7F) {
        q.append(ch);
      } else {
        q.append(String.format("\\u%04x", (int) ch));
      }
    }
    return q.append('"').toString();
  }
}
