package io.bdrp.router.fastpath;

import io.bdrp.router.sidecar.SidecarLibrary;
import java.io.IOException;

/**
 * The JNI entry points of the sidecar library ({@code sidecar/src/main/c/fastpath_jni.c}), loaded
 * once per JVM by {@link SidecarLibrary}. Every native method throws {@link IOException} with the
 * operation and the kernel's reason when it fails.
 */
public final class EbpfNative {
  private static final Throwable LOAD_FAILURE =
      SidecarLibrary.load("libbdrp_fastpath", "UNAVAILABLE");

  private EbpfNative() {}

  /** Why the library did not load, or null when it did. */
  static Throwable loadFailure() {
    return LOAD_FAILURE;
  }

  /** Sizes and limits as the C side sees them, to check {@link FastPathTable}'s layout. */
  static native String layout();

  /** Loads the program and its maps into the kernel; a handle for the other calls. */
  static native long open(int router) throws IOException;

  /**
   * Attaches the program at TC ingress of interface {@code ifindex} (creating its clsact qdisc if
   * needed), as router {@code router}'s filter, replacing an earlier one of the same router.
   */
  static native void attach(long handle, int ifindex) throws IOException;

  /** Removes router {@code router}'s filter from {@code ifindex}; whether there was one. */
  static native boolean detach(int router, int ifindex) throws IOException;

  /** The id of the program in router {@code router}'s filter on {@code ifindex}, or 0: none. */
  static native int attachedProgram(int router, int ifindex) throws IOException;

  /** The kernel's id of the loaded program (as bpftool shows it). */
  static native int programId(long handle) throws IOException;

  /** Swaps in a new table ({@link FastPathTable#bytes()}), whole. */
  static native void setTable(long handle, byte[] table) throws IOException;

  /** The per-CPU counters summed, by {@link FastPathCounter} ordinal. */
  static native long[] counters(long handle) throws IOException;

  /** Copies sent in the kernel to each of {@code routers}, summed over CPUs. */
  static native long[] forwarded(long handle, int[] routers) throws IOException;

  /**
   * Enters the broadcasts {@code (sources[i], ids[i])}, {@code i < n}, that the router took itself
   * in the program's duplicate window; returns how many it entered.
   */
  static native int markBroadcasts(long handle, int[] sources, long[] ids, int n)
      throws IOException;

  /**
   * Runs the program once on {@code packet} (an Ethernet frame) as if it arrived on {@code ifindex}
   * ({@code BPF_PROG_TEST_RUN}); the packet as the program left it goes to {@code out}. Clones it
   * redirects are sent for real. Returns the program's verdict in the high 32 bits and the length
   * written to {@code out} in the low ones.
   */
  static native long testRun(long handle, byte[] packet, int ifindex, byte[] out)
      throws IOException;

  /** Unloads the program and its maps (its filters must be detached first). */
  static native void close(long handle);

  /**
   * Moves the calling thread into the network namespace at {@code path} (such as {@code
   * /var/run/netns/NAME}); sockets it opens afterwards live there. For tests and tools.
   */
  public static native void enterNetworkNamespace(String path) throws IOException;
}
