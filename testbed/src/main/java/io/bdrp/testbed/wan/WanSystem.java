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

  /** Closes the clients and ends the server processes. */
  @Override
  void close();
}
