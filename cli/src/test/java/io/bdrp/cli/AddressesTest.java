package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.router.config.ConfigAddress;
import io.bdrp.router.config.RouterConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command line reads an address as the router's configuration file does. */
class AddressesTest {
  @ParameterizedTest
  @CsvSource({"127.0.0.1:7400", "router-3.example:7500", "[::1]:7400", "::1:7400", "[fd00::4]:1"})
  void anOptionReadsAnAddressAsTheFileDoes(String text) {
    RouterConfig c = RouterConfig.parse("router: 1\nlisten: {clients: '" + text + "'}", "t");
    assertEquals(c.clientListen(), Addresses.parse("--router", text));
    assertEquals(ConfigAddress.parse(text, 0), Addresses.parse("--clients", text, 0));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "nope | --router: expected host:port, got 'nope'",
        "h:x | --router: port of 'h:x' is not a number",
        "h:0 | --router: port 0 outside 1..65535",
        "[::1]:70000 | --router: port 70000 outside 1..65535",
      })
  void aBadOptionIsNamedWithTheParsersReason(String text, String message) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Addresses.parse("--router", text));
    assertEquals(message, e.getMessage());
  }
}
