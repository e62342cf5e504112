package io.bdrp.router;

import io.bdrp.router.fastpath.EbpfFastPath;
import io.bdrp.router.fastpath.FastPathCounter;
import io.bdrp.router.fastpath.FastPathTable;
import io.bdrp.routing.ForwardingTable;
import io.bdrp.transport.EthernetFrames;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's side of the kernel fast path ({@code fastPath: ebpf}): loads the TC program when the
 * router starts, removes what an earlier run of the same router number left on this host's
 * interfaces, attaches the program to the interface of each UDP link as the link comes up, writes a
 * new table whenever the routes or the links change, and shows the program's counters in the
 * metrics. When the program cannot run, it logs the one reason why and the router forwards in the
 * JVM; nothing else changes.
 *
 * <p>Owned by the router's loop.
 */
final class KernelFastPath {
  private static final Logger log = LoggerFactory.getLogger(KernelFastPath.class);

  private final Router router;
  private final RouterConfig config;
  private EbpfFastPath fp; // null: forwarding in the JVM
  private long generation;
  private ForwardingTable lastRoutes;
  private long lastLinks = -1;
  private boolean incomplete; // a neighbour's Ethernet address was missing: build again soon
  private long builtAt;
  private long[] counters = new long[FastPathCounter.values().length];
  private long countersReadAt;
  private long[] forwarded;
  private final int[] neighbours;

  KernelFastPath(Router router) {
    this.router = router;
    this.config = router.config();
    this.neighbours =
        config.neighbours().stream().mapToInt(RouterConfig.Neighbour::router).toArray();
    this.forwarded = new long[neighbours.length];
  }

  /** Loads the program if the configuration asks for it and it can run; logs why not otherwise. */
  void start() {
    if (config.fastPath() != RouterConfig.FastPath.EBPF) {
      return;
    }
    String why = null;
    if (!config.usesUdp()) {
      why = "no neighbour's link uses UDP, and the fast path forwards UDP DATA only";
    } else if (config.udpProtection() == io.bdrp.transport.UdpProtection.ENCRYPT) {
      why = "auth.udp is encrypt, which hides the DATA header from the kernel";
    } else if (config.routing().maxRouters() > 64 * FastPathTable.MAX_WORDS) {
      why =
          "routing.maxRouters is "
              + config.routing().maxRouters()
              + ", above the "
              + 64 * FastPathTable.MAX_WORDS
              + " routers the program's tables hold";
    } else if (!EbpfFastPath.isAvailable()) {
      why = EbpfFastPath.unavailabilityReason();
    }
    if (why == null) {
      removeStale();
      try {
        fp = EbpfFastPath.open(config.router());
        log.info(
            "router {}: kernel fast path loaded (program id {}); transit DATA from UDP links is"
                + " forwarded at TC ingress",
            config.router(),
            fp.programId());
      } catch (IOException | RuntimeException e) {
        why = e.getMessage();
        fp = null;
      }
    }
    if (why != null) {
      log.warn(
          "router {}: fastPath ebpf is not available: {}; forwarding in the JVM",
          config.router(),
          why);
      return;
    }
    registerMetrics();
  }

  /** Removes this router number's filters left on any interface by an earlier run (kill -9). */
  private void removeStale() {
    try {
      for (NetworkInterface nif : NetworkInterface.networkInterfaces().toList()) {
        try {
          int id = EbpfFastPath.removeStale(config.router(), nif.getIndex());
          if (id != 0) {
            log.info(
                "router {}: removed the fast-path program (id {}) an earlier run left on {}",
                config.router(),
                id,
                nif.getName());
          }
        } catch (IOException e) {
          log.warn(
              "router {}: cannot check {} for an earlier run's fast path: {}",
              config.router(),
              nif.getName(),
              e.getMessage());
        }
      }
    } catch (SocketException e) {
      log.warn("router {}: cannot list interfaces: {}", config.router(), e.getMessage());
    }
  }

