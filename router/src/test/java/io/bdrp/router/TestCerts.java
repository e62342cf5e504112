package io.bdrp.router;

import io.bdrp.router.security.TlsFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Certificates for TLS tests, made by the openssl command: a CA and leaves it signs. */
public final class TestCerts {
  private final Path dir;
  private final String name;

  private TestCerts(Path dir, String name) {
    this.dir = dir;
    this.name = name;
  }

  /** A new CA named {@code name} in {@code dir}: {@code name.crt} and {@code name.key}. */
  public static TestCerts ca(Path dir, String name) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    newKey(dir, name, "-x509", "-out", name + ".crt", "-days", "2");
    return new TestCerts(dir, name);
  }

  /** A P-256 key in {@code name.key} and a request (or, with -x509, a certificate) for CN=name. */
  private static void newKey(Path dir, String name, String... output)
      throws IOException, InterruptedException {
    newKey(dir, name, List.of("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"), output);
  }

  /** As {@link #newKey(Path, String, String...)} with the key made by {@code keyArgs}. */
  private static void newKey(Path dir, String name, List<String> keyArgs, String... output)
      throws IOException, InterruptedException {
    List<String> args = new java.util.ArrayList<>(List.of("req"));
    args.addAll(List.of(output));
    args.addAll(keyArgs);
    args.addAll(List.of("-nodes", "-keyout", name + ".key", "-subj", "/CN=" + name));
    openssl(dir, args.toArray(String[]::new));
  }

  public Path cert() {
    return dir.resolve(name + ".crt");
  }

  /**
   * A leaf signed by this CA for {@code subjectAltName} (such as {@code IP:127.0.0.1}): its
   * certificate and PKCS#8 key, {@code leaf.crt} and {@code leaf.key}.
   */
  public Path[] leaf(String leaf, String subjectAltName) throws IOException, InterruptedException {
    return leaf(leaf, subjectAltName, 1);
  }

  /**
   * A leaf valid for {@code days} days from now; 0 makes one whose validity ends the second it
   * begins, expired from then on.
   */
  public Path[] leaf(String leaf, String subjectAltName, int days)
      throws IOException, InterruptedException {
    newKey(dir, leaf, "-out", leaf + ".csr");
    return sign(leaf, subjectAltName, days);
  }

  /** As {@link #leaf(String, String)} with an Ed25519 key. */
  public Path[] ed25519Leaf(String leaf, String subjectAltName)
      throws IOException, InterruptedException {
    newKey(dir, leaf, List.of("-newkey", "ed25519"), "-out", leaf + ".csr");
    return sign(leaf, subjectAltName, 1);
  }

  /** Signs the request {@code leaf.csr} with this CA. */
  private Path[] sign(String leaf, String subjectAltName, int days)
      throws IOException, InterruptedException {
    Files.writeString(dir.resolve(leaf + ".ext"), "subjectAltName=" + subjectAltName + "\n");
    openssl(
        dir,
        "x509",
        "-req",
        "-in",
        leaf + ".csr",
        "-CA",
        name + ".crt",
        "-CAkey",
        name + ".key",
        "-CAcreateserial",
        "-out",
        leaf + ".crt",
        "-days",
        Integer.toString(days),
        "-extfile",
        leaf + ".ext");
    return new Path[] {dir.resolve(leaf + ".crt"), dir.resolve(leaf + ".key")};
  }

  /** Waits until the certificate in {@code cert} is past its notAfter. */
  static void awaitExpiry(Path cert) throws Exception {
    long end = TlsFiles.certificate(cert).getNotAfter().getTime();
    Federation.await("the certificate to expire", () -> System.currentTimeMillis() > end + 1_000);
  }

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("openssl.log").toFile())
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("openssl did not finish in 30 s: " + cmd);
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          "openssl failed: " + cmd + "\n" + Files.readString(dir.resolve("openssl.log")));
    }
  }
}
