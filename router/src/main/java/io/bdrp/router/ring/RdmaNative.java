package io.bdrp.router.ring;

import io.bdrp.router.sidecar.SidecarLibrary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The RDMA backend of the ring ({@code sidecar/src/main/c/rdma.c}, built against libibverbs) as far
 * as the router uses it: whether it can run here. It needs the library (built where libibverbs'
 * headers were) and an RDMA device ({@code /sys/class/infiniband}).
 */
public final class RdmaNative {
  private static final Throwable LOAD_FAILURE =
      SidecarLibrary.load("libbdrp_rdma", "RDMA_UNAVAILABLE");

  private RdmaNative() {}

  /** The RDMA devices libibverbs lists, by name. */
  private static native String devices() throws IOException;

  /** Why the library did not load, or null when it did. */
  public static Throwable libraryUnavailable() {
    return LOAD_FAILURE;
  }

  /** The RDMA devices here, by name (empty: none); from libibverbs. */
  public static List<String> deviceNames() throws IOException {
    if (LOAD_FAILURE != null) {
      throw new IOException("the RDMA backend is not available: " + LOAD_FAILURE.getMessage());
    }
    String d = devices();
    return d.isEmpty() ? List.of() : Arrays.asList(d.split(","));
  }

  /**
   * The devices the kernel lists in {@code /sys/class/infiniband} (empty: none, or no such dir).
   */
  public static List<String> sysfsDevices() {
    Path dir = Path.of("/sys/class/infiniband");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /** Why RDMA links cannot run here, or null when a device and the library are both there. */
  public static String whyNot() {
    if (LOAD_FAILURE != null) {
      return LOAD_FAILURE.getMessage();
    }
    if (sysfsDevices().isEmpty()) {
      return "no RDMA device (/sys/class/infiniband is empty or missing)";
    }
    return null;
  }
}
