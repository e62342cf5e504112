package io.bdrp.testbed.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The oracle's account of a fault, on a ledger filled by hand. */
class AccountingTest {
  private static final long S = 1_000_000_000L;
  private static final long DEAD = 3_500_000_000L;
  private static final long HELLO = 1_000_000_000L;

  /** Four clients: 0 and 2 on router 0, 1 and 3 on router 1. */
  private static final int[] ROUTER_OF = {0, 1, 0, 1};

  private static long[] to(int... clients) {
    long[] w = {0};
    for (int c : clients) {
      w[0] |= 1L << c;
    }
    return w;
  }

  @Test
  void aKillSeparatesTheHostsOfTheDeadRouterFromTheRestOfTheLoss() {
    Ledger l = new Ledger(4, System.nanoTime());
    Sessions s = new Sessions(4);
    // Router 1 is killed at 10 s and serves again at 20 s; its client 1 is back at 21 s.
    s.down(1, 10 * S + 5_000_000);
    s.up(1, 21 * S);
    var w = new Accounting.Window(Fault.KILL_RESTART, 5 * S, 10 * S, 20 * S, 30 * S, 1, null);
    int warm = l.add(0, to(0, 1), 6 * S);
    l.received(warm, 0);
    l.received(warm, 1);
    l.add(0, to(1), 10 * S + 500_000_000); // for the dead router's host: expected loss
    l.add(2, to(0), 11 * S); // between two live hosts, inside the dead interval: loss
    l.add(0, to(1), 21 * S + 500_000_000); // host back, its predicate not yet in force: expected
    l.add(
        0, to(1), 22 * S); // host back a hello interval ago: loss, in the dead interval of the heal
    l.add(2, to(0), 24 * S + 600_000_000); // live hosts, long after the heal: loss outside
    int dup = l.add(1, to(0, 2), 24 * S + 700_000_000);
    l.received(dup, 0);
    l.received(dup, 2);
    l.received(dup, 0); // a duplicate
    int spur = l.add(0, to(2), 24 * S);
    l.received(spur, 2);
    l.received(spur, 3); // client 3's predicate does not match: spurious
    int fine = l.add(2, to(1), 25 * S);
    l.received(fine, 1);

    Accounting.Result a = Accounting.account(l, ROUTER_OF, s, w, DEAD, HELLO);
    assertEquals(9, a.messages());
    assertEquals(11, a.expected());
    assertEquals(5, a.missing());
    assertEquals(2, a.expectedLoss());
    assertEquals(3, a.loss());
    assertEquals(1, a.lossOutsideWindow());
    assertEquals(1, a.duplicates());
    assertEquals(1, a.spurious());
    assertEquals(0.5, a.missingFrom(), 1e-9);
    assertEquals(14.6, a.missingTo(), 1e-9);
    assertEquals(1.0, a.lossFrom(), 1e-9);
    assertEquals(14.6, a.lossTo(), 1e-9);
    assertEquals(5.0, a.exactAfterHeal(), 1e-9, "from the message after the spurious one");
    assertEquals(15.0, a.exactAfterInject(), 1e-9);
    assertFalse(a.exactThroughout());
    assertEquals(9, java.util.Arrays.stream(a.perSecond()[0]).sum(), "input per second");
    assertEquals(1, a.perSecond()[4][5], "the expected loss in second 5 of the window");

    List<Accounting.Anomaly> an = Accounting.anomalies(l, ROUTER_OF, s, w, DEAD, HELLO, 100);
    assertEquals(
        List.of(
            Accounting.Kind.EXPECTED_LOSS,
            Accounting.Kind.LOSS,
            Accounting.Kind.EXPECTED_LOSS,
            Accounting.Kind.LOSS,
            Accounting.Kind.LOSS,
            Accounting.Kind.DUPLICATE,
            Accounting.Kind.SPURIOUS),
        an.stream().map(Accounting.Anomaly::kind).toList());
    assertEquals(3, an.get(6).to(), "the spurious delivery went to client 3");
    assertEquals(0, an.get(5).to(), "the duplicate went to client 0");
  }

  @Test
  void aPartitionExcusesOnlyDeliveriesAcrossItWhileItStands() {
    Ledger l = new Ledger(4, System.nanoTime());
    Sessions s = new Sessions(4);
    boolean[] side = {true, false};
    var w = new Accounting.Window(Fault.PARTITION, 0, 10 * S, 20 * S, 30 * S, -1, side);
    l.add(0, to(1), 12 * S); // across, while cut: expected loss
    l.add(0, to(2), 13 * S); // same side: loss
    l.add(0, to(1), 21 * S); // across, after the heal: loss, within a dead interval of it
    l.add(0, to(1), 25 * S); // across, a dead and a hello interval after the heal: outside
    int last = l.add(0, to(2), 26 * S);
    l.received(last, 2);

    Accounting.Result a = Accounting.account(l, ROUTER_OF, s, w, DEAD, HELLO);
    assertEquals(4, a.missing());
    assertEquals(1, a.expectedLoss());
    assertEquals(3, a.loss());
    assertEquals(1, a.lossOutsideWindow(), "the loss 5 s after the heal");
    assertEquals(6.0, a.exactAfterHeal(), 1e-9);
  }

