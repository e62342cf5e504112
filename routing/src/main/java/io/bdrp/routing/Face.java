package io.bdrp.routing;

/**
 * The routing state machines' view of a link to a neighbouring router: they hand it control
 * messages and it delivers them, in order, to the routing state of the router at the other end
 * (over a TCP session in the router daemon, through the event queue in the simulator).
 *
 * <p>Delivery may fail silently when the link is broken; the protocols recover through hellos, dead
 * intervals and full exchanges on new adjacencies. {@link #send} must not block and must not call
 * back into the sender's state machines.
 */
public interface Face {
  /** The router number of the neighbour at the other end. */
  int neighbour();

  /** Queues a control message for the neighbour. */
  void send(ControlMessage message);

  /**
   * Whether the link already holds as much control traffic as it should: what can wait
   * (advertisements, which go as the version held when they are sent) then stays with its sender
   * until the link has drained. A link that takes everything at once never is.
   */
  default boolean backlogged() {
    return false;
  }
}
