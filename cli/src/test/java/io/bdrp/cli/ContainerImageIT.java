package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image that {@code mvn -Pimage package} writes to {@code target/bdrp-image.tar}: it
 * holds a router's runtime and no benchmark peer, and its entrypoint runs a router that a client on
 * the host can use. The image is run as a container runtime would: its layers unpacked into a root
 * file system, {@code /proc} and {@code /dev} mounted in a mount namespace of its own, the
 * entrypoint run under chroot as the image's user with the image's environment.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ContainerImageIT {
  private static final Path IMAGE = Path.of("target", "bdrp-image.tar");

  private static final Pattern LISTENING =
      Pattern.compile("router 0 listening: clients [^ ]+:(\\d+),");

  /** The image's configuration and its layers (tar.gz files), unpacked from the tarball. */
  private record Image(JsonNode config, List<Path> layers) {}

  private static Image unpack(Path dir) throws Exception {
    assertTrue(Files.isRegularFile(IMAGE), IMAGE.toAbsolutePath() + " was built (mvn -Pimage)");
    run(dir, "tar", "-xf", IMAGE.toAbsolutePath().toString());
    ObjectMapper json = new ObjectMapper();
    JsonNode manifest = json.readTree(dir.resolve("manifest.json").toFile()).get(0);
    JsonNode config = json.readTree(dir.resolve(manifest.get("Config").asText()).toFile());
    List<Path> layers = new ArrayList<>();
    manifest.get("Layers").forEach(l -> layers.add(dir.resolve(l.asText())));
    return new Image(config.get("config"), layers);
  }

  /** Runs a command in {@code dir}, returning its output; fails the test if it fails. */
  private static String run(Path dir, String... command) throws Exception {
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), () -> String.join(" ", command) + ":\n" + out);
    return out;
  }

  @Test
  void holdsARoutersRuntimeAndNoBenchmarkPeer(@TempDir Path dir) throws Exception {
    Image image = unpack(dir);
    List<String> files = new ArrayList<>();
    for (Path layer : image.layers()) {
      files.addAll(run(dir, "tar", "-tzf", layer.toString()).lines().toList());
    }
    for (String want :
        List.of(
            "opt/java/bin/java",
            "lib64/ld-linux-x86-64.so.2",
            "app/classes/io/bdrp/cli/Main.class",
            "app/jib-classpath-file")) {
      assertTrue(files.stream().anyMatch(f -> f.endsWith(want)), want + " in the image");
    }
    assertTrue(
        files.stream().anyMatch(f -> f.matches(".*app/libs/bdrp-router-[^/]*\\.jar")),
        "the router's jar in the image");
    List<String> peers =
        files.stream()
            .filter(f -> f.matches("(?i).*(activemq|jnats|bdrp-testbed|bdrp-benchmarks).*"))
            .toList();
    assertEquals(List.of(), peers, "benchmark peers in the image");
  }

  @Test
  void itsEntrypointRunsARouterThatAClientUses(@TempDir Path dir) throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      if (System.getenv("CI") != null) {
        fail("the image's run test needs root (chroot, mounts) and CI runs as root");
      }
      Assumptions.abort("running the image needs root (chroot, mounts)");
    }
    Image image = unpack(dir);
    Path root = Files.createDirectories(dir.resolve("root"));
    for (Path layer : image.layers()) {
      run(root, "tar", "-xzf", layer.toString());
    }
    Files.createDirectories(root.resolve("proc"));
    Files.createDirectories(root.resolve("dev"));
    Path config = Files.createDirectories(root.resolve("etc/bdrp")).resolve("router-0.yaml");
    Files.writeString(
        config, "router: 0\nlisten: {clients: \"127.0.0.1:0\", routers: \"127.0.0.1:0\"}\n");

    // In a mount namespace of its own: /proc and /dev mounted into the root, then, with the
    // image's environment alone, chroot to it as the image's user and exec the entrypoint.
    String chroot = run(dir, "sh", "-c", "command -v chroot").strip();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                "mount -t proc proc \"$0/proc\" && mount --rbind /dev \"$0/dev\" && exec env -i \"$@\"",
                root.toString()));
    image.config().get("Env").forEach(e -> cmd.add(e.asText()));
    cmd.addAll(
        List.of(chroot, "--userspec=" + image.config().get("User").asText(), root.toString()));
    image.config().get("Entrypoint").forEach(a -> cmd.add(a.asText()));
    cmd.addAll(List.of("router", "--config", "/etc/bdrp/router-0.yaml"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(dir.resolve("stderr").toFile());
    Process router = pb.start();
    try {
      int port = clientPort(router, dir);
      BlockingQueue<Message> received = new ArrayBlockingQueue<>(4);
      try (BdrpClient client = BdrpClient.builder().router("127.0.0.1", port).connect()) {
        client.subscribe(Predicate.parse("x = 1"), received::add).get(30, TimeUnit.SECONDS);
        client.sendAcknowledged(Message.builder().put("x", 1L).build()).get(30, TimeUnit.SECONDS);
        Message m = received.poll(30, TimeUnit.SECONDS);
        assertTrue(m != null, "the router in the image delivered the message");
        assertEquals(1L, m.get("x").asLong());
      }
    } finally {
      router.destroy(); // SIGTERM to the router (the exec chain kept its PID)
      if (!router.waitFor(30, TimeUnit.SECONDS)) {
        router.destroyForcibly().waitFor();
      }
    }
    assertEquals(
        143, router.exitValue(), "stopped by SIGTERM: " + Files.readString(dir.resolve("stderr")));
  }

  /** The client port from the router's "listening" line. */
  private static int clientPort(Process router, Path dir) throws IOException {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(router.getInputStream(), StandardCharsets.UTF_8));
    for (String line; (line = out.readLine()) != null; ) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
    }
    fail(
        "the router in the image exited before listening: "
            + Files.readString(dir.resolve("stderr")));
    return -1;
  }
}
