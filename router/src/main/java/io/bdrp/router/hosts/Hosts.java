package io.bdrp.router.hosts;

import io.bdrp.router.MessageBytes;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The hosts attached to this router, whatever front end they came through (the bdrp client protocol
 * is the first): numbered here, so that the data plane delivers to a number and each host writes
 * its deliveries in its own protocol.
 *
 * <p>It also counts the sessions of each named user, whatever front end they came through, so that
 * {@code limits.maxSessionsPerUser} bounds them together.
 *
 * <p>Owned by the router's event loop.
 */
public final class Hosts {
  /** A host as the data plane sees it. */
  public interface Output {
    /**
     * Writes one delivery of {@code message} in the host's protocol; false, counted on the host,
     * when it cannot take it now (its session gone or above its high water mark).
     */
    boolean deliver(long messageId, MessageBytes message);
  }

  private final IntObjectHashMap<Output> byNumber = new IntObjectHashMap<>();
  private final IntObjectHashMap<AttachedHost> sessions = new IntObjectHashMap<>(); // attach()ed
  private final java.util.Map<String, long[]> users = new java.util.HashMap<>();
  private int next = 1;
  private int attached;

  /** A number for a new host, never given before in this process. */
  public int number() {
    return next++;
  }

  /**
   * Puts a host that is not a session (an MQTT shared subscription group, the store of retained
   * messages) under its number: the data plane delivers to it, but it does not count among the
   * {@link #size} sessions.
   */
  public void put(int number, Output host) {
    byNumber.put(number, host);
  }

  public void remove(int number) {
    byNumber.remove(number);
  }

  /** Sessions of {@code user} attached now (0 for null, the anonymous user of an open router). */
  public long sessions(String user) {
    long[] u = user == null ? null : users.get(user);
    return u == null ? 0 : u[0];
  }

  /** Attaches {@code host} under its number, counted among its user's sessions. */
  public void attach(AttachedHost host) {
    if (host.user != null) {
      users.computeIfAbsent(host.user, k -> new long[1])[0]++;
    }
    byNumber.put(host.id, host);
    sessions.put(host.id, host);
    attached++;
  }

  /** Detaches a host that {@link #attach} attached. */
  public void detach(AttachedHost host) {
    if (byNumber.remove(host.id) != null) {
      attached--;
    }
    sessions.remove(host.id);
    long[] u = host.user == null ? null : users.get(host.user);
    if (u != null && --u[0] == 0) {
      users.remove(host.user);
    }
  }

  /** The host of that number, or null. */
  public Output get(int number) {
    return byNumber.get(number);
  }

  /**
   * At most {@code limit} of the sessions attached now, those with the lowest numbers above {@code
   * after}, in order of number: a page of the admin API's list of hosts. One pass over the sessions
   * and a sort of the numbers above {@code after}.
   */
  public List<AttachedHost> sessionsAfter(int after, int limit) {
    int[] ids = new int[sessions.size()];
    int n = 0;
    for (IntObjectMap.PrimitiveEntry<AttachedHost> e : sessions.entries()) {
      if (e.key() > after) {
        ids[n++] = e.key();
      }
    }
    Arrays.sort(ids, 0, n);
    List<AttachedHost> page = new ArrayList<>(Math.min(n, limit));
    for (int i = 0; i < n && i < limit; i++) {
      page.add(sessions.get(ids[i]));
    }
    return page;
  }

  /** Calls {@code f} with every session attached now, in no particular order. */
  public void forEachSession(java.util.function.Consumer<AttachedHost> f) {
    for (AttachedHost h : sessions.values()) {
      f.accept(h);
    }
  }

  /** Sessions attached now ({@link #attach}), the limit {@code limits.maxClients} bounds. */
  public int size() {
    return attached;
  }
}
