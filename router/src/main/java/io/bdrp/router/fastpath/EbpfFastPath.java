package io.bdrp.router.fastpath;

import io.bdrp.router.Capabilities;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * A router's kernel fast path: its TC ingress program loaded, attached to the interfaces of its UDP
 * links, fed with {@link FastPathTable}s. In the style of Netty's native transports, {@link
 * #isAvailable()} and {@link #unavailabilityCause()} say whether it can run in this process and, if
 * not, why (no Linux, library not built, no privileges, layout mismatch); {@link #open} can still
 * fail on a kernel that refuses the program, with the kernel's reason.
 *
 * <p>Filters are router {@code r}'s by their handle ({@code r + 1}, priority {@code 0xbd}), so a
 * router that starts removes what an earlier run of it left on an interface (after kill -9, the
 * filter keeps the program alive in the kernel), and several routers can share one interface.
 *
 * <p>Not thread-safe: the router's loop owns it.
 */
public final class EbpfFastPath implements AutoCloseable {
  private static final Throwable UNAVAILABILITY_CAUSE = check();

  private final int router;
  private long handle;
  private final Set<Integer> attached = new LinkedHashSet<>();

  private EbpfFastPath(int router, long handle) {
    this.router = router;
    this.handle = handle;
  }

  private static Throwable check() {
    Throwable t = EbpfNative.loadFailure();
    if (t != null) {
      return t;
    }
    String native_ = EbpfNative.layout();
    if (!native_.equals(FastPathTable.layout())) {
      return new IllegalStateException(
          "the sidecar library's table layout ("
              + native_
              + ") differs from the router's ("
              + FastPathTable.layout()
              + ")");
    }
    String caps = missingCapabilities();
    if (caps != null) {
      return new UnsupportedOperationException(caps);
    }
    return null;
  }

  /** Null when the process may load and attach TC programs; otherwise what it lacks. */
  private static String missingCapabilities() {
    long eff = Capabilities.effective();
    if (eff == -1) {
      return "cannot read the process's capabilities from /proc/self/status";
    }
    boolean netAdmin = (eff & (1L << Capabilities.NET_ADMIN)) != 0;
    boolean bpf =
        (eff & (1L << Capabilities.BPF)) != 0 || (eff & (1L << Capabilities.SYS_ADMIN)) != 0;
    if (netAdmin && bpf) {
      return null;
    }
    return "the process lacks "
        + (netAdmin ? "CAP_BPF" : bpf ? "CAP_NET_ADMIN" : "CAP_NET_ADMIN and CAP_BPF")
        + " (run the router as root, or grant them)";
  }

  /** Whether the fast path can be loaded in this process. */
  public static boolean isAvailable() {
    return UNAVAILABILITY_CAUSE == null;
  }

  /** Why the fast path cannot be loaded, or null when it can. */
  public static Throwable unavailabilityCause() {
    return UNAVAILABILITY_CAUSE;
  }

  /** The reason as one line, or null. */
  public static String unavailabilityReason() {
    Throwable t = UNAVAILABILITY_CAUSE;
    return t == null ? null : t.getMessage() != null ? t.getMessage() : t.toString();
  }

  /**
   * Loads router {@code router}'s program and maps; nothing is attached yet.
   *
   * @throws IOException when the kernel refuses them
   * @throws IllegalStateException when {@link #isAvailable()} is false
   */
  public static EbpfFastPath open(int router) throws IOException {
    if (UNAVAILABILITY_CAUSE != null) {
      throw new IllegalStateException(
          "the kernel fast path is unavailable: " + unavailabilityReason(), UNAVAILABILITY_CAUSE);
    }
    return new EbpfFastPath(router, EbpfNative.open(router));
  }

  /**
   * Removes router {@code router}'s filter from interface {@code ifindex} if one is there (left by
   * an earlier run); returns the id of the program it held, or 0.
   */
  public static int removeStale(int router, int ifindex) throws IOException {
    int id = EbpfNative.attachedProgram(router, ifindex);
    if (id != 0) {
      EbpfNative.detach(router, ifindex);
    }
    return id;
  }

  /**
   * Attaches the program at TC ingress of {@code ifindex}, once; true when it was attached now,
   * false when it was already.
   */
  public boolean attach(int ifindex) throws IOException {
    if (attached.contains(ifindex)) {
      return false;
    }
    EbpfNative.attach(handle(), ifindex);
    attached.add(ifindex);
    return true;
  }

  /** The kernel's id of this program. */
  public int programId() throws IOException {
    return EbpfNative.programId(handle());
  }

  /** Swaps in {@code table}, whole: a packet sees the old table or the new one, never a mix. */
  public void setTable(FastPathTable table) throws IOException {
    EbpfNative.setTable(handle(), table.bytes());
  }

  /** The counters, summed over CPUs, by {@link FastPathCounter} ordinal. */
  public long[] counters() throws IOException {
    return EbpfNative.counters(handle());
  }

  /**
   * Enters the broadcasts {@code (sources[i], ids[i])}, {@code i < n}, in the program's duplicate
   * window, as if it had taken them itself; returns how many it entered.
   */
  public int markBroadcasts(int[] sources, long[] ids, int n) throws IOException {
    return EbpfNative.markBroadcasts(handle(), sources, ids, n);
  }

  /** Copies sent in the kernel to each of {@code routers}. */
  public long[] forwarded(int[] routers) throws IOException {
    return EbpfNative.forwarded(handle(), routers);
  }

  /** Runs the program on one Ethernet frame ({@link EbpfNative#testRun}). */
  public long testRun(byte[] packet, int ifindex, byte[] out) throws IOException {
    return EbpfNative.testRun(handle(), packet, ifindex, out);
  }

  private long handle() {
    if (handle == 0) {
      throw new IllegalStateException("the fast path of router " + router + " is closed");
    }
    return handle;
  }

  /**
   * Detaches the program from every interface and unloads it. Detaching goes on past a failure (an
   * interface deleted already); the first failure is thrown at the end.
   */
  @Override
  public void close() throws IOException {
    if (handle == 0) {
      return;
    }
    IOException first = null;
    for (int ifindex : attached) {
      try {
        EbpfNative.detach(router, ifindex);
      } catch (IOException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    attached.clear();
    EbpfNative.close(handle);
    handle = 0;
    if (first != null) {
      throw first;
    }
  }
}
