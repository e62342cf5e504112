package io.bdrp.router.links.rdma;

import io.bdrp.router.ring.RingBackend;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;

/**
 * A thread that reads one ring of a {@link RingBackend} and hands what it reads to the router's
 * event loop, a batch of frames at a time (each a little-endian length and the frame): it waits on
 * the ring's wake descriptor, reads until the ring is empty, says it sleeps, and waits again. At
 * most {@value #IN_FLIGHT} batches wait for the loop at once; beyond that the thread waits, the
 * ring fills and its writer drops and counts, as a full socket would make it.
 */
final class RingReader implements Runnable {
  /** Bytes read from the ring at once (a larger frame is read alone). */
  static final int BATCH_BYTES = 64 << 10;

  /** Batches handed to the loop and not yet delivered, at most. */
  static final int IN_FLIGHT = 8;

  /** Polls of an empty ring before the thread sleeps. */
  static final int SPIN = 200;

  /** How often a sleeping reader looks whether it was stopped. */
  private static final int WAIT_MS = 100;

  private final RingBackend.Reader ring;
  private final EventLoop loop;
  private final Consumer<ByteBuf> deliver;
  private final Consumer<IOException> failed;
  private final Semaphore slots = new Semaphore(IN_FLIGHT);
  private final Thread thread;
  private volatile boolean stopped;

  /**
   * @param deliver takes each batch on the loop (the reader releases it afterwards)
   * @param failed told, on the loop, when the ring cannot be read any more
   */
  RingReader(
      RingBackend.Reader ring,
      String name,
      EventLoop loop,
      Consumer<ByteBuf> deliver,
      Consumer<IOException> failed) {
    this.ring = ring;
    this.loop = loop;
    this.deliver = deliver;
    this.failed = failed;
    this.thread = new Thread(this, name);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Stops the thread and waits for it: the ring may be closed after this. */
  void stop() {
    stopped = true;
    thread.interrupt();
    if (Thread.currentThread() != thread) {
      try {
        thread.join(2_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void run() {
    int size = BATCH_BYTES;
    try {
      while (!stopped) {
        slots.acquire();
        ByteBuf batch = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        int n;
        try {
          n =
              batch.hasMemoryAddress()
                  ? ring.read(batch.memoryAddress(), size)
                  : ring.read(batch.nioBuffer(0, size).slice());
        } catch (IOException | RuntimeException e) {
          batch.release();
          slots.release();
          throw e;
        }
        if (n > 0) {
          batch.writerIndex(n);
          hand(batch);
          size = BATCH_BYTES;
          continue;
        }
        batch.release();
        slots.release();
        if (n < 0) {
          size = -n; // one frame larger than a batch: a buffer its size, once
          continue;
        }
        if (ring.prepareSleep(SPIN)) {
          continue; // a frame came meanwhile
        }
        while (!stopped && !ring.awaitWake(WAIT_MS)) {
          // Asleep until the writer wakes it.
        }
        if (!stopped) {
          ring.rearm();
        }
      }
    } catch (InterruptedException e) {
      // Stopped.
    } catch (IOException e) {
      if (!stopped) {
        onLoop(() -> failed.accept(e));
      }
    } catch (RuntimeException e) {
      if (!stopped) {
        onLoop(() -> failed.accept(new IOException(e.toString(), e)));
      }
    }
  }

  private void hand(ByteBuf batch) {
    try {
      loop.execute(
          () -> {
            try {
              deliver.accept(batch);
            } finally {
              batch.release();
              slots.release();
            }
          });
    } catch (RejectedExecutionException stopping) {
      batch.release();
      slots.release();
      stopped = true;
    }
  }

  private void onLoop(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException stopping) {
      // The router has stopped.
    }
  }
}
