package io.bdrp.router.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every address field of the configuration file reads an address the one way. */
class ConfigAddressTest {
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "127.0.0.1:7400 | 127.0.0.1 | 7400",
        "router-3.example:7500 | router-3.example | 7500",
        "[::1]:7400 | ::1 | 7400",
        "[fd00::4]:0 | fd00::4 | 0",
        "::1:7400 | ::1 | 7400",
        "0.0.0.0:65535 | 0.0.0.0 | 65535",
      })
  void eachFormReadsTheSameInEveryField(String text, String host, int port) {
    InetSocketAddress a = ConfigAddress.parse(text, 0);
    assertEquals(host, a.getHostString());
    assertEquals(port, a.getPort());
    RouterConfig c =
        RouterConfig.parse(
            "router: 1\nlisten: {clients: '%s', routers: '%s', metrics: '%s', udp: '%s'}\nneighbours: [{router: 2, address: '%s'}]"
                .formatted(text, text, text, text, text),
            "t");
    assertEquals(a, c.clientListen());
    assertEquals(a, c.routerListen());
    assertEquals(a, c.metricsListen());
    assertEquals(a, c.udpListen());
    assertEquals(a, c.neighbours().get(0).address());
    assertEquals(a, ConfigAddress.parse(ConfigAddress.format(a), 0), "written as it reads");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "nope | expected host:port, got 'nope'",
        ":7400 | expected host:port, got ':7400'",
        "h: | expected host:port, got 'h:'",
        "h:74x0 | port of 'h:74x0' is not a number",
        "h:99999 | port 99999 outside 0..65535",
        "[::1]:-1 | port -1 outside 0..65535",
      })
  void aBadAddressIsRefusedAlikeInTheFileAndByTheParser(String text, String problem) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ConfigAddress.parse(text, 0));
    assertEquals(problem, e.getMessage());
    RouterConfig.ConfigException f =
        assertThrows(
            RouterConfig.ConfigException.class,
            () ->
                RouterConfig.parse(
                    "router: 1\nneighbours: [{router: 2, address: '" + text + "'}]", "t.yaml"));
    assertEquals("t.yaml: neighbours[0].address: " + problem, f.getMessage());
  }

  @ParameterizedTest
  @CsvSource({"h:0", "[::1]:0"})
  void aMinimumPortIsTheCallers(String text) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ConfigAddress.parse(text, 1));
    assertTrue(e.getMessage().endsWith("port 0 outside 1..65535"), e.getMessage());
  }
}
