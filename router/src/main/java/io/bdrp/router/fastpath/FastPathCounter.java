package io.bdrp.router.fastpath;

import java.util.Locale;

/**
 * What the TC program did with each DATA datagram for this router's UDP port, in the order of
 * {@code enum fp_counter} in {@code sidecar/src/main/c/fastpath.h}. "Up" means passed to the
 * router's socket as it came, for the JVM to handle.
 */
public enum FastPathCounter {
  /** Split in the kernel: every copy sent, the original dropped; the JVM never saw it. */
  SPLIT,
  /** Split in the kernel, and one copy up with D = {this router} for local delivery. */
  SPLIT_LOCAL,
  /**
   * Up: the router has not written a table yet; with auth, the table names no session for the
   * sender or for a next hop, or, for the sender, an older session than the kernel has seen (a
   * table being replaced).
   */
  UP_NO_TABLE,
  /** Up: a header the program does not vouch for (the router checks and counts it). */
  UP_MALFORMED,
  /**
   * Up: a broadcast whose source has no tree parent in the table (no route, a parent or a child
   * past the table's neighbours), or that the kernel's duplicate window could not record.
   */
  UP_BROADCAST,
  /** Up: hop limit 1 or less (the router counts the drop and delivers locally). */
  UP_HOP_LIMIT,
  /** Up: not from a neighbour's address and UDP port. */
  UP_UNKNOWN_SENDER,
  /** Up: D wider than the table, or naming routers past maxRouters. */
  UP_WIDE,
  /** Up: some copy goes to a neighbour whose DATA goes over TCP. */
  UP_TCP_HOP,
  /** Up: D names a router without a route. */
  UP_NO_ROUTE,
  /** Up: the router has no Ethernet address for a next hop yet (not in the ARP table). */
  UP_NO_NEIGH,
  /** Up: D is this router alone, nothing to forward. */
  UP_LOCAL_ONLY,
  /** A copy the kernel could not send, or a rewrite that failed. */
  REDIRECT_FAILED,
  /** Up: IP options or fragments. */
  UP_FRAGMENT,
  /** Up: the source is this router or has no route (the router refuses and counts it). */
  UP_SOURCE,
  /** Dropped (auth): the tag does not verify under the sending neighbour's key. */
  DROP_MAC,
  /** Dropped (auth): the tag verified but its seq was seen already or is below the window. */
  DROP_REPLAY,
  /** Up (auth): longer than {@link FastPathTable#MAX_AUTH_BYTES}, for the router to verify. */
  UP_LARGE,
  /**
   * Up: D is a list of router numbers (a copy in a large network whose part of D is a few routers;
   * see {@code DataHeader}), which the router splits.
   */
  UP_D_LIST,
  /**
   * A broadcast from its source's tree parent, handled in the kernel: a copy to each tree child
   * (none at a leaf), the original dropped, as the router has no local hosts.
   */
  BCAST,
  /**
   * As {@link #BCAST}, and one copy up marked for local delivery only ({@code
   * DataHeader.FLAG_LOCAL}): the router matches it against its hosts and forwards nothing.
   */
  BCAST_LOCAL,
  /**
   * Up: a broadcast not from its source's tree parent as the table has it (the router takes it from
   * a former parent, or counts it {@code not_on_tree}).
   */
  UP_BCAST_OFF_TREE,
  /**
   * Up: a broadcast of a source whose tree parent changed within the grace (the table names former
   * parents), recorded in the kernel's window first: the router forwards it.
   */
  UP_BCAST_GRACE,
  /**
   * Dropped: a broadcast the kernel's window holds (taken already from a tree parent), as the
   * router drops a {@code duplicate}.
   */
  DROP_BCAST_DUPLICATE,
  /** Dropped: a datagram with the local-delivery flag, which only the kernel sets. */
  DROP_LOCAL_FLAG;

  /** The label value in the metrics: the name in lower case. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
