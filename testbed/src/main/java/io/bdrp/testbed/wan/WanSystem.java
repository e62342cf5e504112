package io.bdrp.testbed.wan;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.testbed.ChildProcess;
import io.bdrp.testbed.net.Emulator;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * A publish/subscribe system deployed on an emulated network for a testbed run: one server (router
 * or broker) in each router's namespace, linked along the network's links, and clients in this
 * namespace attached through the unshaped host links.
 */
public interface WanSystem extends AutoCloseable {
  /** A client: it receives what its predicate selects and publishes messages. */
  interface Client extends AutoCloseable {
    /** Publishes asynchronously; never blocks on the network. */
    void send(Message m) throws Exception;

    @Override
    void close();
  }

  /** A short name for tables and folders. */
  String name();

  /**
   * Starts the servers on {@code net}, which is up, with files under {@code dir}; {@code diameter}
   * is the topology's, in hops.
   */
  void start(Emulator.Network net, Path dir, int diameter) throws Exception;

  /** Attaches a client to server {@code server} with predicate {@code p}. */
  Client client(int server, String name, Predicate p, Consumer<Message> receiver) throws Exception;

  /** The server processes, for CPU accounting. */
  List<ChildProcess> processes();

  /** How the clients publish: {@code best-effort} unless the system says otherwise. */
  default String service() {
    return "best-effort";
  }

  /**
   * Messages sent that await the system's confirmation (neither confirmed nor reported unreached):
   * the run's grace period lasts until there are none, as well as every expected delivery in. 0 for
   * a system that confirms nothing.
   */
  default long unconfirmed() {
    return 0;
  }

  /**
   * Seconds the grace period may last beyond the scenario's for {@link #unconfirmed} to reach 0:
   * how long the system may take to confirm or give up.
   */
  default int confirmationSeconds() {
    return 0;
  }

  /** Messages confirmed and reported unreached, or null for a system that confirms nothing. */
  default Confirmations confirmations() {
    return null;
  }

  /**
   * What the servers sent on their links by the end of the traffic, read from them before they
   * stop; null for a system that does not say.
   */
  default FrameBytes frameBytes() throws Exception {
    return null;
  }

  /** Of the messages published reliably: confirmed, and reported unreached or failed. */
  record Confirmations(long sent, long confirmed, long unreached, long failed) {}

  /**
   * Bytes sent on the servers' links, by server: copies of best-effort messages (DATA frames), of
   * reliable ones (RELIABLE_DATA, resent ones included) and acknowledgements (RELIABLE_ACK), whole
   * frames, each hop counted ({@code bdrp_link_data_bytes_out_total}, {@code
   * bdrp_link_reliable_ack_bytes_out_total}, summed over the links of each router).
   */
  record FrameBytes(long[] data, long[] reliableData, long[] acks) {
    public FrameBytes {
      if (reliableData.length != data.length || acks.length != data.length) {
        throw new IllegalArgumentException("frame bytes: arrays of different lengths");
      }
    }

    /** Sums the series of each router's metrics text (Prometheus text format), router by router. */
    public static FrameBytes of(List<String> metrics) {
      int n = metrics.size();
      FrameBytes b = new FrameBytes(new long[n], new long[n], new long[n]);
      for (int r = 0; r < n; r++) {
        for (String line : metrics.get(r).split("\n")) {
          long[] into =
              line.startsWith("bdrp_link_data_bytes_out_total{")
                  ? line.contains("type=\"reliable_data\"") ? b.reliableData : b.data
                  : line.startsWith("bdrp_link_reliable_ack_bytes_out_total{") ? b.acks : null;
          if (into != null) {
            // The text format writes doubles (1.2345678E7); exact up to 2^53.
            into[r] += Math.round(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
          }
        }
      }
      return b;
    }

    private static long sum(long[] a) {
      long s = 0;
      for (long x : a) {
        s += x;
      }
      return s;
    }

    /** DATA and RELIABLE_DATA bytes of every router. */
    public long totalData() {
      return sum(data) + sum(reliableData);
    }

    /** RELIABLE_DATA bytes of every router. */
    public long totalReliableData() {
      return sum(reliableData);
    }

    /** Acknowledgement bytes of every router. */
    public long totalAcks() {
      return sum(acks);
    }

    /** Acknowledgement bytes over DATA bytes (0 without DATA). */
    public double ackRatio() {
      long d = totalData();
      return d == 0 ? 0 : (double) totalAcks() / d;
    }
  }

  /** Closes the clients and ends the server processes. */
  @Override
  void close();
}
