package io.bdrp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The library's public API is what {@code public-api.txt} says: {@code javap -public} of every
 * public class compiled from {@code io.bdrp.client}, one line per member prefixed with its class,
 * sorted. The file was taken before the client was split into package-private parts; a change of
 * the public API shows here as a diff, and a deliberate one updates the file.
 */
class PublicApiTest {
  @Test
  void thePublicApiIsTheRecordedOne() throws Exception {
    String expected;
    try (InputStream in = PublicApiTest.class.getResourceAsStream("public-api.txt")) {
      expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertEquals(expected, String.join("\n", publicApi()) + "\n");
  }

  /** The sorted lines of {@code javap -public} for the public classes of this package. */
  static List<String> publicApi() throws IOException, URISyntaxException {
    Path classes =
        Path.of(BdrpClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path dir = classes.resolve("io/bdrp/client");
    List<String> names;
    try (Stream<Path> files = Files.list(dir)) {
      names =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".class"))
              .map(n -> "io.bdrp.client." + n.substring(0, n.length() - ".class".length()))
              .sorted()
              .toList();
    }
    assertTrue(names.contains("io.bdrp.client.BdrpClient"), "classes found in " + dir);
    ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow();
    List<String> lines = new ArrayList<>();
    for (String name : names) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int rc =
          javap.run(
              new PrintWriter(out),
              new PrintWriter(err),
              "-public",
              "-cp",
              classes.toString(),
              name);
      assertEquals(0, rc, () -> "javap " + name + ": " + err);
      String[] text = out.toString().split("\n");
      // text[0] is "Compiled from ...", text[1] the class's declaration.
      if (!text[1].startsWith("public ")) {
        continue;
      }
      lines.add(text[1]);
      for (int i = 2; i < text.length; i++) {
        String member = text[i].strip();
        if (!member.equals("}") && !member.isEmpty()) {
          lines.add(name + ": " + member);
        }
      }
    }
    lines.sort(null);
    return lines;
  }
}
