package io.bdrp.testbed.wan;

import io.bdrp.workload.WorkloadSpec;

/**
 * A testbed experiment: a topology emulated at a link rate, clients spread over its routers, each
 * with a paper-workload predicate and publishing as a Poisson source whose rate goes linearly from
 * {@code startRate} to {@code endRate} messages/s over {@code seconds} (equal rates: constant).
 *
 * @param topology a bundled topology name or a BRITE file
 * @param linkRateBits every link's rate, bits/s each direction
 * @param clients clients, client j attached to router j mod n
 * @param workload the predicates' and messages' generator settings
 * @param settleSeconds pause after the predicates are set, before traffic
 * @param graceSeconds wait after traffic for messages still in flight
 * @param bodyBytes bytes of opaque body in every message
 */
public record Scenario(
    String name,
    String topology,
    long linkRateBits,
    int clients,
    WorkloadSpec workload,
    double startRate,
    double endRate,
    int seconds,
    int settleSeconds,
    int graceSeconds,
    int bodyBytes,
    long seed) {
  public Scenario {
    if (clients < 1 || seconds < 1 || startRate < 0 || endRate < 0 || bodyBytes < 0) {
      throw new IllegalArgumentException(
          "a scenario needs clients, a duration and non-negative rates and body size");
    }
  }

  /** The rate of one client at {@code t} seconds into the traffic. */
  public double rateAt(double t) {
    return startRate + (endRate - startRate) * Math.min(1, Math.max(0, t / seconds));
  }

  private Scenario copy(String n, long link, int c, WorkloadSpec w, double r0, double r1, int t) {
    return new Scenario(
        n, topology, link, c, w, r0, r1, t, settleSeconds, graceSeconds, bodyBytes, seed);
  }

  /** A copy under another name. */
  public Scenario withName(String n) {
    return copy(n, linkRateBits, clients, workload, startRate, endRate, seconds);
  }

  /** A copy with another link rate, bits/s. */
  public Scenario withLinkRate(long bits) {
    return copy(name, bits, clients, workload, startRate, endRate, seconds);
  }

  /** A copy with another number of clients. */
  public Scenario withClients(int n) {
    return copy(name, linkRateBits, n, workload, startRate, endRate, seconds);
  }

  /** A copy with another workload. */
  public Scenario withWorkload(WorkloadSpec w) {
    return copy(name, linkRateBits, clients, w, startRate, endRate, seconds);
  }

  /** A copy with another ramp: per-client rates at the start and end, and its duration. */
  public Scenario withRamp(double start, double end, int duration) {
    return copy(name, linkRateBits, clients, workload, start, end, duration);
  }
}