  /**
   * Writes a new table if the routes or the links changed since the last one; attaches the program
   * to the interfaces of new UDP links. Cheap when nothing changed.
   */
  void sync() {
    if (fp == null) {
      return;
    }
    ForwardingTable routes = router.node().routes();
    long links = router.udp().generation();
    long now = System.nanoTime();
    boolean retry = incomplete && now - builtAt > 1_000_000_000L;
    if (routes == lastRoutes && links == lastLinks && !retry) {
      return;
    }
    lastRoutes = routes;
    lastLinks = links;
    builtAt = now;
    incomplete = false;
    int port = router.udp().port();
    FastPathTable table =
        new FastPathTable(++generation, config.router(), config.routing().maxRouters(), port);
    boolean mac = config.udpProtection() == io.bdrp.transport.UdpProtection.MAC;
    table.auth(mac);
    List<Integer> interfaces = new ArrayList<>();
    Map<String, byte[]> arp = arpTable();
    for (int n : neighbours) {
      Link l = router.links().get(n);
      if (l == null || l.session == null) {
        continue;
      }
      long[] behind = routes.behind(n);
      InetSocketAddress peer = l.udpPeer;
      InetAddress local = ((InetSocketAddress) l.session.localAddress()).getAddress();
      boolean udp =
          peer != null
              && peer.getAddress() instanceof Inet4Address
              && local instanceof Inet4Address;
      if (table.count() == FastPathTable.MAX_NEIGHBOURS) {
        break; // D naming a router behind the others goes up as NO_ROUTE: the JVM sends it
      }
      if (udp) {
        // Its datagrams arrive on this interface (the program is attached there) and are known
        // by the sender check, also when DATA to it goes over TCP.
        Hop hop = hopTo(local, peer.getAddress(), arp);
        if (hop == null) {
          incomplete = true;
        }
        int ifindex = l.dataBy(RouterConfig.LinkTransport.UDP) && hop != null ? hop.ifindex : 0;
        table.neighbour(
            n,
            (Inet4Address) peer.getAddress(),
            peer.getPort(),
            (Inet4Address) local,
            ifindex,
            hop != null ? hop.localMac : new byte[6],
            hop != null ? hop.mac : new byte[6],
            l.dataBy(RouterConfig.LinkTransport.UDP) && hop == null,
            behind);
        UdpLinks.Session session = l.udp;
        if (mac && session != null) {
          // The session's keys, and what the JVM has taken of its datagrams so far: the kernel
          // starts its replay windows there the first time it sees this session.
          table.session(
              session.id(),
              session.keyIn(),
              session.keyOut(),
              session.opener().highest(false),
              session.opener().highest(true));
        }
        if (hop != null) {
          interfaces.add(hop.ifindex);
        }
      } else if (nonZero(behind)) {
        // Reached over TCP: a packet with routers behind it goes up.
        Inet4Address any = anyAddress();
        table.neighbour(n, any, 0, any, 0, new byte[6], new byte[6], false, behind);
      }
    }
    try {
      for (int ifindex : interfaces) {
        if (fp.attach(ifindex)) {
          log.info("router {}: kernel fast path attached to {}", config.router(), nameOf(ifindex));
        }
      }
      fp.setTable(table);
    } catch (IOException e) {
      log.warn(
          "router {}: the kernel fast path failed ({}); unloading it, forwarding in the JVM",
          config.router(),
          e.getMessage());
      close();
    }
  }

  private static boolean nonZero(long[] words) {
    for (long w : words) {
      if (w != 0) {
        return true;
      }
    }
    return false;
  }

