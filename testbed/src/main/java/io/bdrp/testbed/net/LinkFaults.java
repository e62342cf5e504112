package io.bdrp.testbed.net;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * Faults of an emulated network's links, made and undone while routers run on it:
 *
 * <ul>
 *   <li><b>down</b>: one end of the link's veth pair is set down ({@code ip link set nJ down}); the
 *       other end loses its carrier, and both lose the link's route, so the kernel refuses to send
 *       on it, but nothing tells the sockets over it: each router notices only when the other's
 *       hellos stop.
 *   <li><b>silent</b>: every packet arriving on either end is dropped by an {@code iptables-legacy
 *       -I INPUT -i nJ -j DROP} rule in that end's namespace; the interfaces stay up and senders
 *       see no error, as on a wide-area path that goes black. (This kernel has no netem and no tc
 *       drop action, so the drop is a filter rule.)
 * </ul>
 *
 * Every command runs in the link's namespaces only, so nothing outside the network is touched;
 * deleting the namespaces ({@link Emulator#down}) also removes the rules.
 */
public final class LinkFaults {
  private LinkFaults() {}

  private static String nsA(Emulator.Network n, Emulator.LinkNet l) {
    return Emulator.namespace(n.name(), l.a());
  }

  private static String nsB(Emulator.Network n, Emulator.LinkNet l) {
    return Emulator.namespace(n.name(), l.b());
  }

  /** The link between routers {@code x} and {@code y}, in either order. */
  public static Emulator.LinkNet link(Emulator.Network n, int x, int y) {
    for (Emulator.LinkNet l : n.links()) {
      if (l.a() == Math.min(x, y) && l.b() == Math.max(x, y)) {
        return l;
      }
    }
    throw new IllegalArgumentException("no link between routers " + x + " and " + y);
  }

  /**
   * Sets router {@code l.a()}'s end of the link down; returns the command, for the record. The
   * other end loses its carrier.
   */
  public static String down(Emulator.Network n, Emulator.LinkNet l) throws IOException {
    Shell.run("ip", "-n", nsA(n, l), "link", "set", l.devA(), "down");
    return "ip -n " + nsA(n, l) + " link set " + l.devA() + " down";
  }

  /** Sets the end {@link #down} took down up again; returns the command. */
  public static String up(Emulator.Network n, Emulator.LinkNet l) throws IOException {
    Shell.run("ip", "-n", nsA(n, l), "link", "set", l.devA(), "up");
    return "ip -n " + nsA(n, l) + " link set " + l.devA() + " up";
  }

  /** Why links cannot be silenced here ({@code iptables-legacy} missing), or empty. */
  public static Optional<String> silenceUnavailable() {
    return Shell.onPath("iptables-legacy")
        ? Optional.empty()
        : Optional.of(
            "a silent link needs iptables-legacy (this kernel has no netem and no tc drop"
                + " action); Debian: apt-get install iptables");
  }

  private static List<String> rule(String ns, String op, String dev) {
    return List.of(
        "ip", "netns", "exec", ns, "iptables-legacy", "-w", op, "INPUT", "-i", dev, "-j", "DROP");
  }

  /**
   * Drops every packet arriving at either end of the link; returns the commands. Senders on both
   * sides see no error.
   */
  public static String silence(Emulator.Network n, Emulator.LinkNet l) throws IOException {
    Shell.run(rule(nsA(n, l), "-I", l.devA()));
    try {
      Shell.run(rule(nsB(n, l), "-I", l.devB()));
    } catch (IOException e) {
      Shell.run(rule(nsA(n, l), "-D", l.devA()));
      throw e;
    }
    return String.join(" ", rule(nsA(n, l), "-I", l.devA()))
        + "; "
        + String.join(" ", rule(nsB(n, l), "-I", l.devB()));
  }

  /** Removes the rules {@link #silence} added; returns the commands. */
  public static String restore(Emulator.Network n, Emulator.LinkNet l) throws IOException {
    IOException first = null;
    for (List<String> cmd :
        List.of(rule(nsA(n, l), "-D", l.devA()), rule(nsB(n, l), "-D", l.devB()))) {
      try {
        Shell.run(cmd);
      } catch (IOException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
    return String.join(" ", rule(nsA(n, l), "-D", l.devA()))
        + "; "
        + String.join(" ", rule(nsB(n, l), "-D", l.devB()));
  }
}
