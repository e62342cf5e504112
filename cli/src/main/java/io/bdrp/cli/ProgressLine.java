package io.bdrp.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A progress line for a long step. On a terminal it is one line, rewritten in place (carriage
 * return) at most ten times a second, and ended with a newline by {@link #done}; into a pipe or a
 * file, where carriage returns make a mess, it is a plain line at most every five seconds, so that
 * a log of the run still shows that it moved.
 */
final class ProgressLine {
  private static final long TERMINAL_NANOS = 100_000_000L;
  private static final long PIPE_NANOS = 5_000_000_000L;

  private final PrintWriter out;
  private final boolean terminal;
  private long last;
  private int shown; // characters of the line on the terminal now
  private boolean open;

  ProgressLine(PrintWriter out) {
    this(out, stdoutIsTerminal());
  }

  ProgressLine(PrintWriter out, boolean terminal) {
    this.out = out;
    this.terminal = terminal;
    this.last = System.nanoTime();
  }

  /** Whether this process's standard output is a terminal (Linux: /proc/self/fd/1 is a tty). */
  static boolean stdoutIsTerminal() {
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/1")).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }

  /**
   * Shows {@code text}: on a terminal at once the first time and then at most ten times a second;
   * into a pipe at most every five seconds.
   */
  void update(String text) {
    long now = System.nanoTime();
    boolean due = now - last >= (terminal ? TERMINAL_NANOS : PIPE_NANOS);
    if (due || (terminal && !open)) {
      last = now;
      show(text);
    }
  }

  /** Shows {@code text} as the step's last state and ends the line. */
  void done(String text) {
    if (terminal) {
      show(text);
      out.println();
    } else {
      out.println("  " + text);
    }
    out.flush();
    open = false;
    shown = 0;
    last = System.nanoTime();
  }

  private void show(String text) {
    if (terminal) {
      String line = "  " + text;
      int pad = Math.max(0, shown - line.length());
      out.print("\r" + line + " ".repeat(pad));
      shown = line.length();
    } else {
      out.println("  ... " + text);
    }
    open = true;
    out.flush();
  }
}
