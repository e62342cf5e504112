package io.bdrp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A federation on Kubernetes, from the router configurations of {@code bdrp topo configs --k8s}:
 * the configurations in one ConfigMap (a Secret when they hold a router token), and for each router
 * a Service named {@link #serviceName} (the address its neighbours dial and clients use inside the
 * cluster) and a Deployment of one pod that runs {@code bdrp router} with its file. A Deployment
 * replaces its pod by stopping the old one first (strategy Recreate): two processes must never run
 * one router number at once.
 */
final class KubernetesManifests {
  private KubernetesManifests() {}

  static final int CLIENT_PORT = 7400;
  static final int ROUTER_PORT = 7500;
  static final int METRICS_PORT = 9400;

  /** Where the configurations are mounted in each pod. */
  static final String CONFIG_DIR = "/etc/bdrp";

  private static final ObjectMapper YAML =
      new ObjectMapper(
              YAMLFactory.builder()
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                  .enable(YAMLGenerator.Feature.LITERAL_BLOCK_STYLE)
                  // "9400" as an annotation is a string: quoted, or YAML would read a number.
                  .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
                  .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                  .build())
          // Keys in order, so that the same federation writes the same bytes.
          .enable(com.fasterxml.jackson.databind.SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  /** The Service (and DNS name) of router {@code r}. */
  static String serviceName(int r) {
    return "bdrp-router-" + r;
  }

  /**
   * The manifests, as one YAML stream of documents.
   *
   * @param configs router number to its configuration's file name and text, in router order
   * @param image the container image; its entrypoint is the bdrp command
   * @param namespace the namespace of every object, or null for kubectl's current one
   * @param secret whether the configurations hold a secret (a router token)
   */
  static String write(
      Map<Integer, Map.Entry<String, String>> configs,
      String image,
      String namespace,
      boolean secret) {
    List<Map<String, Object>> docs = new ArrayList<>();
    String configName = "bdrp-routers";
    Map<String, Object> data = new LinkedHashMap<>();
    configs.values().forEach(e -> data.put(e.getKey(), e.getValue()));
    Map<String, Object> config =
        object("v1", secret ? "Secret" : "ConfigMap", configName, namespace, labels(null));
    if (secret) {
      config.put("type", "Opaque");
      config.put("stringData", data);
    } else {
      config.put("data", data);
    }
    docs.add(config);
    for (Map.Entry<Integer, Map.Entry<String, String>> e : configs.entrySet()) {
      int r = e.getKey();
      String file = e.getValue().getKey();
      docs.add(service(r, namespace));
      docs.add(deployment(r, file, image, namespace, configName, secret));
    }
    StringBuilder out = new StringBuilder();
    out.append(
        "# A bdrp federation, written by bdrp topo configs --k8s: kubectl apply -f k8s.yaml\n");
    try {
      for (Map<String, Object> d : docs) {
        out.append("---\n").append(YAML.writeValueAsString(d));
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("maps of strings and numbers always write", e);
    }
    return out.toString();
  }

  private static Map<String, Object> labels(Integer router) {
    Map<String, Object> l = new LinkedHashMap<>();
    l.put("app.kubernetes.io/name", "bdrp");
    l.put("app.kubernetes.io/component", "router");
    if (router != null) {
      l.put("app.kubernetes.io/instance", serviceName(router));
    }
    return l;
  }

  /** An object of {@code kind} with its metadata; the caller adds its body. */
  private static Map<String, Object> object(
      String apiVersion, String kind, String name, String namespace, Map<String, Object> labels) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", name);
    if (namespace != null) {
      m.put("namespace", namespace);
    }
    m.put("labels", labels);
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("apiVersion", apiVersion);
    o.put("kind", kind);
    o.put("metadata", m);
    return o;
  }

  /** A router's three ports, as a Service's or as a container's. */
  private static List<Map<String, Object>> ports(boolean service) {
    return List.of(
        port("clients", CLIENT_PORT, service),
        port("routers", ROUTER_PORT, service),
        port("metrics", METRICS_PORT, service));
  }

  private static Map<String, Object> port(String name, int port, boolean service) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("name", name);
    if (service) {
      p.put("port", port);
      p.put("targetPort", name);
    } else {
      p.put("containerPort", port);
    }
    p.put("protocol", "TCP");
    return p;
  }

  private static Map<String, Object> service(int r, String namespace) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("selector", labels(r));
    spec.put("ports", ports(true));
    Map<String, Object> s = object("v1", "Service", serviceName(r), namespace, labels(r));
    s.put("spec", spec);
    return s;
  }

  private static Map<String, Object> deployment(
      int r, String file, String image, String namespace, String configName, boolean secret) {
    Map<String, Object> container = new LinkedHashMap<>();
    container.put("name", "router");
    container.put("image", image);
    container.put("args", List.of("router", "--config", CONFIG_DIR + "/" + file));
    container.put("ports", ports(false));
    // Ready once it answers on its metrics port; alive while it accepts on its router port.
    container.put(
        "readinessProbe",
        Map.of("httpGet", Map.of("path", "/metrics", "port", "metrics"), "periodSeconds", 5));
    container.put(
        "livenessProbe",
        Map.of(
            "tcpSocket", Map.of("port", "routers"),
            "initialDelaySeconds", 10,
            "periodSeconds", 10,
            "failureThreshold", 6));
    container.put(
        "resources",
        Map.of(
            "requests", Map.of("cpu", "250m", "memory", "512Mi"),
            "limits", Map.of("memory", "1Gi")));
    container.put(
        "volumeMounts",
        List.of(Map.of("name", "config", "mountPath", CONFIG_DIR, "readOnly", true)));
    Map<String, Object> items = Map.of("key", file, "path", file);
    Map<String, Object> volume = new LinkedHashMap<>();
    volume.put("name", "config");
    if (secret) {
      volume.put("secret", Map.of("secretName", configName, "items", List.of(items)));
    } else {
      volume.put("configMap", Map.of("name", configName, "items", List.of(items)));
    }
    Map<String, Object> podSpec = new LinkedHashMap<>();
    podSpec.put("containers", List.of(container));
    podSpec.put("volumes", List.of(volume));
    Map<String, Object> template = new LinkedHashMap<>();
    Map<String, Object> podMeta = new LinkedHashMap<>();
    podMeta.put("labels", labels(r));
    podMeta.put(
        "annotations",
        Map.of(
            "prometheus.io/scrape", "true",
            "prometheus.io/port", Integer.toString(METRICS_PORT),
            "prometheus.io/path", "/metrics"));
    template.put("metadata", podMeta);
    template.put("spec", podSpec);
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("replicas", 1);
    spec.put("strategy", Map.of("type", "Recreate"));
    spec.put("selector", Map.of("matchLabels", labels(r)));
    spec.put("template", template);
    Map<String, Object> d = object("apps/v1", "Deployment", serviceName(r), namespace, labels(r));
    d.put("spec", spec);
    return d;
  }
}
