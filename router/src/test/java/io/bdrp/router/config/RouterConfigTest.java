package io.bdrp.router.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.router.security.ClientAuth;
import io.bdrp.routing.RoutingConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RouterConfigTest {
  @Test
  void theDocumentedExampleIsValid() throws IOException {
    RouterConfig c = RouterConfig.load(Path.of("../docs/router-example.yaml"));
    assertEquals(3, c.router());
    assertEquals(7400, c.clientListen().getPort());
    assertEquals("0.0.0.0", c.routerListen().getHostString());
    assertEquals(9400, c.metricsListen().getPort());
    assertEquals(2, c.neighbours().size());
    assertEquals(RouterConfig.LinkTransport.TCP, c.neighbours().get(0).transport());
    assertEquals(
        new RouterConfig.Neighbour(
            4, c.neighbours().get(1).address(), 3, RouterConfig.LinkTransport.UDP),
        c.neighbours().get(1));
    assertTrue(c.usesUdp());
    assertNull(c.udpListen());
    assertEquals(c.routerListen(), c.effectiveUdpListen());
    assertEquals("10.0.0.4", c.neighbours().get(1).address().getHostString());
    assertEquals(RoutingConfig.DEFAULT, c.routing());
    assertEquals(BloomParameters.DEFAULT, c.bloom());
    assertEquals(RouterLimits.DEFAULT, c.limits());
    assertEquals("change-me", c.routerToken());
    assertEquals(RouterConfig.FastPath.JVM, c.fastPath());
    assertEquals(io.bdrp.transport.UdpProtection.MAC, c.udpProtection(), "the default");
    assertEquals(1, c.clientAuth().users().size());
    assertEquals(
        "alice",
        c.clientAuth()
            .authenticate(
                "example-only-not-a-secret".getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .user());
    assertNull(c.clientAuth().authenticate(new byte[0]), "no anonymous clients");
  }

  @Test
  void theLocalExampleServesClientsOnLoopbackWithoutCredentials() throws Exception {
    // README.md and docs/client.md start their clients against it.
    RouterConfig c = RouterConfig.load(Path.of("../docs/router-local.yaml"));
    assertEquals("127.0.0.1", c.clientListen().getHostString());
    assertEquals(7400, c.clientListen().getPort());
    assertTrue(c.clientAuth().open(), "no client credentials needed");
    assertEquals(List.of(), c.neighbours());
  }

  @Test
  void withoutClientUsersEveryClientIsServed() {
    assertTrue(RouterConfig.parse("router: 1", "t").clientAuth().open());
    assertEquals(
        ClientAuth.Permissions.ALL,
        RouterConfig.parse("router: 1", "t").clientAuth().authenticate(new byte[0]));
  }

  @Test
  void theFastPathIsChosenInTheFile() {
    assertEquals(RouterConfig.FastPath.JVM, RouterConfig.parse("router: 1", "t").fastPath());
    assertEquals(
        io.bdrp.transport.UdpProtection.ENCRYPT,
        RouterConfig.parse("router: 1\nauth: {udp: Encrypt}", "t").udpProtection());
    assertEquals(
        io.bdrp.transport.UdpProtection.NONE,
        RouterConfig.parse("router: 1\nauth: {udp: none}", "t").udpProtection());
    assertEquals(
        RouterConfig.FastPath.EBPF,
        RouterConfig.parse("router: 1\nfastPath: eBPF", "t").fastPath());
  }

  @Test
  void onlyTheRouterNumberIsRequired() {
    RouterConfig c = RouterConfig.parse("router: 0\n", "t");
    assertTrue(c.neighbours().isEmpty());
    assertNull(c.metricsListen());
    assertNull(c.routerToken());
    assertTrue(c.epoch() > 0);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "router: -1 | router: must be in 0..4095, got -1",
        "router: x | router: expected an integer",
        "router: 18446744073709551617 | router: must be in 0..4095, got 18446744073709551617",
        "'router: 1\nrouting: {helloIntervalMs: 18446744073709551617}' | routing.helloIntervalMs: must be in 1..9223372036854775807, got 18446744073709551617",
        "'router: 1\nrouting: {helloIntervalMs: 4611686018427387904, deadIntervalMs: 10}' | routing: deadIntervalMs (10) must exceed two hello intervals",
        "routr: 1 | routr: unknown field",
        "'router: 1\nlisten: {clients: nope}' | listen.clients: expected host:port, got 'nope'",
        "'router: 1\nlisten: {clients: \"h:99999\"}' | listen.clients: port 99999 outside",
        "'router: 1\nneighbours: [{router: 1}]' | neighbours[0].router: is this router's own number",
        "'router: 1\nneighbours: [{router: 2}, {router: 2}]' | neighbours[1].router: router 2 is listed twice",
        "'router: 1\nneighbours: [{router: 2, cost: 0}]' | neighbours[0].cost: must be in 1..65534",
        "'router: 1\nneighbours: [{router: 2, weight: 1}]' | neighbours[0].weight: unknown field",
        "'router: 1\nneighbours: [{router: 2, transport: sctp}]' | neighbours[0].transport: expected tcp, udp, shm or rdma, got \"sctp\"",
        "'router: 1\nlimits: {maxDatagramBytes: 70000}' | limits.maxDatagramBytes: must be in 64..65507",
        "'router: 1\nlimits: {ringBytes: 5000}' | limits.ringBytes: must be a power of two, got 5000",
        "'router: 1\nlimits: {ringBytes: 1024}' | limits.ringBytes: must be in 4096..1073741824",
        "'router: 1\nlimits: {ringBytes: 8192, ringWatermarkBytes: 9000}' | limits.ringWatermarkBytes: must be in 0..8192",
        "'router: 1\nrouting: {broadcastFraction: 1.5}' | routing.broadcastFraction: expected a number above 0 and at most 1 (1: never broadcast), got 1.5",
        "'router: 1\nrouting: {broadcastFraction: 0}' | routing.broadcastFraction: expected a number above 0 and at most 1",
        "'router: 1\nlisten: {udp: nope}' | listen.udp: expected host:port, got 'nope'",
        "'router: 1\nrouting: {helloIntervalMs: 1000, deadIntervalMs: 1500}' | routing: deadIntervalMs (1500) must exceed two hello intervals",
        "'router: 1\nbloom: {bits: 32, hashes: 2}' | bloom.bits: must be in 64..8192",
        "'router: 1\nlimits: {linkHighWaterBytes: 2048, linkLowWaterBytes: 4096}' | limits.linkLowWaterBytes: must be in 0..2048",
        "'- 1\n- 2' | expected a mapping at the top level",
        "'router: [1' | not valid YAML",
        "'router: 1\nfastPath: xdp' | fastPath: expected jvm or ebpf, got \"xdp\"",
        "'router: 1\nauth: {udp: sign}' | auth.udp: expected mac, encrypt or none, got \"sign\"",
        "'router: 1\nauth: {clients: {users: [{name: a, token: plain}]}}' | auth.clients.users[0].token: expected sha256:SALT:HASH (make one with: bdrp auth token --user a)",
        "'router: 1\nauth: {clients: {users: [{name: a, token: x, subscribe: \"x >\"}]}}' | auth.clients.users[0].subscribe:",
        "'router: 1\nauth: {clients: {users: [{name: a, token: x, role: admin}]}}' | auth.clients.users[0].role: unknown field",
        "'router: 1\nauth: {clients: {anonymous: maybe}}' | auth.clients.anonymous: expected true, false or a map",
        "'router: 1\nauth: {clients: {users: [{name: c}]}}' | auth.clients.users[0].token: user 'c' has no token, and without tls.clientCa",
      })
  void errorsNameTheField(String yaml, String expected) {
    RouterConfig.ConfigException e =
        assertThrows(RouterConfig.ConfigException.class, () -> RouterConfig.parse(yaml, "t.yaml"));
    assertTrue(
        e.getMessage().startsWith("t.yaml: ") && e.getMessage().contains(expected), e.getMessage());
  }

  @Test
  void theReliableRetentionIsSetInTheLimitsAndCheckedThere() {
    RouterConfig c =
        RouterConfig.parse(
            "router: 1\nlimits: {reliableRetentionMessages: 5, reliableRetentionBytes: 4096,"
                + " reliableRetentionMs: 2000}",
            "t");
    io.bdrp.routing.Reliable.Config r =
        c.limits().hosts().reliable(io.bdrp.routing.Reliable.Config.DEFAULT);
    assertEquals(5, r.retentionMessages());
    assertEquals(4096, r.retentionBytes());
    assertEquals(2000, r.retentionMillis());
    assertEquals(io.bdrp.routing.Reliable.Config.DEFAULT.resendMillis(), r.resendMillis());
    RouterConfig.ConfigException e =
        assertThrows(
            RouterConfig.ConfigException.class,
            () -> RouterConfig.parse("router: 1\nlimits: {reliableRetentionMs: 10}", "t.yaml"));
    assertTrue(e.getMessage().contains("limits.reliableRetentionMs"), e.getMessage());
  }

  @Test
  void aTokenLongerThanAHelloCarriesIsRefused() {
    String yaml = "router: 1\nauth: {routerToken: \"" + "é".repeat(513) + "\"}";
    RouterConfig.ConfigException e =
        assertThrows(RouterConfig.ConfigException.class, () -> RouterConfig.parse(yaml, "t.yaml"));
    assertTrue(e.getMessage().contains("auth.routerToken: is 1026 bytes of UTF-8"), e.getMessage());
    assertEquals(
        1024,
        RouterConfig.parse("router: 1\nauth: {routerToken: " + "x".repeat(1024) + "}", "t")
            .routerToken()
            .length());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "'router: 1\nlimits: {maxFrameBytes: 12}' | t.yaml: limits.maxFrameBytes: must be in 1024..67108864, got 12",
        "'router: 1\nlimits: {maxFrameBytes: \"12\"}' | t.yaml: limits.maxFrameBytes: expected an integer, got \"12\"",
        "'router: 1\nneighbours: [{router: 2}, {router: 3, cost: null}]' | t.yaml: neighbours[1].cost: expected an integer, got null",
        "'router: 1\nneighbours: [{router: 2, weight: 1}]' | t.yaml: neighbours[0].weight: unknown field (known: address, admin, cost, router, transport)",
        "'router: 1\nauth: {clients: {users: [{name: a, subscribe: 5}]}}' | t.yaml: auth.clients.users[0].subscribe: expected a string, got 5",
        "'router: 1\nauth: {clients: {anonymous: {publish: x, mode: 1}}}' | t.yaml: auth.clients.anonymous.mode: unknown field (known: publish, subscribe)",
        "'router: 1\nrouting: {acceptMatchAll: 1}' | t.yaml: routing.acceptMatchAll: expected true or false, got 1",
        "'router: 1\nlisten: {udp: [1]}' | t.yaml: listen.udp: expected a string, got a list",
        "'router: 1\ntls: {metrics: 1}' | t.yaml: tls.metrics: expected true or false, got 1",
      })
  void anErrorNamesTheWholePathOfANestedField(String yaml, String message) {
    RouterConfig.ConfigException e =
        assertThrows(RouterConfig.ConfigException.class, () -> RouterConfig.parse(yaml, "t.yaml"));
    assertEquals(message, e.getMessage());
  }

  @Test
  void aConfigurationWrittenOutReadsBackEqual() {
    RouterConfig c =
        RouterConfig.parse(
            String.join(
                "\n",
                "router: 7",
                "epoch: 1234",
                "listen: {clients: '[::1]:7401', routers: '0.0.0.0:7501', metrics: 'm.example:9400'}",
                "neighbours:",
                "  - {router: 2, address: '[fd00::2]:7500', cost: 4, transport: udp}",
                "  - {router: 3, transport: shm}",
                "  - {router: 4, address: '10.0.0.4:7500'}",
                "routing: {helloIntervalMs: 500, deadIntervalMs: 1600, maxRouters: 64}",
                "bloom: {bits: 512, hashes: 3}",
                "limits: {maxFrameBytes: 65536, linkHighWaterBytes: 1048576, maxDatagramBytes: 1400}",
                "auth: {routerToken: \"s\u00e9cret\"}"),
            "t");
    String written = RouterConfigJazzerTest.yaml(c);
    assertEquals(c, RouterConfig.parse(written, "written.yaml"), written);
  }
}
