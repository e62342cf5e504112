package io.bdrp.routing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BroadcastWindowTest {
  @Test
  void anIdIsTakenOncePerSourceInAnyOrderWithinTheWindow() {
    BroadcastWindow w = new BroadcastWindow(8);
    assertTrue(w.first(3, 100));
    assertTrue(w.first(3, 105));
    assertTrue(w.first(3, 101), "late but new");
    assertFalse(w.first(3, 100));
    assertFalse(w.first(3, 105));
    assertFalse(w.first(3, 101));
    assertTrue(w.first(4, 100), "another source's ids are its own");
    assertTrue(w.first(3, 104));
  }

  @Test
  void idsSkippedOverAreNotTakenForSeen() {
    BroadcastWindow w = new BroadcastWindow(8);
    assertTrue(w.first(1, 7));
    // Moving the window on by almost its size clears the bits of the ids it passes over, which
    // held ids a window earlier (7 + IDS lands on 7's bit).
    assertTrue(w.first(1, 7 + BroadcastWindow.IDS - 1));
    assertTrue(w.first(1, 7 + BroadcastWindow.IDS));
    assertFalse(w.first(1, 7 + BroadcastWindow.IDS));
    assertTrue(w.first(1, 108), "passed over, never seen");
  }

  @Test
  void aSourceThatRestartsItsIdsIsTakenAgain() {
    BroadcastWindow w = new BroadcastWindow(8);
    for (long id = 50_000; id < 50_010; id++) {
      assertTrue(w.first(2, id));
    }
    assertTrue(w.first(2, 0), "ids began anew");
    assertTrue(w.first(2, 1));
    assertFalse(w.first(2, 0));
    assertTrue(w.first(2, 50_005), "the old life's ids are far above: the window moves on");
  }
}
