package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A router asked for the kernel fast path where it cannot have it says why in one WARN line and
 * serves in the JVM: here a root process whose capabilities to load BPF programs and change qdiscs
 * were dropped ({@code setpriv}), and a router none of whose links uses UDP.
 */
@Timeout(120)
class FastPathFallbackTest {
  private final ChildProcesses children = new ChildProcesses();

  @AfterEach
  void end() throws InterruptedException {
    children.endAll();
  }

  private static String yaml(int router, String neighbourTransport) {
    return "router: "
        + router
        + "\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\", metrics:"
        + " \"127.0.0.1:0\"}\nfastPath: ebpf\nneighbours:\n  - {router: 9, transport: "
        + neighbourTransport
        + "}\n";
  }

  private ChildProcesses.Router start(Path dir, List<String> prefix, int n, String transport)
      throws Exception {
    Path file = dir.resolve("router-" + n + ".yaml");
    Files.writeString(file, yaml(n, transport));
    ChildProcesses.Proc p =
        children.start(dir, true, prefix, "router", "--config", file.toString());
    ChildProcesses.await(
        "router " + n + " to listen",
        p,
        () -> p.out().stream().anyMatch(l -> ChildProcesses.LISTENING.matcher(l).find()));
    return new ChildProcesses.Router(p, 0, 0, 0);
  }

  private static boolean warned(ChildProcesses.Router r, String reason) {
    return r.proc().err().stream()
        .anyMatch(
            l ->
                l.contains("fastPath ebpf is not available: " + reason)
                    && l.contains("forwarding in the JVM"));
  }

  @Test
  void withoutTheCapabilitiesTheRouterSaysWhyAndForwardsInTheJvm(@TempDir Path dir)
      throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name"))
            && Files.isExecutable(Path.of("/usr/bin/setpriv")),
        "drops capabilities of a root process with setpriv");
    List<String> noBpf =
        List.of(
            "setpriv",
            "--bounding-set",
            "-net_admin,-bpf,-sys_admin",
            "--inh-caps",
            "-net_admin,-bpf,-sys_admin");
    ChildProcesses.Router r = start(dir, noBpf, 1, "udp");
    ChildProcesses.await(
        "the reason in the log",
        r.proc(),
        () -> warned(r, "the process lacks CAP_NET_ADMIN and CAP_BPF"));
    assertTrue(r.proc().process().isAlive(), "the router serves on");
  }

  @Test
  void withoutUdpLinksThereIsNothingForTheKernelToForward(@TempDir Path dir) throws Exception {
    ChildProcesses.Router r = start(dir, List.of(), 2, "tcp");
    ChildProcesses.await(
        "the reason in the log", r.proc(), () -> warned(r, "no neighbour's link uses UDP"));
  }
}
