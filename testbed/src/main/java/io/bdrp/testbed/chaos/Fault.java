package io.bdrp.testbed.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The faults of a campaign, in the order they run by default. */
public enum Fault {
  /** One end of a link on a cycle set down, then up. */
  LINK_DOWN("link-down", "a link on a cycle: one veth end set down, then up"),
  /** Every packet on a link on a cycle dropped both ways, interfaces up, then restored. */
  SILENT_LINK("silent-link", "a link on a cycle drops every packet both ways, then carries again"),
  /** Links cut (silently) so that the network splits in two halves, then restored. */
  PARTITION("partition", "links cut silently so that the network splits in two, then restored"),
  /** A transit router killed with SIGKILL, then started again with the same configuration. */
  KILL_RESTART("kill-restart", "a transit router killed (kill -9), then restarted (new epoch)"),
  /** Hundreds of sessions opened, given a predicate and reset, against one router. */
  CLIENT_CHURN("client-churn", "hundreds of connect / set-predicate / reset cycles at one router"),
  /** A subscriber to everything that reads very slowly, beside a flood for it. */
  SLOW_CONSUMER("slow-consumer", "a subscriber to all traffic reading a few kB/s, with a flood"),
  /** A subscriber to everything that never reads and floods PINGs. */
  NEVER_READS("never-reads", "a subscriber to all traffic that never reads and floods PINGs");

  private final String id;
  private final String description;

  Fault(String id, String description) {
    this.id = id;
    this.description = description;
  }

  /** The name on the command line and in reports. */
  public String id() {
    return id;
  }

  /** One line on what the fault does. */
  public String description() {
    return description;
  }

  /** Whether the fault needs {@code iptables-legacy}. */
  public boolean needsIptables() {
    return this == SILENT_LINK || this == PARTITION;
  }

  /** Whether the fault is a misbehaving client, whose own missing messages are expected. */
  public boolean isBadClient() {
    return this == SLOW_CONSUMER || this == NEVER_READS;
  }

  /** The fault named {@code id}. */
  public static Fault of(String id) {
    for (Fault f : values()) {
      if (f.id.equals(id.strip().toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException("unknown fault '" + id + "' (faults: " + ids() + ")");
  }

  /** Every fault's name, comma-separated, in order. */
  public static String ids() {
    List<String> out = new ArrayList<>();
    for (Fault f : values()) {
      out.add(f.id);
    }
    return String.join(", ", out);
  }
}
