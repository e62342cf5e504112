package io.bdrp.router;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;

/**
 * How a bdrp process ends on an exception, the same for {@code bdrp} and its commands and for
 * {@link RouterMain}: one line on stderr and status 2 for a usage error (a bad option, argument,
 * file or configuration), status 1 for a failure while running (a router that cannot be reached, a
 * port in use). Anything else is a bug, shown with its stack trace.
 */
public final class ExitStatus {
  private ExitStatus() {}

  /** A failure while running. */
  public static final int FAILURE = 1;

  /** A usage error. */
  public static final int USAGE = 2;

  /** {@link #USAGE} or {@link #FAILURE} for {@code ex}, or 0 when it is neither (a bug). */
  public static int of(Exception ex) {
    if (ex instanceof IllegalArgumentException || ex instanceof NoSuchFileException) {
      return USAGE;
    }
    if (ex instanceof IOException
        || ex instanceof UncheckedIOException
        || ex instanceof IllegalStateException) {
      return FAILURE;
    }
    return 0;
  }

  /**
   * Writes {@link #line} to {@code err} and returns {@link #of} for a usage error or a failure
   * while running; throws {@code ex} again when it is neither.
   */
  public static int report(Exception ex, PrintWriter err) throws Exception {
    int status = of(ex);
    if (status == 0) {
      throw ex;
    }
    err.println(line(ex));
    return status;
  }

  /** The line that says why, for stderr. */
  public static String line(Exception ex) {
    return ex instanceof NoSuchFileException nf
        ? "bdrp: no such file: " + nf.getFile()
        : "bdrp: " + ex.getMessage();
  }
}
