package io.bdrp.cli;

import io.bdrp.cli.console.ConsoleServer;
import io.bdrp.cli.console.Federation;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bdrp console}: the operator's web console (docs/console.md). Finds the whole federation
 * from one router's admin API by following its neighbours' admin addresses, reads every router once
 * a second, and serves a page that draws the federation and each router's rates, links, hosts and
 * drops. Runs until interrupted.
 */
@Command(
    name = "console",
    mixinStandardHelpOptions = true,
    description = {
      "Serve the operator's web console for a federation.",
      "Reads the admin API of --router, follows its neighbours' admin addresses to every router of"
          + " the federation, reads them all once a second, and serves a page that draws the"
          + " federation live, and traces messages from the page as a client of the chosen"
          + " router (--token, --tls-ca, --cert, --key: as for bdrp trace). Runs until interrupted"
          + " (Ctrl-C)."
    })
public final class ConsoleCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--router",
      required = true,
      paramLabel = "HOST:PORT",
      description =
          "A router's metrics address, where its admin API is (listen.metrics), or its base URL"
              + " (http://HOST:PORT, https://HOST:PORT); repeat to start from several.")
  List<String> routers;

  @Option(
      names = "--listen",
      defaultValue = "127.0.0.1:8080",
      paramLabel = "HOST:PORT",
      description = "Where the console serves its page (default: ${DEFAULT-VALUE}).")
  String listen;

  @Option(
      names = "--user",
      description = "The metrics user of the routers (auth.metrics), for basic authentication.")
  String user;

  @Option(
      names = "--password-file",
      paramLabel = "FILE",
      description = "A file whose first line is --user's password.")
  Path passwordFile;

  @Option(
      names = "--cacert",
      paramLabel = "PEM",
      description =
          "Speak https to routers given as HOST:PORT, trusting the certificate authorities in this"
              + " PEM file (tls.metrics).")
  Path cacert;

  /** The credentials the page's traces are run with, as {@code bdrp trace} takes them. */
  @picocli.CommandLine.Mixin ClientCredentials traceCredentials;

  @Override
  public Integer call() throws Exception {
    traceCredentials.apply(io.bdrp.client.BdrpClient.builder()); // fails now on a bad combination
    if ((user == null) != (passwordFile == null)) {
      throw new IllegalArgumentException("--user and --password-file go together");
    }
    InetSocketAddress at = Addresses.parse("--listen", listen, 0);
    HttpClient http = Federation.httpClient(cacert == null ? null : trusting(cacert));
    List<String> seeds = new ArrayList<>();
    for (String r : routers) {
      seeds.add(baseUrl(r, cacert != null));
    }
    Federation federation = new Federation(seeds, http, authorization());
    try (ConsoleServer server = new ConsoleServer(federation, at, traceCredentials::apply)) {
      PrintWriter o = spec.commandLine().getOut();
      o.printf("bdrp console: %s (reading %s; Ctrl-C stops)%n", server.url(), seeds);
      o.flush();
      new CountDownLatch(1).await(); // until interrupted
    }
    return 0;
  }

  /** {@code HOST:PORT} as a base URL, or a URL as given (without a trailing slash). */
  static String baseUrl(String router, boolean tls) {
    if (router.startsWith("http://") || router.startsWith("https://")) {
      return router.endsWith("/") ? router.substring(0, router.length() - 1) : router;
    }
    InetSocketAddress a = Addresses.parse("--router", router, 1);
    return (tls ? "https://" : "http://") + a.getHostString() + ":" + a.getPort();
  }

  private String authorization() throws IOException {
    if (user == null) {
      return null;
    }
    List<String> lines = Files.readAllLines(passwordFile, StandardCharsets.UTF_8);
    if (lines.isEmpty() || lines.get(0).isEmpty()) {
      throw new IllegalArgumentException("--password-file " + passwordFile + " is empty");
    }
    String pair = user + ":" + lines.get(0);
    return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
  }

  /** A TLS context that trusts the certificates of {@code pem} only. */
  static SSLContext trusting(Path pem) throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(pem)) {
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca" + i++, c);
      }
      if (i == 0) {
        throw new IllegalArgumentException("--cacert " + pem + " holds no certificate");
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }
}
