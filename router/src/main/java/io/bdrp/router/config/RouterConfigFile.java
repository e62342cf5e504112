package io.bdrp.router.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.bdrp.router.links.Link;
import java.io.IOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A router's configuration file as it is written: records that Jackson binds the YAML to, one per
 * section, with every field optional (null when absent). Binding refuses an unknown field, and a
 * value of the wrong kind (text where a number goes, a number where text goes, a fraction where an
 * integer goes, null where a number or boolean goes); {@link RouterConfigCheck} then checks the
 * values and builds the {@link RouterConfig}. Every error names the field by its path.
 */
final class RouterConfigFile {
  private RouterConfigFile() {}

  /** The top level. */
  record Root(
      BigInteger router,
      BigInteger epoch,
      Listen listen,
      List<Link> neighbours,
      Routing routing,
      Bloom bloom,
      LimitsSection limits,
      Auth auth,
      Tls tls,
      String fastPath,
      Mqtt mqtt) {}

  /** {@code mqtt}: the fields of {@link MqttOptions}. */
  record Mqtt(Boolean jsonFields, BigInteger jsonMaxBytes, Boolean confirmedAcks) {}

  /** {@code listen}: addresses as HOST:PORT. */
  record Listen(String clients, String routers, String metrics, String udp, String mqtt) {}

  /** An entry of {@code neighbours}. */
  record Link(BigInteger router, String address, BigInteger cost, String transport, String admin) {}

  /** {@code routing}: the fields of {@link io.bdrp.routing.RoutingConfig}. */
  record Routing(
      BigInteger helloIntervalMs,
      BigInteger deadIntervalMs,
      BigInteger updateIntervalMs,
      BigInteger updatePacingMs,
      BigInteger routeExpiryMs,
      BigInteger sourceGcMs,
      BigInteger seqnoRequestHops,
      BigInteger predicateExpiryMs,
      BigInteger hopLimit,
      Double broadcastFraction,
      BigInteger maxRouters,
      BigInteger maxEpochAheadMs,
      BigInteger maxOriginFilters,
      BigInteger maxOriginFilterBytes,
      BigInteger maxPredicateFilterBytes,
      Boolean acceptMatchAll) {}

  /** {@code bloom}. */
  record Bloom(BigInteger bits, BigInteger hashes, String categories) {}

  /** {@code limits}: the fields of {@link RouterLimits} and of its host limits. */
  record LimitsSection(
      BigInteger maxFrameBytes,
      BigInteger linkHighWaterBytes,
      BigInteger linkLowWaterBytes,
      BigInteger hostHighWaterBytes,
      BigInteger hostLowWaterBytes,
      BigInteger maxClients,
      BigInteger maxDatagramBytes,
      BigInteger udpReceiveBufferBytes,
      BigInteger udpSendBufferBytes,
      BigInteger helloTimeoutMs,
      BigInteger maxHandshakes,
      BigInteger slowConsumerMs,
      BigInteger inboundBufferBytes,
      BigInteger linkControlPercent,
      BigInteger linkControlFramesPerSecond,
      BigInteger ringBytes,
      BigInteger ringWatermarkBytes,
      BigInteger maxFiltersPerHost,
      BigInteger maxFiltersPerUser,
      BigInteger predicateChangesPerSecond,
      BigInteger maxSessionsPerUser,
      BigInteger keepAliveMs,
      BigInteger mqttSessionExpiryMaxSeconds,
      BigInteger mqttQueuedMessages,
      BigInteger mqttQueuedBytes,
      BigInteger mqttAbsentSessions,
      BigInteger reliableRetentionMessages,
      BigInteger reliableRetentionBytes,
      BigInteger reliableRetentionMs) {}

  /** {@code auth}. */
  record Auth(String routerToken, Clients clients, MetricsUser metrics, String udp) {}

  /**
   * {@code auth.clients}; {@code anonymous} is true, false or a map of {@link Grants}, so it is
   * bound as a tree and read by the check.
   */
  record Clients(List<User> users, JsonNode anonymous) {}

  /** An entry of {@code auth.clients.users}. */
  record User(String name, String token, String subscribe, String publish) {}

  /** {@code auth.clients.anonymous} as a map. */
  record Grants(String subscribe, String publish) {}

  /** {@code auth.metrics}. */
  record MetricsUser(String user, String password) {}

  /** {@code tls}. */
  record Tls(String cert, String key, String ca, Boolean metrics, String clientCa) {}

  private static final Set<JsonToken> INT = Set.of(JsonToken.VALUE_NUMBER_INT);
  private static final Set<JsonToken> NUMBER =
      Set.of(JsonToken.VALUE_NUMBER_INT, JsonToken.VALUE_NUMBER_FLOAT);
  private static final Set<JsonToken> BOOLEAN = Set.of(JsonToken.VALUE_TRUE, JsonToken.VALUE_FALSE);

