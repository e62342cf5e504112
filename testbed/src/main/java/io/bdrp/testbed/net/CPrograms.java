package io.bdrp.testbed.net;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The testbed's small C helpers (the link delayer, the packet blaster): each is a resource of this
 * package, compiled with the system's C compiler on first use into {@code /run/bdrp-testbed/bin}
 * under a name that carries a hash of its source, so that a changed source is compiled again and
 * the old binary removed.
 */
final class CPrograms {
  /** Where the testbed keeps its run-time files (the helpers' binaries and logs). */
  static final Path DIR = Path.of("/run/bdrp-testbed");

  private static final Path BIN = DIR.resolve("bin");

  private CPrograms() {}

  /**
   * The binary of resource {@code source}, compiled now if it is missing or its source changed.
   *
   * @param prefix the binary's name before the hash, such as {@code bdrp-delayer-}
   * @param packages what to install when the compiler or a library is missing (for the message)
   * @param libs linker arguments, such as {@code -lnetfilter_queue}
   */
  static Path binary(String source, String prefix, String packages, String... libs)
      throws IOException {
    byte[] text;
    try (InputStream in = CPrograms.class.getResourceAsStream(source)) {
      if (in == null) {
        throw new IOException(source + " is missing from the class path");
      }
      text = in.readAllBytes();
    }
    Path binary = BIN.resolve(prefix + hash(text));
    if (Files.isExecutable(binary)) {
      return binary;
    }
    if (!Shell.onPath("cc")) {
      throw new IOException(
          source + " is built with a C compiler (cc), which is missing; Debian: " + packages);
    }
    Files.createDirectories(BIN);
    Path src = Files.createTempFile(BIN, prefix, ".c");
    Path out = Files.createTempFile(BIN, prefix, ".tmp");
    try {
      Files.write(src, text);
      List<String> cmd = new ArrayList<>(List.of("cc", "-O2", "-Wall", "-o", out.toString()));
      cmd.add(src.toString());
      cmd.addAll(List.of(libs));
      Shell.run(cmd.toArray(String[]::new));
      Files.move(out, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      // Older builds: a process still running from one keeps its file until it ends.
      try (var old = Files.newDirectoryStream(BIN, prefix + "????????????")) {
        for (Path f : old) {
          if (!f.equals(binary)) {
            Files.deleteIfExists(f);
          }
        }
      }
    } finally {
      Files.deleteIfExists(src);
      Files.deleteIfExists(out);
    }
    return binary;
  }

  private static String hash(byte[] source) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(source);
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
