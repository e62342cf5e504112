package io.bdrp.router.fastpath;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The JNI entry points of the sidecar library ({@code sidecar/src/main/c/fastpath_jni.c}), and its
 * loading: the library is a resource of the sidecar jar ({@code META-INF/native/}), copied to a
 * temporary file and loaded once per JVM. Every native method throws {@link IOException} with the
 * operation and the kernel's reason when it fails.
 */
public final class EbpfNative {
  private static final String RESOURCE = "META-INF/native/libbdrp_fastpath.so";
  private static final String UNAVAILABLE = "META-INF/native/UNAVAILABLE";
  private static final Throwable LOAD_FAILURE = load();

  private EbpfNative() {}

  private static Throwable load() {
    if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
      return new UnsupportedOperationException("the kernel fast path runs on Linux only");
    }
    if (!"amd64".equals(System.getProperty("os.arch"))
        && !"x86_64".equals(System.getProperty("os.arch"))) {
      return new UnsupportedOperationException(
          "the sidecar library is built for x86_64, not " + System.getProperty("os.arch"));
    }
    ClassLoader cl = EbpfNative.class.getClassLoader();
    try (InputStream lib = cl.getResourceAsStream(RESOURCE)) {
      if (lib == null) {
        try (InputStream why = cl.getResourceAsStream(UNAVAILABLE)) {
          return new UnsupportedOperationException(
              why != null
                  ? new String(why.readAllBytes(), StandardCharsets.UTF_8).strip()
                  : "the sidecar library is not on the class path (" + RESOURCE + ")");
        }
      }
      Path tmp = Files.createTempFile("libbdrp_fastpath", ".so");
      try {
        Files.copy(lib, tmp, StandardCopyOption.REPLACE_EXISTING);
        System.load(tmp.toAbsolutePath().toString());
      } finally {
        Files.deleteIfExists(tmp); // mapped already: the file is not needed any more
      }
      return null;
    } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
      return e;
    }
  }

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
