package io.bdrp.testbed.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.topologies.Bundled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plans, delays and state files, without making a network. */
class EmulatorPlanTest {
  @Test
  void delaysParseInMicrosecondsAndPrintBack() {
    assertEquals(20_000, Emulator.parseDelay("20ms"));
    assertEquals(500, Emulator.parseDelay("500us"));
    assertEquals(1_500, Emulator.parseDelay("1.5ms"));
    assertEquals(2_000_000, Emulator.parseDelay("2 s"));
    assertEquals(0, Emulator.parseDelay("0"));
    assertEquals(Emulator.DELAY_FROM_FILE, Emulator.parseDelay("brite"));
    assertEquals("20ms", Emulator.delay(20_000));
    assertEquals("1768us", Emulator.delay(1_768));
    var noUnit = assertThrows(IllegalArgumentException.class, () -> Emulator.parseDelay("20"));
    assertTrue(noUnit.getMessage().contains("'20'"), noUnit.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Emulator.parseDelay("11s"));
  }

  @Test
  void aPlanDelaysEveryLinkUniformlyOrByTheFile() {
    var t = Bundled.load("routers-4");
    for (Emulator.LinkNet l : Emulator.plan(t, "p", 8_000_000).links()) {
      assertEquals(0, l.delayMicros(), "no delay unless asked");
    }
    for (Emulator.LinkNet l : Emulator.plan(t, "p", 8_000_000, 20_000).links()) {
      assertEquals(20_000, l.delayMicros());
    }
    // routers-4: sides of 100 km (0.3336 ms), the diagonal 0-2 of 141 km (0.4717 ms).
    for (Emulator.LinkNet l : Emulator.plan(t, "p", 0, Emulator.DELAY_FROM_FILE).links()) {
      assertEquals(l.a() == 0 && l.b() == 2 ? 472 : 334, l.delayMicros(), l.toString());
    }
  }

  @Test
  void stateFilesCarryTheDelayAndTheDelayersAndOldOnesReadAsUndelayed() {
    var n = Emulator.plan(Bundled.load("routers-2"), "p", 8_000_000, 20_000);
    var delayers =
        List.of(new Delayer.Running("bdrp-p-r0", 123), new Delayer.Running("bdrp-p-r1", 124));
    List<String> lines =
        Emulator.format(n, delayers, new Emulator.Owner(4321, 1_700_000_000_000L)).lines().toList();
    assertTrue(
        lines.contains("link 0 1 n1 n0 10.100.0.1 10.100.0.2 8000000 20000"), lines::toString);
    assertEquals(n, Emulator.parse("p", lines));
    assertEquals(delayers, Emulator.parseDelayers(lines));
    assertEquals(new Emulator.Owner(4321, 1_700_000_000_000L), Emulator.parseOwner(lines));
    assertNull(Emulator.parseOwner(Emulator.format(n, delayers, null).lines().toList()));
    // Written before links had delays: seven fields.
    List<String> old = lines.stream().map(l -> l.replace(" 8000000 20000", " 8000000")).toList();
    assertEquals(0, Emulator.parse("p", old).links().get(0).delayMicros());
    assertEquals(8_000_000, Emulator.parse("p", old).links().get(0).rateBits());
  }
}
