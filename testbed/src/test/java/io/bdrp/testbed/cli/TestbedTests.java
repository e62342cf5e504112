package io.bdrp.testbed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.bdrp.router.fastpath.EbpfFastPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/** What the testbed's tests share: their preconditions, and reading a run's accounting. */
final class TestbedTests {
  private TestbedTests() {}

  /**
   * Aborts the test unless it runs as root with the kernel fast path available; on CI (where the
   * toolchain is installed and the tests run as root) fails instead, so that the fast path is
   * tested on every CI run.
   */
  static void requireFastPath() {
    String why =
        !"root".equals(System.getProperty("user.name"))
            ? "network namespaces need root"
            : EbpfFastPath.isAvailable() ? null : EbpfFastPath.unavailabilityReason();
    if (why != null) {
      if (System.getenv("CI") != null) {
        fail("the kernel fast path cannot be tested: " + why);
      }
      Assumptions.abort(why);
    }
  }

  /** A run's totals over its seconds: messages sent, deliveries expected and made. */
  record Totals(long input, long ideal, long output) {}

  /**
   * The totals of a system's {@code seconds.csv}, asserting that no second had an undelivered,
   * duplicate or spurious delivery; {@code context} is shown with a failure.
   */
  static Totals exactSeconds(Path csv, String label, Supplier<String> context) throws IOException {
    for (String[] f : seconds(csv)) {
      assertEquals(
          "0", f[4], () -> label + ": undelivered in second " + f[0] + ":\n" + context.get());
      assertEquals("0", f[5], () -> label + ": duplicates in second " + f[0]);
      assertEquals("0", f[6], () -> label + ": spurious in second " + f[0]);
    }
    return totals(csv);
  }

  /** The totals of a system's {@code seconds.csv}. */
  static Totals totals(Path csv) throws IOException {
    long input = 0;
    long ideal = 0;
    long output = 0;
    for (String[] f : seconds(csv)) {
      input += Long.parseLong(f[1]);
      ideal += Long.parseLong(f[2]);
      output += Long.parseLong(f[3]);
    }
    return new Totals(input, ideal, output);
  }

  private static List<String[]> seconds(Path csv) throws IOException {
    List<String> lines = Files.readAllLines(csv);
    return lines.subList(1, lines.size()).stream().map(l -> l.split(",")).toList();
  }
}
