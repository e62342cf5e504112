package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bdrp.router.config.RouterConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bdrp topo configs --k8s}: a federation on Kubernetes, checked as kubectl would take it.
 */
class KubernetesManifestsTest {
  private final StringWriter out = new StringWriter();

  private int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    return cl.execute(args);
  }

  private static List<JsonNode> documents(Path file) throws Exception {
    List<JsonNode> docs = new ArrayList<>();
    try (var it =
        new ObjectMapper(new YAMLFactory()).readerFor(JsonNode.class).readValues(file.toFile())) {
      while (it.hasNext()) {
        JsonNode d = (JsonNode) it.next();
        if (d != null && !d.isNull() && !d.isEmpty()) {
          docs.add(d);
        }
      }
    }
    return docs;
  }

  @Test
  void everyRouterHasAServiceItsNeighboursDialAndAPodRunningItsConfiguration(@TempDir Path dir)
      throws Exception {
    assertEquals(
        0,
        run(
            "topo",
            "configs",
            "routers-8",
            "--k8s",
            "--out",
            dir.toString(),
            "--namespace",
            "fed",
            "--image",
            "registry.example/bdrp:1"),
        out::toString);
    List<JsonNode> docs = documents(dir.resolve("k8s.yaml"));
    Map<String, JsonNode> services = new HashMap<>();
    Map<String, JsonNode> deployments = new HashMap<>();
    JsonNode configMap = null;
    for (JsonNode d : docs) {
      assertEquals("fed", d.at("/metadata/namespace").asText(), d::toString);
      String name = d.at("/metadata/name").asText();
      switch (d.path("kind").asText()) {
        case "ConfigMap" -> configMap = d;
        case "Service" -> services.put(name, d);
        case "Deployment" -> deployments.put(name, d);
        default -> throw new AssertionError("unexpected " + d);
      }
    }
    assertEquals(8, services.size());
    assertEquals(8, deployments.size());
    for (int r = 0; r < 8; r++) {
      String name = "bdrp-router-" + r;
      JsonNode dep = deployments.get(name);
      JsonNode pod = dep.at("/spec/template");
      JsonNode container = pod.at("/spec/containers/0");
      assertEquals("registry.example/bdrp:1", container.path("image").asText());
      assertEquals(1, dep.at("/spec/replicas").asInt());
      assertEquals("Recreate", dep.at("/spec/strategy/type").asText(), "one process per router");
      // The Service selects this router's pod and no other.
      assertEquals(services.get(name).at("/spec/selector"), pod.at("/metadata/labels"));
      for (int o = 0; o < 8; o++) {
        if (o != r) {
          assertNotEquals(
              services.get("bdrp-router-" + o).at("/spec/selector"), pod.at("/metadata/labels"));
        }
      }
      // The pod runs bdrp router with its own file from the ConfigMap, which is a valid
      // configuration of router r whose neighbours are Services at their router port.
      String file = "router-" + r + ".yaml";
      assertEquals(
          List.of("router", "--config", "/etc/bdrp/" + file),
          new ObjectMapper().convertValue(container.path("args"), List.class));
      assertEquals(file, pod.at("/spec/volumes/0/configMap/items/0/key").asText());
      String yaml = configMap.at("/data/" + file.replace("/", "~1")).asText();
      RouterConfig c = RouterConfig.parse(yaml, file);
      assertEquals(r, c.router());
      for (RouterConfig.Neighbour n : c.neighbours()) {
        if (n.address() != null) {
          assertEquals("bdrp-router-" + n.router(), n.address().getHostString());
          JsonNode svc = services.get("bdrp-router-" + n.router());
          assertEquals(n.address().getPort(), svc.at("/spec/ports/1/port").asInt());
          assertEquals("routers", svc.at("/spec/ports/1/name").asText());
        }
      }
    }
  }

  @Test
  void withATokenTheConfigurationsAreASecret(@TempDir Path dir) throws Exception {
    assertEquals(
        0,
        run("topo", "configs", "routers-2", "--k8s", "--out", dir.toString(), "--token", "s3cret"),
        out::toString);
    List<JsonNode> docs = documents(dir.resolve("k8s.yaml"));
    JsonNode secret = docs.get(0);
    assertEquals("Secret", secret.path("kind").asText());
    assertTrue(secret.at("/stringData/router-0.yaml").asText().contains("s3cret"));
    assertTrue(docs.stream().noneMatch(d -> d.path("kind").asText().equals("ConfigMap")));
    JsonNode dep =
        docs.stream().filter(d -> d.path("kind").asText().equals("Deployment")).findFirst().get();
    assertEquals(
        "bdrp-routers", dep.at("/spec/template/spec/volumes/0/secret/secretName").asText());
  }

  @Test
  void hostsAndK8sExcludeEachOther(@TempDir Path dir) throws Exception {
    Path hosts = dir.resolve("hosts.txt");
    Files.writeString(hosts, "0 a\n1 b\n");
    assertEquals(
        2,
        run(
            "topo",
            "configs",
            "routers-2",
            "--k8s",
            "--hosts",
            hosts.toString(),
            "--out",
            dir.resolve("o").toString()));
    assertTrue(out.toString().contains("leave out --hosts"), out::toString);
    assertEquals(2, run("topo", "configs", "routers-2", "--out", dir.resolve("p").toString()));
    assertTrue(out.toString().contains("--hosts FILE, or --k8s"), out::toString);
  }

  /** kubeconform with the schemas of scripts/kubeconform-setup.sh, strict: as the API server. */
  @Test
  void kubeconformFindsTheManifestsValid(@TempDir Path dir) throws Exception {
    String kubeconform = System.getenv("BDRP_KUBECONFORM");
    String schemas = System.getenv("BDRP_K8S_SCHEMAS");
    if (kubeconform == null || schemas == null) {
      // CI installs both (.ci/run runs scripts/kubeconform-setup.sh); elsewhere this is skipped.
      assertTrue(System.getenv("CI") == null, "CI must set BDRP_KUBECONFORM and BDRP_K8S_SCHEMAS");
      Assumptions.abort("kubeconform is not set up: eval \"$(scripts/kubeconform-setup.sh)\"");
    }
    String version = System.getenv().getOrDefault("BDRP_K8S_VERSION", "1.33.0");
    assertEquals(
        0, run("topo", "configs", "routers-8", "--k8s", "--out", dir.resolve("plain").toString()));
    assertEquals(
        0,
        run(
            "topo",
            "configs",
            "routers-8",
            "--k8s",
            "--token",
            "t",
            "--out",
            dir.resolve("secret").toString()));
    for (String variant : List.of("plain", "secret")) {
      Path file = dir.resolve(variant).resolve("k8s.yaml");
      String result = kubeconform(kubeconform, schemas, version, file);
      assertTrue(result.startsWith("0\n"), result);
      assertTrue(result.contains("Valid: 17, Invalid: 0, Errors: 0, Skipped: 0"), result);
    }
    // The same check refuses a manifest with a field Kubernetes does not have.
    Path broken = dir.resolve("broken.yaml");
    Files.writeString(
        broken,
        Files.readString(dir.resolve("plain/k8s.yaml"))
            .replaceFirst("  replicas: 1", "  replicass: 1"));
    String result = kubeconform(kubeconform, schemas, version, broken);
    assertTrue(result.startsWith("1\n") && result.contains("replicass"), result);
  }

  private static String kubeconform(String bin, String schemas, String version, Path file)
      throws Exception {
    Process p =
        new ProcessBuilder(
                bin,
                "-strict",
                "-summary",
                "-kubernetes-version",
                version,
                "-schema-location",
                schemas
                    + "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}"
                    + "/{{ .ResourceKind }}{{ .KindSuffix }}.json",
                file.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kubeconform finished");
    return p.exitValue() + "\n" + output;
  }
}
