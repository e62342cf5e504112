package io.bdrp.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A development certificate authority for a run: the project's {@code dev-ca} script (the same file
 * as {@code scripts/dev-ca}, carried as a resource) run with {@code openssl}, making {@code ca.crt}
 * and, for every router N, {@code rN.crt}/{@code rN.key} naming {@code urn:bdrp:router:N}, {@code
 * localhost}, {@code 127.0.0.1} and the hosts given.
 *
 * @param dir the folder holding the files
 */
public record DevCa(Path dir) {
  /** Makes the CA and certificates for routers {@code 0..routers-1} in {@code dir}. */
  public static DevCa create(int routers, Path dir, String... hosts)
      throws IOException, InterruptedException {
    Files.createDirectories(dir);
    byte[] script;
    try (InputStream in = DevCa.class.getResourceAsStream("dev-ca")) {
      if (in == null) {
        throw new IOException("the dev-ca script is missing from the class path");
      }
      script = in.readAllBytes();
    }
    List<String> cmd = new ArrayList<>(List.of("bash", "-s", "--", Integer.toString(routers)));
    cmd.add(dir.toAbsolutePath().toString());
    cmd.addAll(List.of(hosts));
    Path log = dir.resolve("dev-ca.log");
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()))
            .start();
    try (OutputStream stdin = p.getOutputStream()) {
      stdin.write(script);
    }
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("dev-ca did not finish within 2 minutes (see " + log + ")");
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          "dev-ca failed (exit " + p.exitValue() + "): " + Files.readString(log).strip());
    }
    return new DevCa(dir);
  }

  /** The CA's certificate (PEM). */
  public Path ca() {
    return dir.resolve("ca.crt");
  }

  /** Router {@code n}'s certificate (PEM). */
  public Path cert(int n) {
    return dir.resolve("r" + n + ".crt");
  }

  /** Router {@code n}'s private key (PKCS#8 PEM). */
  public Path key(int n) {
    return dir.resolve("r" + n + ".key");
  }

  /** A TLS 1.3 context trusting this CA only, for a peer's client library. */
  public SSLContext clientContext() throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(ca())) {
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("ca-" + i++, c);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }
}
