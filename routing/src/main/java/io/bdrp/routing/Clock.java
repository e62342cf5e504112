package io.bdrp.routing;

/**
 * The time source of the routing state machines. The router passes the system's monotonic clock;
 * the simulator passes its simulated time. Only differences between readings mean anything.
 */
@FunctionalInterface
public interface Clock {
  /** The current time in milliseconds, never decreasing. */
  long nowMillis();
}
