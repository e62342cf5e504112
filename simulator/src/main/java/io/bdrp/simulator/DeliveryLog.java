package io.bdrp.simulator;

import io.bdrp.encoding.Message;
import io.bdrp.routing.DataPlane;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What happened to every message published in a simulation: the destination set computed at the
 * ingress router, the copies sent, the routers that received a copy and those that delivered
 * locally, the hosts it was delivered to (with counts, so duplicates show), and drops by reason as
 * the routers' {@link DataPlane}s report them.
 *
 * <p>Owned by the thread that runs the {@link Simulator}.
 */
public final class DeliveryLog {
  /** One published message. */
  public static final class Entry {
    private final long id;
    private final int ingress;
    private final Message message;
    private final long[] destinations;
    private final int destinationCount;
    private final boolean broadcast;
    private final Map<Integer, Integer> hostDeliveries = new TreeMap<>();
    private final Map<Integer, Integer> routerCopies = new TreeMap<>();
    private final Map<Integer, Integer> localDecisions = new TreeMap<>();
    private final Map<DataPlane.Drop, Integer> drops = new EnumMap<>(DataPlane.Drop.class);
    private int copies;

    Entry(
        long id,
        int ingress,
        Message message,
        long[] destinations,
        int destinationCount,
        boolean broadcast) {
      this.id = id;
      this.ingress = ingress;
      this.message = message;
      this.destinations = destinations;
      this.destinationCount = destinationCount;
      this.broadcast = broadcast;
    }

    public long id() {
      return id;
    }

    public int ingress() {
      return ingress;
    }

    public Message message() {
      return message;
    }

    /** Whether the ingress router put {@code router} in D. */
    public boolean inDestinations(int router) {
      return router >= 0
          && (router >>> 6) < destinations.length
          && (destinations[router >>> 6] & (1L << router)) != 0;
    }

    /** |D| at the ingress router. */
    public int destinationCount() {
      return destinationCount;
    }

    /** Whether the ingress router sent it as a broadcast. */
    public boolean broadcast() {
      return broadcast;
    }

    /** Deliveries per host (host → count). */
    public Map<Integer, Integer> hostDeliveries() {
      return Collections.unmodifiableMap(hostDeliveries);
    }

    /** Copies received per router (router → count); the ingress router's own is not counted. */
    public Map<Integer, Integer> routerCopies() {
      return Collections.unmodifiableMap(routerCopies);
    }

    /** Local deliveries decided per router (router → count), the ingress router included. */
    public Map<Integer, Integer> localDecisions() {
      return Collections.unmodifiableMap(localDecisions);
    }

    /**
     * Copies sent over links; one that a link refused (down, or towards a crashed router) is a
     * {@link DataPlane.Drop#LINK} drop instead.
     */
    public int copies() {
      return copies;
    }

    /** Drops for {@code why} over all routers, in the unit its {@link DataPlane.Drop} names. */
    public int drops(DataPlane.Drop why) {
      return drops.getOrDefault(why, 0);
    }

    /**
     * Destination routers that some router on the way had no route to ({@link
     * DataPlane.Drop#NO_ROUTE}).
     */
    public int unreachable() {
      return drops(DataPlane.Drop.NO_ROUTE);
    }
  }

  private final List<Entry> entries = new ArrayList<>();
  private final Map<Long, Entry> byId = new HashMap<>();

  void published(
      long id, int ingress, Message m, long[] destinations, int count, boolean broadcast) {
    Entry e = new Entry(id, ingress, m, destinations.clone(), count, broadcast);
    if (byId.putIfAbsent(id, e) != null) {
      throw new IllegalStateException("message id " + id + " published twice");
    }
    entries.add(e);
  }

  // A message forgotten by clear() may still be on its way: what happens to it is not recorded.

  void delivered(long id, int host, int router) {
    Entry e = byId.get(id);
    if (e != null) {
      e.hostDeliveries.merge(host, 1, Integer::sum);
    }
  }

  void received(long id, int router) {
    Entry e = byId.get(id);
    if (e != null) {
      e.routerCopies.merge(router, 1, Integer::sum);
    }
  }

  void localAt(long id, int router) {
    Entry e = byId.get(id);
    if (e != null) {
      e.localDecisions.merge(router, 1, Integer::sum);
    }
  }

  void copy(long id) {
    Entry e = byId.get(id);
    if (e != null) {
      e.copies++;
    }
  }

  void dropped(long id, DataPlane.Drop why, int count) {
    Entry e = byId.get(id);
    if (e != null) {
      e.drops.merge(why, count, Integer::sum);
    }
  }

  /** Every published message, in publishing order. */
  public List<Entry> entries() {
    return Collections.unmodifiableList(entries);
  }

  /** The entry of message {@code id}. */
  public Entry entry(long id) {
    Entry e = byId.get(id);
    if (e == null) {
      throw new IllegalArgumentException("no message " + id);
    }
    return e;
  }

  /**
   * Forgets every message (keeps memory flat over long runs); copies of them still in flight are
   * not recorded.
   */
  public void clear() {
    entries.clear();
    byId.clear();
  }
}