  /** Binds as this file expects: no coercion between kinds, no unknown fields. */
  static final ObjectMapper MAPPER =
      YAMLMapper.builder()
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .withCoercionConfig(
              LogicalType.Textual,
              c ->
                  c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                      .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                      .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
          .addModule(
              new SimpleModule()
                  .addDeserializer(
                      BigInteger.class,
                      new Strict<>(BigInteger.class, JsonParser::getBigIntegerValue, INT))
                  .addDeserializer(
                      Double.class, new Strict<>(Double.class, JsonParser::getDoubleValue, NUMBER))
                  .addDeserializer(
                      Boolean.class,
                      new Strict<>(Boolean.class, JsonParser::getBooleanValue, BOOLEAN)))
          .build();

  /** Reads a scalar of {@code T}'s kind. */
  private interface Read<T> {
    T from(JsonParser p) throws IOException;
  }

  /**
   * A number or boolean, only from a token of its kind ({@code '3'} is not a number), that may be
   * absent (null) but not written as null.
   */
  private static final class Strict<T> extends StdScalarDeserializer<T> {
    private static final long serialVersionUID = 1L;
    private final transient Read<T> read;
    private final transient Set<JsonToken> tokens;

    Strict(Class<T> type, Read<T> read, Set<JsonToken> tokens) {
      super(type);
      this.read = read;
      this.tokens = tokens;
    }

    @Override
    @SuppressWarnings("unchecked")
    public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (tokens.contains(p.currentToken())) {
        return read.from(p);
      }
      return (T) ctxt.handleUnexpectedToken(handledType(), p);
    }

    @Override
    public T getNullValue(DeserializationContext ctxt) throws JsonMappingException {
      return ctxt.reportInputMismatch(this, "null");
    }

    @Override
    public Object getAbsentValue(DeserializationContext ctxt) {
      return null;
    }
  }

  /**
   * Reads {@code yaml} into a {@link Root}.
   *
   * @throws RouterConfig.ConfigException naming {@code source} and the field
   */
  static Root read(String yaml, String source) {
    JsonNode tree;
    try {
      tree = MAPPER.readTree(yaml);
    } catch (JacksonException e) {
      throw new RouterConfig.ConfigException(
          source + ": not valid YAML: " + e.getOriginalMessage());
    }
    if (tree == null || !tree.isObject()) {
      throw new RouterConfig.ConfigException(source + ": expected a mapping at the top level");
    }
    return bind(tree, Root.class, source, "");
  }

  /** {@code tree} as a {@code type}; errors name the field below {@code path}. */
  static <T> T bind(JsonNode tree, Class<T> type, String source, String path) {
    try {
      return MAPPER.treeToValue(tree, type);
    } catch (JsonMappingException e) {
      throw new RouterConfig.ConfigException(source + ": " + problem(e, path));
    } catch (JacksonException e) {
      throw new RouterConfig.ConfigException(source + ": " + path + ": " + e.getOriginalMessage());
    }
  }

  /** PATH: WHAT for a binding error. */
  private static String problem(JsonMappingException e, String prefix) {
    StringBuilder path = new StringBuilder(prefix);
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getFieldName() != null) {
        path.append(path.isEmpty() ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        path.append('[').append(r.getIndex()).append(']');
      }
    }
    String where = path.isEmpty() ? "(top level)" : path.toString();
    if (e instanceof UnrecognizedPropertyException u) {
      String known =
          new TreeSet<>(u.getKnownPropertyIds())
              .stream().map(String::valueOf).collect(Collectors.joining(", "));
      return where + ": unknown field (known: " + known + ")";
    }
    if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
      return where + ": expected " + kind(m.getTargetType()) + ", got " + value(e);
    }
    return where + ": " + e.getOriginalMessage();
  }

  /** What a field of {@code type} holds, as an error says it. */
  private static String kind(Class<?> type) {
    if (type == BigInteger.class) {
      return "an integer";
    } else if (type == Double.class) {
      return "a number";
    } else if (type == Boolean.class) {
      return "true or false";
    } else if (type == String.class) {
      return "a string";
    } else if (List.class.isAssignableFrom(type)) {
      return "a list";
    }
    return "a mapping";
  }

  /** The value the parser stopped at, as YAML would show it. */
  private static String value(JsonMappingException e) {
    if (!(e.getProcessor() instanceof JsonParser p) || p.currentToken() == null) {
      return "null";
    }
    JsonToken t = p.currentToken();
    try {
      return switch (t) {
        case START_OBJECT, FIELD_NAME -> "a mapping";
        case START_ARRAY -> "a list";
        case VALUE_STRING -> "\"" + p.getText() + "\"";
        default -> p.getText();
      };
    } catch (java.io.IOException io) {
      return t.toString();
    }
  }
}
