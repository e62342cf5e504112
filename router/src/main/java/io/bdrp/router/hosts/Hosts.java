package io.bdrp.router.hosts;

import io.bdrp.router.MessageBytes;
import io.netty.util.collection.IntObjectHashMap;

/**
 * The hosts attached to this router, whatever front end they came through (the bdrp client protocol
 * is the first): numbered here, so that the data plane delivers to a number and each host writes
 * its deliveries in its own protocol.
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
  private int next = 1;

  /** A number for a new host, never given before in this process. */
  public int number() {
    return next++;
  }

  public void put(int number, Output host) {
    byNumber.put(number, host);
  }

  public void remove(int number) {
    byNumber.remove(number);
  }

  /** The host of that number, or null. */
  public Output get(int number) {
    return byNumber.get(number);
  }

  /** Hosts attached now. */
  public int size() {
    return byNumber.size();
  }
}
