package io.bdrp.router.hosts;

import io.bdrp.router.security.ClientAuth;

/**
 * A host attached through one of the router's front ends (the bdrp client protocol, MQTT), as the
 * table of hosts ({@link Hosts}) and the predicate path ({@link PredicateChanges}) see it: its
 * number, its name, its permissions and user, and what its predicate changes are counted by. Each
 * front end subclasses it with its own {@link Hosts.Output}, so deliveries leave in the host's
 * protocol while limits, permissions and the router's aggregate are kept in one place.
 *
 * <p>Owned by the router's event loop, but for {@link #filters}, which the control thread keeps.
 */
public abstract class AttachedHost implements Hosts.Output {
  /** The host's number in the table of hosts. */
  public final int id;

  /** The name the host gave (a client name, an MQTT client identifier). */
  public final String name;

  public final ClientAuth.Permissions permissions;

  /** The user whose sessions and filters are counted together, or null (anonymous). */
  public final String user;

  /** Filters of the predicate now set, as counted against the limits (on the control thread). */
  long filters;

  /** Predicate changes the session may still make now (a token bucket; on the loop). */
  double changeTokens;

  long changeTokensAt;

  /** Messages the host published (SEND, SEND_RELIABLE, MQTT PUBLISH) into the data plane. */
  private long published;

  private long sampledPublished;
  private long sampledDelivered;
  private long publishedPerSecond;
  private long deliveredPerSecond;

  /**
   * @param changesPerSecond the host's bucket of predicate changes, full at the start
   */
  protected AttachedHost(
      int id, String name, ClientAuth.Permissions permissions, int changesPerSecond) {
    this.id = id;
    this.name = name;
    this.permissions = permissions;
    this.user = userOf(permissions);
    this.changeTokens = changesPerSecond;
    this.changeTokensAt = System.nanoTime();
  }

  /**
   * Whether this is one of the router's own hosts (the store of retained messages) rather than a
   * client's session: its predicate changes are not counted among the clients'.
   */
  public boolean own() {
    return false;
  }

  /**
   * The front end's protocol as the admin API names it ({@code bdrp}, {@code mqtt3}, {@code
   * mqtt5}). The admin API lists sessions only ({@link Hosts#attach}); the router's own hosts keep
   * these defaults.
   */
  public String protocol() {
    return "internal";
  }

  /** Where the host's connection comes from, or null while it has none. */
  public java.net.SocketAddress remoteAddress() {
    return null;
  }

  /** Messages delivered to the host ({@code bdrp_host_delivered_total}). */
  public long delivered() {
    return 0;
  }

  /** Deliveries to the host dropped ({@code bdrp_host_dropped_total}). */
  public long dropped() {
    return 0;
  }

  /** Counts one message the host published into the data plane (on the loop). */
  public void published() {
    published++;
  }

  /** Messages the host published into the data plane (on the loop). */
  public long publishedCount() {
    return published;
  }

  /**
   * Keeps the rates per second of messages published and delivered since the last call, {@code
   * elapsedNanos} ago (the router calls it once a second on the loop).
   */
  public void sample(long elapsedNanos) {
    long d = delivered();
    publishedPerSecond =
        io.bdrp.router.links.Link.perSecond(published - sampledPublished, elapsedNanos);
    deliveredPerSecond = io.bdrp.router.links.Link.perSecond(d - sampledDelivered, elapsedNanos);
    sampledPublished = published;
    sampledDelivered = d;
  }

  /** Messages published per second over the last complete sample period. */
  public long publishedPerSecond() {
    return publishedPerSecond;
  }

  /** Messages delivered per second over the last complete sample period. */
  public long deliveredPerSecond() {
    return deliveredPerSecond;
  }

  /** The user whose sessions and filters are counted together, or null for an open router's. */
  public static String userOf(ClientAuth.Permissions permissions) {
    return permissions == ClientAuth.Permissions.ALL ? null : permissions.user();
  }
}
