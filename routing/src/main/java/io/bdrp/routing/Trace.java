package io.bdrp.routing;

import java.util.ArrayList;
import java.util.List;

/**
 * Message tracing in the data plane: a trace-only copy of a message is routed by {@link
 * DataPlane#trace} at the ingress and {@link DataPlane#traceReceive} at every other router, through
 * the same decisions as the message itself (the match of D, the partition by next hop or the
 * broadcast tree, the checks on packets from neighbours, the hop limit, the exact match against the
 * local hosts), but its copies go through a {@link Output} of their own, it is delivered to no
 * host, and nothing of it is counted among the data plane's messages, copies, deliveries or drops.
 * What the router did comes back as a {@link Step}, which the router turns into its report.
 *
 * <p>The best-effort path pays nothing for it: traces enter the data plane by their own methods,
 * never through {@link DataPlane#publish} or {@link DataPlane#receive}.
 */
public final class Trace {
  /** Most local hosts a step lists ({@link Step#matching} counts them all). */
  public static final int MAX_HOSTS = 16;

  private Trace() {}

  /**
   * Where the trace copies go: one per next hop (or tree child), as {@link DataPlane.Output#send}.
   *
   * @param <M> the message handle
   */
  @FunctionalInterface
  public interface Output<M> {
    /**
     * Sends one trace copy to neighbour {@code neighbour}; false if it was not queued.
     *
     * @param d the copy's part of D, or null for a broadcast; reused after the call returns
     */
    boolean send(int neighbour, int hopLimit, int source, long traceId, long[] d, M message);
  }

  /**
   * One copy sent on.
   *
   * @param neighbour the next hop
   * @param d its part of D (a copy of the words), or null for a broadcast
   * @param sent whether the output took it
   */
  public record Copy(int neighbour, long[] d, boolean sent) {}

  /**
   * Something that went nowhere.
   *
   * @param reason the data plane's reason
   * @param count how many, in the unit its {@link DataPlane.Drop} names
   * @param routers the routers concerned where known (routers of D without a route, the neighbour
   *     of a copy not taken, the source of a refused packet), ascending
   */
  public record Dropped(DataPlane.Drop reason, int count, int[] routers) {}

  /**
   * What this router did with a trace copy.
   *
   * @param traceId the trace's id (its message id, given by the ingress)
   * @param source the ingress router
   * @param from the neighbour it came from, -1 at the ingress
   * @param hopLimit its hop limit as it arrived (at the ingress: the one its copies start from)
   * @param broadcast whether it travels down the ingress's broadcast tree
   * @param destinations D as computed at the ingress (its own bit clear); null elsewhere
   * @param local whether the message was matched against this router's hosts
   * @param matching how many local hosts' predicates the message satisfies exactly
   * @param hosts the first of them, at most {@link #MAX_HOSTS}
   * @param copies the copies sent on
   * @param drops what went nowhere
   */
  public record Step(
      long traceId,
      int source,
      int from,
      int hopLimit,
      boolean broadcast,
      long[] destinations,
      boolean local,
      int matching,
      int[] hosts,
      List<Copy> copies,
      List<Dropped> drops) {
    /** Whether this is the ingress's step. */
    public boolean ingress() {
      return from < 0;
    }
  }

  /** A step being filled by the data plane. */
  static final class Builder {
    final long traceId;
    final int source;
    final int from;
    final int hopLimit;
    boolean broadcast;
    long[] destinations;
    boolean local;
    int matching;
    int[] hosts = new int[0];
    final List<Copy> copies = new ArrayList<>();
    final List<Dropped> drops = new ArrayList<>();

    Builder(long traceId, int source, int from, int hopLimit, boolean broadcast) {
      this.traceId = traceId;
      this.source = source;
      this.from = from;
      this.hopLimit = hopLimit;
      this.broadcast = broadcast;
    }

    /**
     * The first {@code n} of {@code all} as the matching hosts: at most {@link #MAX_HOSTS} kept.
     */
    void hosts(int[] all, int n) {
      matching = n;
      hosts = java.util.Arrays.copyOf(all, Math.min(n, MAX_HOSTS));
    }

    void drop(DataPlane.Drop why, int count, int... routers) {
      drops.add(new Dropped(why, count, routers));
    }

    Step build() {
      return new Step(
          traceId,
          source,
          from,
          hopLimit,
          broadcast,
          destinations,
          local,
          matching,
          hosts,
          List.copyOf(copies),
          List.copyOf(drops));
    }
  }
}
