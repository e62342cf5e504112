package io.bdrp.testbed.chaos;

import io.bdrp.workload.WorkloadSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A fault campaign: the network, the workload that flows throughout, the faults in order and the
 * length of each phase around every fault (warm-up, fault, recovery).
 *
 * @param name the scenario's name
 * @param topology a bundled topology name or a BRITE file
 * @param linkRateBits every link's rate, bits/s each direction
 * @param clientsPerRouter workload clients attached to each router
 * @param rate messages/s each workload client publishes (Poisson)
 * @param workload predicates' and messages' generator settings
 * @param bodyBytes bytes of body in every workload message
 * @param faults the faults, in order
 * @param warmupSeconds traffic before each fault, with delivery expected exact
 * @param faultSeconds how long each fault lasts
 * @param recoverySeconds traffic after each heal
 * @param settleSeconds pause after the predicates are set, before traffic
 * @param helloMillis the routers' hello interval
 * @param deadMillis the routers' dead interval
 * @param churnCycles sessions of the churn fault
 * @param floodBytesPerSecond flood for the bad client of slow-consumer and never-reads
 * @param slowReadBytesPerSecond what the slow consumer reads
 * @param pingsPerSecond PINGs the never-reader writes
 * @param rssBoundMiB the bound every router's resident set must stay under
 * @param seed the workload's seed
 */
public record ChaosSpec(
    String name,
    String topology,
    long linkRateBits,
    int clientsPerRouter,
    double rate,
    WorkloadSpec workload,
    int bodyBytes,
    List<Fault> faults,
    int warmupSeconds,
    int faultSeconds,
    int recoverySeconds,
    int settleSeconds,
    long helloMillis,
    long deadMillis,
    int churnCycles,
    long floodBytesPerSecond,
    long slowReadBytesPerSecond,
    int pingsPerSecond,
    long rssBoundMiB,
    long seed) {
  public ChaosSpec {
    faults = List.copyOf(faults);
    if (clientsPerRouter < 1 || rate <= 0 || bodyBytes < 0) {
      throw new IllegalArgumentException(
          "a campaign needs clients, a positive rate and a non-negative body size");
    }
    if (warmupSeconds < 1 || faultSeconds < 1 || recoverySeconds < 1 || settleSeconds < 0) {
      throw new IllegalArgumentException("warm-up, fault and recovery phases must be >= 1 s");
    }
    if (helloMillis < 1 || deadMillis <= helloMillis) {
      throw new IllegalArgumentException(
          "the dead interval (" + deadMillis + " ms) must exceed the hello interval");
    }
    if (faults.isEmpty()) {
      throw new IllegalArgumentException("no fault to run");
    }
  }

  private static final long MBYTE_PER_S = 8_000_000L;

  /** The routers' routing entries for this campaign's timers. */
  public Map<String, Object> routing() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("helloIntervalMs", helloMillis);
    m.put("deadIntervalMs", deadMillis);
    return m;
  }

  /** Built-in campaigns by name; the first is the default. */
  public static Map<String, ChaosSpec> all() {
    Map<String, ChaosSpec> m = new LinkedHashMap<>();
    List<Fault> every = List.of(Fault.values());
    // 8 routers and 13 links (diameter 3), three clients per router: every fault, 45 s each.
    m.put(
        "mesh-8",
        new ChaosSpec(
            "mesh-8",
            "routers-8",
            MBYTE_PER_S,
            3,
            8,
            WorkloadSpec.PAPER,
            100,
            every,
            10,
            15,
            20,
            5,
            1000,
            3500,
            300,
            2_000_000,
            16_000,
            20_000,
            768,
            12));
    // The square with a diagonal: a quick campaign (what the test runs, with fewer faults).
    m.put(
        "square-4",
        new ChaosSpec(
            "square-4",
            "routers-4",
            MBYTE_PER_S,
            2,
            8,
            WorkloadSpec.PAPER,
            100,
            every,
            4,
            6,
            12,
            3,
            1000,
            3500,
            200,
            2_000_000,
            16_000,
            20_000,
            768,
            4));
    return m;
  }
}
