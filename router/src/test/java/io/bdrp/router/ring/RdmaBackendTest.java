package io.bdrp.router.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RDMA backend: built wherever libibverbs' headers are (CI installs them), and, where the
 * kernel lists an RDMA device, libibverbs sees the same devices. Without a device, opening a ring
 * fails with an IOException saying so, and a neighbour's endpoint bytes are checked all the same;
 * the verbs data path (connect, write, completions) runs only where there is a device, and is
 * skipped elsewhere, saying so.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmaBackendTest {
  private static final int CAPACITY = 1 << 14;

  @Test
  void theBackendIsBuiltWhereLibibverbsIs() {
    Assumptions.assumeTrue(
        Files.exists(Path.of("/usr/include/infiniband/verbs.h")),
        "libibverbs' headers are not installed (Debian: libibverbs-dev): the backend is not built");
    assertNull(
        RdmaNative.libraryUnavailable(),
        () -> "libbdrp_rdma did not load: " + RdmaNative.libraryUnavailable());
  }

  private static void assumeBuilt() {
    Assumptions.assumeTrue(
        RdmaNative.libraryUnavailable() == null,
        () -> "the RDMA backend is not built here: " + RdmaNative.libraryUnavailable());
  }

  private static void assumeDevice() {
    assumeBuilt();
    Assumptions.assumeFalse(
        RdmaNative.sysfsDevices().isEmpty(),
        "no RDMA device here (/sys/class/infiniband is empty or missing): the verbs data path"
            + " cannot run");
  }

  @Test
  void libibverbsSeesTheDevicesTheKernelLists() throws Exception {
    assumeDevice();
    assertEquals(RdmaNative.sysfsDevices(), RdmaNative.deviceNames().stream().sorted().toList());
  }

  @Test
  void withoutADeviceOpeningARingFailsWithAnIOExceptionSayingSo() {
    assumeBuilt();
    Assumptions.assumeTrue(
        RdmaNative.sysfsDevices().isEmpty(), "an RDMA device is here: opening one succeeds");
    for (String device : new String[] {null, "mlx5_0"}) {
      IOException e =
          assertThrows(
              IOException.class, () -> new VerbsRingBackend(device).open(CAPACITY, CAPACITY / 8));
      assertTrue(
          e.getMessage()
                  .contains("RDMA ring on " + (device == null ? "the first" : "device " + device))
              && e.getMessage().contains("no such RDMA device"),
          e.getMessage());
    }
  }

  /** A well-formed endpoint of two ends with rings of {@code capacity} bytes. */
  private static byte[] endpoint(long capacity) {
    ByteBuffer b = ByteBuffer.allocate(VerbsRingBackend.ENDPOINT_BYTES);
    b.put((byte) VerbsRingBackend.VERSION);
    for (int end = 0; end < 2; end++) {
      b.putShort((short) 1) // lid
          .put(new byte[16]) // gid
          .putInt(0x000abc + end) // qpn
          .putInt(0x123456) // psn
          .putLong(0x7f0000001000L) // address
          .putInt(0x55) // rkey
          .putLong(capacity);
    }
    return b.array();
  }

  private static void refusedNaming(byte[] theirs, String why) {
    IOException e = assertThrows(IOException.class, () -> VerbsRingBackend.parse(theirs, CAPACITY));
    assertTrue(
        e.getMessage().startsWith("rdma endpoint from the neighbour refused")
            && e.getMessage().contains(why),
        () -> "\"" + e.getMessage() + "\" does not say " + why);
  }

  @Test
  void aNeighboursEndpointIsCheckedBeforeAnyVerbsCall() throws Exception {
    byte[] good = endpoint(CAPACITY);
    byte[][] ends = VerbsRingBackend.parse(good, CAPACITY);
    assertEquals(RdmaNative.ENDPOINT_BYTES, ends[0].length);
    assertEquals(0xabc, ByteBuffer.wrap(ends[0]).getInt(18), "network byte order");
    assertEquals(0xabd, ByteBuffer.wrap(ends[1]).getInt(18));

    refusedNaming(new byte[0], "0 bytes, not 93");
    refusedNaming(java.util.Arrays.copyOf(good, 94), "94 bytes, not 93");
    byte[] v = good.clone();
    v[0] = 9;
    refusedNaming(v, "version 9");
    refusedNaming(endpoint(CAPACITY * 2L), "ring of 32768 bytes, this router's is 16384");
    byte[] wide = good.clone();
    ByteBuffer.wrap(wide).putInt(1 + 18, 0x01000000);
    refusedNaming(wide, "wider than 24 bits");
  }

  /**
   * Over a device only: two ends exchange endpoints as bytes, connect, and frames written with RDMA
   * WRITE arrive in the reader's ring, whose completion channel wakes it.
   */
  @Test
  void overADeviceFramesWrittenArriveAndWakeTheReader() throws Exception {
    assumeDevice();
    VerbsRingBackend b = new VerbsRingBackend(null);
    try (RingBackend.LinkEnd one = b.open(CAPACITY, CAPACITY / 8);
        RingBackend.LinkEnd two = b.open(CAPACITY, CAPACITY / 8)) {
      RingBackend.Writer toTwo = one.connect(two.endpoint());
      two.connect(one.endpoint());
      assertFalse(two.reader().prepareSleep(0));
      ByteBuffer out = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
      out.putInt(5).put("hello".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).flip();
      assertEquals(out.remaining(), toTwo.writeBatch(out, 0, out.remaining()));
      assertTrue(two.reader().awaitWake(20_000), "the write's completion woke the reader");
      two.reader().rearm();
      ByteBuffer in = ByteBuffer.allocateDirect(CAPACITY);
      assertEquals(9, two.reader().read(in));
      assertEquals(out.getInt(0), in.order(ByteOrder.LITTLE_ENDIAN).getInt(0));
    }
  }
}
