package io.bdrp.router.fastpath;

import io.bdrp.router.config.RouterConfig;
import io.bdrp.router.links.udp.UdpLinks;
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
 * Makes the kernel fast path's tables from a copy of the routes and links taken on the router's
 * loop, with what the loop does not hold: the interface and Ethernet addresses of each neighbour,
 * from the kernel's ARP table. On the fast path's thread (see {@link KernelFastPath}).
 */
final class FastPathTables {
  private static final Logger log = LoggerFactory.getLogger(FastPathTables.class);

  /** A neighbour's part of a table, copied on the loop (the JVM's replay state included). */
  record Peer(
      int n,
      InetSocketAddress udpPeer,
      InetAddress local,
      boolean udpOut,
      long[] behind,
      UdpLinks.Session session,
      long highest,
      long highestKernel) {}

  /**
   * What a table is made from, copied on the loop: the UDP port, the neighbours, the routes (an
   * immutable snapshot, for the broadcast trees) and whether this router has local hosts.
   */
  record Inputs(int port, List<Peer> peers, ForwardingTable routes, boolean hosts) {}

  /**
   * A table, the interfaces to attach the program to, and whether a neighbour's Ethernet address
   * was missing (build again soon).
   */
  record Built(FastPathTable table, List<Integer> interfaces, boolean incomplete) {}

  private final RouterConfig config;
  private long generation;

  FastPathTables(RouterConfig config) {
    this.config = config;
  }

  /** The next table from {@code in}. */
  Built build(Inputs in) {
    FastPathTable table =
        new FastPathTable(++generation, config.router(), config.routing().maxRouters(), in.port());
    boolean incomplete = false;
    boolean mac = config.udpProtection() == io.bdrp.transport.UdpProtection.MAC;
    table.auth(mac);
    List<Integer> interfaces = new ArrayList<>();
    Map<String, byte[]> arp = arpTable();
    for (Peer p : in.peers()) {
      InetSocketAddress peer = p.udpPeer();
      InetAddress local = p.local();
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
        int ifindex = p.udpOut() && hop != null ? hop.ifindex : 0;
        table.neighbour(
            p.n(),
            (Inet4Address) peer.getAddress(),
            peer.getPort(),
            (Inet4Address) local,
            ifindex,
            hop != null ? hop.localMac : new byte[6],
            hop != null ? hop.mac : new byte[6],
            p.udpOut() && hop == null,
            p.behind());
        UdpLinks.Session session = p.session();
        if (mac && session != null) {
          // The session's keys, and what the JVM had taken of its datagrams when the loop copied
          // them: the kernel starts its replay windows there the first time it sees this session.
          table.session(
              session.id(), session.keyIn(), session.keyOut(), p.highest(), p.highestKernel());
        }
        if (hop != null) {
          interfaces.add(hop.ifindex);
        }
      } else if (nonZero(p.behind())) {
        // Reached over TCP: a packet with routers behind it goes up.
        Inet4Address any = anyAddress();
        table.neighbour(p.n(), any, 0, any, 0, new byte[6], new byte[6], false, p.behind());
      }
    }
    table.hosts(in.hosts());
    trees(table, in);
    return new Built(table, interfaces, incomplete);
  }

  /** Every source's broadcast tree at this router, as {@link ForwardingTable#broadcast} has it. */
  private void trees(FastPathTable table, Inputs in) {
    ForwardingTable routes = in.routes();
    int max = Math.min(config.routing().maxRouters(), FastPathTable.MAX_SOURCES);
    int[] former = new int[in.peers().size()];
    for (int s = 0; s < max; s++) {
      int parent = routes.nextHop(s);
      if (s == config.router() || parent < 0) {
        continue; // refused as own_source or unknown_source: up, counted UP_SOURCE
      }
      int k = 0;
      for (Peer p : in.peers()) {
        if (routes.isFormerHop(s, p.n())) {
          former[k++] = p.n();
        }
      }
      table.tree(s, parent, routes.childrenOf(s), java.util.Arrays.copyOf(former, k));
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

  static String nameOf(int ifindex) {
    try {
      NetworkInterface nif = NetworkInterface.getByIndex(ifindex);
      return nif == null ? "interface " + ifindex : nif.getName();
    } catch (SocketException e) {
      return "interface " + ifindex;
    }
  }
}
