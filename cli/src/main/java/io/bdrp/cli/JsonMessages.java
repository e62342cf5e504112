package io.bdrp.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import java.util.Base64;
import java.util.Map;

/**
 * Messages as JSON objects, one per line, for {@code bdrp pub} and {@code bdrp sub}: each attribute
 * is a member whose JSON type gives its type — a string, an integer (a number without fraction or
 * exponent, 64-bit), a float (a number with a fraction or exponent) or a boolean. The body, if any,
 * is the member {@value #BODY} as base64. Members starting with {@code $} are the format's own: an
 * attribute whose name starts with {@code $} is written with one more ({@code $$body} is the
 * attribute {@code $body}, not the body), and any other member starting with a single {@code $} is
 * refused. The web console's trace form takes messages in this format too.
 */
public final class JsonMessages {
  /** The member that carries the body, base64-encoded. */
  static final String BODY = "$body";

  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonMessages() {}

  /** Parses one line; the error message says what is wrong with it. */
  public static Message parse(String line) {
    JsonNode root;
    try {
      root = JSON.readTree(line);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("expected a JSON object, one per line");
    }
    Message.Builder b = Message.builder();
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      String name = e.getKey();
      JsonNode v = e.getValue();
      if (name.startsWith("$$")) {
        name = name.substring(1); // an attribute whose name starts with $
      } else if (name.startsWith("$") && !name.equals(BODY)) {
        throw new IllegalArgumentException(
            name
                + ": members starting with $ are reserved ("
                + BODY
                + " is the body); write $"
                + name
                + " for an attribute named "
                + name);
      }
      if (name.equals(BODY) && e.getKey().equals(BODY)) {
        if (!v.isTextual()) {
          throw new IllegalArgumentException(BODY + " must be a base64 string");
        }
        try {
          b.body(Base64.getDecoder().decode(v.asText()));
        } catch (IllegalArgumentException ex) {
          throw new IllegalArgumentException(BODY + " is not base64: " + ex.getMessage());
        }
      } else if (v.isTextual()) {
        b.put(name, v.asText());
      } else if (v.isBoolean()) {
        b.put(name, v.asBoolean());
      } else if (v.isIntegralNumber()) {
        if (!v.canConvertToLong()) {
          throw new IllegalArgumentException(name + ": integer " + v + " does not fit 64 bits");
        }
        b.put(name, v.asLong());
      } else if (v.isNumber()) {
        b.put(name, v.asDouble());
      } else {
        throw new IllegalArgumentException(
            name + ": values are strings, numbers or booleans, not " + v.getNodeType());
      }
    }
    return b.build();
  }

  /** One line of JSON for {@code m}. */
  static String format(Message m) {
    ObjectNode o = JSON.createObjectNode();
    for (int i = 0; i < m.size(); i++) {
      Value v = m.value(i);
      String name = m.name(i).startsWith("$") ? "$" + m.name(i) : m.name(i);
      switch (v.type()) {
        case STRING -> o.put(name, v.asString());
        case INTEGER -> o.put(name, v.asLong());
        case DOUBLE -> o.put(name, v.asDouble());
        case BOOLEAN -> o.put(name, v.asBoolean());
      }
    }
    if (m.bodyLength() > 0) {
      o.put(BODY, Base64.getEncoder().encodeToString(m.body()));
    }
    return o.toString();
  }
}