  @Test
  void deliveryIsNeverExactAgainIfTheLastMessageMissesAndExactThroughoutIfNoneDoes() {
    Ledger l = new Ledger(2, System.nanoTime());
    Sessions s = new Sessions(2);
    var w = new Accounting.Window(Fault.LINK_DOWN, 0, 10 * S, 20 * S, 30 * S, -1, null);
    int ok = l.add(0, to(1), 11 * S);
    l.received(ok, 1);
    l.add(0, to(1), 29 * S);
    Accounting.Result never = Accounting.account(l, new int[] {0, 1}, s, w, DEAD, HELLO);
    assertFalse(never.exactAgain());
    assertTrue(Double.isNaN(never.exactAfterHeal()));

    Ledger clean = new Ledger(2, System.nanoTime());
    int m = clean.add(0, to(1), 11 * S);
    clean.received(m, 1);
    Accounting.Result throughout = Accounting.account(clean, new int[] {0, 1}, s, w, DEAD, HELLO);
    assertTrue(throughout.exactThroughout());
    assertEquals(-10.0, throughout.exactAfterHeal(), 1e-9, "exact from the injection on");
    assertEquals(0, throughout.missing());
  }

  @Test
  void messagesOutsideTheWindowAreNotCounted() {
    Ledger l = new Ledger(2, System.nanoTime());
    Sessions s = new Sessions(2);
    l.add(0, to(1), 1 * S); // before the window, missing
    int in = l.add(0, to(1), 12 * S);
    l.received(in, 1);
    l.add(0, to(1), 31 * S); // after it, missing
    var w = new Accounting.Window(Fault.SILENT_LINK, 5 * S, 10 * S, 20 * S, 30 * S, -1, null);
    Accounting.Result a = Accounting.account(l, new int[] {0, 1}, s, w, DEAD, HELLO);
    assertEquals(1, a.messages());
    assertEquals(0, a.missing());
    assertTrue(a.exactThroughout());
  }

  @Test
  void reliableMessagesExcuseOnlyTheKilledRoutersOwnHostsAndCountDisorderAndConfirmation() {
    Ledger l = new Ledger(4, System.nanoTime());
    Sessions s = new Sessions(4);
    // Router 1 is killed at 10 s; its clients 1 and 3 are attached again (elsewhere) at 12 s.
    s.down(1, 10 * S + 5_000_000);
    s.down(3, 10 * S + 5_000_000);
    s.up(1, 12 * S);
    s.up(3, 12 * S);
    var w = new Accounting.Window(Fault.KILL_RESTART, 5 * S, 10 * S, 20 * S, 30 * S, 1, null, true);
    int toDead = l.add(0, to(1), 10 * S + 500_000_000); // to a host of the killed router: excused
    l.confirmed(toDead, 11 * S);
    int fromDead = l.add(3, to(0), 10 * S + 600_000_000); // from one: resent, so a loss if missing
    l.confirmed(fromDead, 13 * S);
    int first = l.add(2, to(0), 14 * S);
    int second = l.add(2, to(0), 14 * S + 1);
    l.received(second, 0);
    l.received(first, 0); // after the later message of the same sender: out of order
    l.confirmed(first, 14 * S + 2_000_000);
    l.confirmed(second, 14 * S + 3_000_000);
    int given = l.add(0, to(2), 15 * S);
    l.received(given, 2);
    l.unreached(given);
    int open = l.add(0, to(2), 16 * S); // neither confirmed nor reported: unconfirmed
    l.received(open, 2);

    Accounting.Result a = Accounting.account(l, ROUTER_OF, s, w, DEAD, HELLO);
    assertEquals(2, a.missing());
    assertEquals(1, a.expectedLoss(), "only the killed router's host, before it was back");
    assertEquals(1, a.loss(), "the dead ingress's publisher sends again: nothing excused");
    assertEquals(1, a.outOfOrder());
    assertEquals(1, a.unreached());
    assertEquals(1, a.unconfirmed());
    assertEquals(2.4, a.maxConfirmDelay(), 1e-9, "the longest from send to confirmation");
    assertTrue(
        Accounting.anomalies(l, ROUTER_OF, s, w, DEAD, HELLO, 100).stream()
            .anyMatch(x -> x.kind() == Accounting.Kind.OUT_OF_ORDER && x.message() == first));

    var bestEffort =
        new Accounting.Window(Fault.KILL_RESTART, 5 * S, 10 * S, 20 * S, 30 * S, 1, null);
    Accounting.Result b = Accounting.account(l, ROUTER_OF, s, bestEffort, DEAD, HELLO);
    assertEquals(2, b.expectedLoss(), "best effort excuses the killed router's senders too");
    assertEquals(0, b.unconfirmed(), "confirmation is not counted for best effort");
  }
}
