package io.bdrp.router.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The RDMA backend: built wherever libibverbs' headers are (CI installs them), and, where the
 * kernel lists an RDMA device, libibverbs sees the same devices. Without a device the second part
 * is skipped, saying so.
 */
class RdmaBackendTest {
  @Test
  void theBackendIsBuiltWhereLibibverbsIs() {
    Assumptions.assumeTrue(
        Files.exists(Path.of("/usr/include/infiniband/verbs.h")),
        "libibverbs' headers are not installed (Debian: libibverbs-dev): the backend is not built");
    assertNull(
        RdmaNative.libraryUnavailable(),
        () -> "libbdrp_rdma did not load: " + RdmaNative.libraryUnavailable());
  }

  @Test
  void libibverbsSeesTheDevicesTheKernelLists() throws Exception {
    Assumptions.assumeTrue(
        RdmaNative.libraryUnavailable() == null,
        () -> "the RDMA backend is not built here: " + RdmaNative.libraryUnavailable());
    Assumptions.assumeFalse(
        RdmaNative.sysfsDevices().isEmpty(),
        "no RDMA device here (/sys/class/infiniband is empty or missing): the verbs data path"
            + " cannot run");
    assertEquals(RdmaNative.sysfsDevices(), RdmaNative.deviceNames().stream().sorted().toList());
  }
}
