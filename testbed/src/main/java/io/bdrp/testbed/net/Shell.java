package io.bdrp.testbed.net;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the system's network commands ({@code ip}, {@code tc}) and reports their failures. */
final class Shell {
  private Shell() {}

  /** Whether an executable {@code command} is in a directory of {@code PATH}. */
  static boolean onPath(String command) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  /** The command's standard output; fails with its standard error when it exits non-zero. */
  static String run(String... command) throws IOException {
    return run(List.of(command));
  }

  static String run(List<String> command) throws IOException {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(false).start();
    } catch (IOException e) {
      throw new IOException(
          "cannot run " + command.get(0) + ": " + e.getMessage() + " (is iproute2 installed?)");
    }
    try {
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      byte[] err = p.getErrorStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", command) + ": no answer within 30 s");
      }
      if (p.exitValue() != 0) {
        throw new IOException(
            String.join(" ", command)
                + ": "
                + new String(err, StandardCharsets.UTF_8).strip()
                + " (exit "
                + p.exitValue()
                + ")");
      }
      return new String(out, StandardCharsets.UTF_8);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException(String.join(" ", command) + ": interrupted");
    }
  }
}