  private static Inet4Address anyAddress() {
    try {
      return (Inet4Address) InetAddress.getByAddress(new byte[4]);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Where copies to a neighbour leave: the interface and both Ethernet addresses. */
  private record Hop(int ifindex, byte[] localMac, byte[] mac) {}

  /**
   * The hop to {@code neighbour} over the interface that holds {@code local}, or null when it is
   * not known yet (no entry in the kernel's neighbour table) or the interface is not Ethernet.
   */
  private Hop hopTo(InetAddress local, InetAddress neighbour, Map<String, byte[]> arp) {
    try {
      NetworkInterface nif = NetworkInterface.getByInetAddress(local);
      if (nif == null) {
        return null;
      }
      if (nif.isLoopback()) {
        return new Hop(nif.getIndex(), new byte[6], new byte[6]);
      }
      byte[] localMac = nif.getHardwareAddress();
      if (localMac == null || localMac.length != 6) {
        warnOnce(
            nif.getName(),
            "interface " + nif.getName() + " is not Ethernet: the fast path does not serve it");
        return null;
      }
      byte[] mac = arp.get(neighbour.getHostAddress() + " " + nif.getName());
      return mac == null ? null : new Hop(nif.getIndex(), localMac, mac);
    } catch (SocketException e) {
      return null;
    }
  }

  /**
   * The kernel's ARP table: complete entries' Ethernet addresses by {@code "ADDRESS DEVICE"}; empty
   * when it cannot be read.
   */
  private static Map<String, byte[]> arpTable() {
    Map<String, byte[]> table = new HashMap<>();
    try {
      for (String line : Files.readAllLines(Path.of(ARP))) {
        String[] c = line.trim().split("\\s+");
        // IP address, HW type, Flags, HW address, Mask, Device; flag 0x2: complete
        try {
          if (c.length >= 6 && (Integer.decode(c[2]) & 0x2) != 0) {
            table.put(c[0] + " " + c[5], EthernetFrames.mac(c[3]));
          }
        } catch (IllegalArgumentException e) {
          // the header line, or an address that is not Ethernet
        }
      }
    } catch (IOException e) {
      // no such table: nothing known
    }
    return table;
  }

  /** The calling thread's network namespace's ARP table (a router's threads share one). */
  private static final String ARP = "/proc/thread-self/net/arp";

  private final Set<String> warned = new HashSet<>();

  private void warnOnce(String key, String message) {
    if (warned.add(key)) {
      log.warn("router {}: {}", config.router(), message);
    }
  }

  private static String nameOf(int ifindex) {
    try {
      NetworkInterface nif = NetworkInterface.getByIndex(ifindex);
      return nif == null ? "interface " + ifindex : nif.getName();
    } catch (SocketException e) {
      return "interface " + ifindex;
    }
  }

  // ---- metrics ----

  private void registerMetrics() {
    Metrics m = router.metrics().registry();
    for (FastPathCounter c : FastPathCounter.values()) {
      m.counter(
          "bdrp_fastpath_packets_total",
          "DATA datagrams for this router's UDP port seen by the kernel fast path, by what it did:"
              + " split (forwarded in the kernel), split_local (and one copy up for local"
              + " delivery), up_* (passed to the router as they came, and why; up_large: too"
              + " large for the kernel to check its tag), drop_mac and drop_replay (a forged,"
              + " altered or replayed datagram dropped in the kernel), redirect_failed.",
          () -> counter(c),
          "result",
          c.label());
    }
    for (int i = 0; i < neighbours.length; i++) {
      int k = i;
      m.counter(
          "bdrp_fastpath_forwarded_total",
          "Copies the kernel fast path sent to a neighbour.",
          () -> forwarded(k),
          "neighbour",
          Integer.toString(neighbours[i]));
    }
  }

  private void refresh() {
    long now = System.nanoTime();
    if (fp == null || now - countersReadAt < 50_000_000L) {
      return;
    }
    try {
      counters = fp.counters();
      forwarded = fp.forwarded(neighbours);
      countersReadAt = now;
    } catch (IOException | RuntimeException e) {
      log.debug(
          "router {}: cannot read the fast path's counters: {}", config.router(), e.getMessage());
    }
  }

  private long counter(FastPathCounter c) {
    refresh();
    return counters[c.ordinal()];
  }

  private long forwarded(int i) {
    refresh();
    return forwarded[i];
  }

  /** Detaches and unloads the program (the router stops). */
  void close() {
    if (fp == null) {
      return;
    }
    try {
      fp.close();
      log.info("router {}: kernel fast path removed", config.router());
    } catch (IOException e) {
      log.warn("router {}: removing the kernel fast path: {}", config.router(), e.getMessage());
    }
    fp = null;
  }
}
