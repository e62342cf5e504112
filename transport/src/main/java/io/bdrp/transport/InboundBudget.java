package io.bdrp.transport;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory that the partial frames of many connections may hold together. A {@link FrameDecoder} (or
 * another port's framing, such as the router's MQTT port) that has the start of a frame but not its
 * end reserves the whole frame's length here until the frame is complete or the connection ends; a
 * reservation that does not fit is refused, and the decoder ends that session ({@link
 * ErrorCode#OVERLOADED}). With the per-connection bound of one frame, this bounds what peers that
 * send slowly, or start frames and never finish them, can pin.
 *
 * <p>Thread-safe: shared by the decoders of one port, whatever loop they run on.
 */
public final class InboundBudget {
  private final long limitBytes;
  private final AtomicLong reserved = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  /**
   * @param limitBytes bytes that partial frames may hold together; positive
   */
  public InboundBudget(long limitBytes) {
    if (limitBytes <= 0) {
      throw new IllegalArgumentException("limitBytes must be positive, got " + limitBytes);
    }
    this.limitBytes = limitBytes;
  }

  /** Reserves {@code bytes}; false (and counted) if that would exceed the limit. */
  private boolean reserve(long bytes) {
    while (true) {
      long cur = reserved.get();
      if (cur + bytes > limitBytes) {
        refused.incrementAndGet();
        return false;
      }
      if (reserved.compareAndSet(cur, cur + bytes)) {
        return true;
      }
    }
  }

  /** Releases what {@link #reserve} reserved. */
  private void release(long bytes) {
    reserved.addAndGet(-bytes);
  }

  /** The limit. */
  public long limitBytes() {
    return limitBytes;
  }

  /** Bytes reserved now by partial frames. */
  public long reservedBytes() {
    return reserved.get();
  }

  /** Reservations refused so far: sessions ended because the budget was spent. */
  public long refused() {
    return refused.get();
  }

  /** A hold of one connection's partial frame on this budget. */
  public Hold newHold() {
    return new Hold();
  }

  /**
   * What one connection's partial frame holds of the budget: the whole frame's length, from when
   * its start arrives until it is complete or the connection ends. Owned by that connection's loop.
   */
  public final class Hold {
    private long bytes;

    private Hold() {}

    /**
     * Holds {@code total} bytes for the partial frame now arriving, once per frame (a frame held
     * already holds on): false, counted, if the budget is spent.
     */
    public boolean hold(long total) {
      if (bytes != 0) {
        return true;
      }
      if (!reserve(total)) {
        return false;
      }
      bytes = total;
      return true;
    }

    /** The frame is complete, or the connection gone: its bytes go back to the budget. */
    public void release() {
      if (bytes != 0) {
        InboundBudget.this.release(bytes);
        bytes = 0;
      }
    }
  }
}
