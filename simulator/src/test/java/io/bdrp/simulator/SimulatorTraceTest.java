package io.bdrp.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import io.bdrp.routing.Trace;
import io.bdrp.topologies.Bundled;
import io.bdrp.workload.WorkloadGenerator;
import io.bdrp.workload.WorkloadSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Traces in the simulator: the routers' own data planes, over simulated links. */
class SimulatorTraceTest {
  @Test
  void aTraceFindsExactlyTheMatchingHostsAndDeliversNothing() {
    Simulator sim = new Simulator(Bundled.load("routers-42"), SimulatorTest.options());
    WorkloadGenerator g = new WorkloadGenerator(WorkloadSpec.PAPER, 42);
    SimulatorTest.attachHosts(sim, g, 3);
    SimulatorTest.converge(sim);
    SplittableRandom rnd = new SplittableRandom(3);
    int found = 0;
    for (int i = 0; i < 50; i++) {
      Message m = g.message();
      List<Trace.Step> steps = new ArrayList<>();
      sim.trace(rnd.nextInt(sim.routerCount()), m, steps::add);
      sim.run(sim.nowMillis() + 2_000);
      TreeSet<Integer> hosts = new TreeSet<>();
      for (Trace.Step s : steps) {
        assertEquals(s.matching(), s.hosts().length, "three hosts a router: all listed");
        for (int h : s.hosts()) {
          assertTrue(hosts.add(h), "host " + h + " matched once");
        }
        assertEquals(List.of(), s.drops(), "nothing dropped in a converged network");
      }
      assertEquals(SimulatorTest.oracle(sim, m), hosts, "the hosts of trace " + i);
      found += hosts.size();
    }
    assertTrue(found > 0, "the workload matches some hosts");
    assertEquals(0, sim.log().entries().size(), "no message was published");
  }
}
