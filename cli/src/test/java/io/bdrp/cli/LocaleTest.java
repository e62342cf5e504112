package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Non-ASCII arguments under a locale that is not UTF-8: the launcher's locale logic
 * (scripts/utf8-locale.sh, sourced by ./bdrp) makes java read them as UTF-8, and java run directly
 * refuses an argument it could not decode instead of using it changed.
 *
 * <p>Child processes get a clean environment and their non-ASCII argument from the shell's printf
 * (octal UTF-8 bytes), so that neither the locale of the JVM running the tests nor its encoding of
 * a child's argv plays a part.
 */
class LocaleTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path SCRIPT = ROOT.resolve("scripts").resolve("utf8-locale.sh");

  /** The predicate {@code name = "café €"}, built by the shell from UTF-8 bytes. */
  private static final String PREDICATE_ARG =
      "\"name = \\\"$(printf 'caf\\303\\251 \\342\\202\\254')\\\"\"";

  private record Result(int status, String out, String err) {}

  /** Runs {@code script} with bash in a clean environment holding PATH and {@code env}. */
  private static Result bash(Path dir, String script, Map<String, String> env)
      throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", script)
            .redirectOutput(dir.resolve("out").toFile())
            .redirectError(dir.resolve("err").toFile());
    pb.environment().clear();
    pb.environment().put("PATH", System.getenv("PATH"));
    pb.environment()
        .put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    pb.environment().put("CP", System.getProperty("java.class.path"));
    pb.environment().put("SCRIPT", SCRIPT.toString());
    pb.environment().put("BDRP_LOG_LEVEL", "WARN");
    pb.environment().putAll(env);
    Process p = pb.start();
    try {
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "bash -c " + script + " did not end");
      return new Result(
          p.exitValue(),
          Files.readString(dir.resolve("out"), StandardCharsets.UTF_8),
          Files.readString(dir.resolve("err"), StandardCharsets.UTF_8));
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void anArgumentHoldingUFFFDIsRefusedOnlyWhenTheLocaleIsNotUtf8() {
    String[] args = {"predicate", "name = \"caf\uFFFD\uFFFD\""};
    String m = Main.undecodedArgument(args, "ANSI_X3.4-1968");
    assertEquals(
        "bdrp: argument 2 (name = \"caf??\") holds characters that the locale's character set"
            + " (ANSI_X3.4-1968) cannot decode, each marked '?' here; refusing to run with it"
            + " changed. Run java under a UTF-8 locale (e.g. LC_ALL=C.UTF-8), as ./bdrp does when"
            + " one is installed.",
        m);
    assertNull(Main.undecodedArgument(args, "UTF-8"), "typed on purpose under UTF-8");
    assertNull(Main.undecodedArgument(new String[] {"predicate", "x = 1"}, "ANSI_X3.4-1968"));
  }

  @Test
  void javaRunDirectlyUnderLcAllCRefusesANonAsciiArgumentAndSaysWhich(@TempDir Path dir)
      throws Exception {
    Result r =
        bash(
            dir,
            "exec \"$JAVA\" -cp \"$CP\" io.bdrp.cli.Main predicate " + PREDICATE_ARG,
            Map.of("LC_ALL", "C"));
    assertEquals(2, r.status(), "stdout " + r.out() + " stderr " + r.err());
    assertTrue(
        r.err().startsWith("bdrp: argument 2 (name = \"caf?? ???\") holds characters that the"),
        r.err());
    assertTrue(r.err().contains("LC_ALL=C.UTF-8"), r.err());
    assertEquals("", r.out(), "nothing ran with the changed predicate");
  }

  @Test
  void theLaunchersLocaleLogicMakesJavaReadAnArgumentAsUtf8UnderLcAllC(@TempDir Path dir)
      throws Exception {
    assumeTrue(
        utf8LocaleInstalled(dir),
        "no UTF-8 locale in `locale -a`: nothing for the launcher to use");
    Result r =
        bash(
            dir,
            "set -eu; source \"$SCRIPT\"; bdrp_utf8_locale;"
                + " exec \"$JAVA\" -cp \"$CP\" io.bdrp.cli.Main predicate "
                + PREDICATE_ARG,
            Map.of("LC_ALL", "C"));
    assertEquals(0, r.status(), "stdout " + r.out() + " stderr " + r.err());
    assertTrue(r.out().startsWith("name = \"café €\"\n"), r.out());
  }

  @Test
  void theLaunchersLocaleLogicChangesOnlyTheCharacterType(@TempDir Path dir) throws Exception {
    assumeTrue(
        utf8LocaleInstalled(dir),
        "no UTF-8 locale in `locale -a`: nothing for the launcher to use");
    String show =
        "set -eu; source \"$SCRIPT\"; bdrp_utf8_locale;"
            + " echo \"${LC_ALL-unset}|$(locale charmap)|${LC_COLLATE-unset}|${LC_MESSAGES-unset}"
            + "|${LANG-unset}\"";
    // LC_ALL=C: the character type becomes UTF-8, every other category stays C.
    assertEquals("unset|UTF-8|C|C|unset\n", bash(dir, show, Map.of("LC_ALL", "C")).out());
    // LANG=C: only LC_CTYPE is set; LANG still rules the other categories.
    assertEquals("unset|UTF-8|unset|unset|C\n", bash(dir, show, Map.of("LANG", "C")).out());
    // Already UTF-8: nothing changes.
    Result utf8 =
        bash(
            dir,
            "set -eu; source \"$SCRIPT\"; LC_ALL=\"$(locale -a | grep -i -E '\\.utf-?8$' | head -1)\";"
                + " export LC_ALL; bdrp_utf8_locale; echo \"${LC_CTYPE-unset}|$(locale charmap)\"",
            Map.of());
    assertEquals("unset|UTF-8\n", utf8.out(), utf8.err());
  }

  private static boolean utf8LocaleInstalled(Path dir) throws Exception {
    Result r = bash(dir, "locale -a", Map.of());
    return r.status() == 0
        && List.of(r.out().split("\n")).stream()
            .anyMatch(l -> l.toLowerCase(java.util.Locale.ROOT).matches(".*\\.utf-?8"));
  }
}
