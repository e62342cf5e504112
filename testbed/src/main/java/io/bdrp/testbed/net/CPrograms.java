package io.bdrp.testbed.net;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The testbed's small C helpers (the link delayer, the packet blaster): each is a resource of this
 * package, compiled with the system's C compiler on first use into {@code /run/bdrp-testbed/bin}
 * under a name that carries a hash of its source, so that a changed source is compiled again and
 * the old binary removed. A source may include headers of this package ({@code #include "name.h"},
 * one level deep); they are part of the hash.
 */
final class CPrograms {
  /** Where the testbed keeps its run-time files (the helpers' binaries and logs). */
  static final Path DIR = Path.of("/run/bdrp-testbed");

  private static final Path BIN = DIR.resolve("bin");

  private static final Pattern LOCAL_INCLUDE =
      Pattern.compile("^#include \"([A-Za-z0-9_.-]+)\"", Pattern.MULTILINE);

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
    byte[] text = resource(source);
    Map<String, byte[]> headers = new TreeMap<>();
    Matcher m = LOCAL_INCLUDE.matcher(new String(text, StandardCharsets.UTF_8));
    while (m.find()) {
      headers.put(m.group(1), resource(m.group(1)));
    }
    Path binary = BIN.resolve(prefix + hash(text, headers));
    if (Files.isExecutable(binary)) {
      return binary;
    }
    if (!Shell.onPath("cc")) {
      throw new IOException(
          source + " is built with a C compiler (cc), which is missing; Debian: " + packages);
    }
    Files.createDirectories(BIN);
    Path work = Files.createTempDirectory(BIN, "build-");
    Path src = work.resolve(source);
    Path out = Files.createTempFile(BIN, prefix, ".tmp");
    try {
      Files.write(src, text);
      for (Map.Entry<String, byte[]> h : headers.entrySet()) {
        Files.write(work.resolve(h.getKey()), h.getValue());
      }
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
      for (String h : headers.keySet()) {
        Files.deleteIfExists(work.resolve(h));
      }
      Files.deleteIfExists(work);
      Files.deleteIfExists(out);
    }
    return binary;
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = CPrograms.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException(name + " is missing from the class path");
      }
      return in.readAllBytes();
    }
  }

  /** The first 6 bytes of SHA-256 over the source and each header's name and text, in hex. */
  private static String hash(byte[] source, Map<String, byte[]> headers) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(source);
      for (Map.Entry<String, byte[]> h : headers.entrySet()) {
        md.update((byte) 0);
        md.update(h.getKey().getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
        md.update(h.getValue());
      }
      byte[] d = md.digest();
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
