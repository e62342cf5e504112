package io.bdrp.router.mqtt;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.bdrp.encoding.Limits;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Strings;
import io.bdrp.encoding.Value;
import io.bdrp.encoding.codec.MessageCodec;
import io.bdrp.router.config.MqttOptions;
import io.bdrp.router.metrics.Metrics;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * JSON payload fields as attributes ({@code mqtt.jsonFields} of the router's config, off by
 * default): a PUBLISH whose payload is one JSON object gets an attribute {@code mqtt.json.<path>}
 * for each of its fields that holds a string, a number or a boolean, the path being the field's
 * name, and for a field of a nested object the names from the top joined by dots ({@code {"a":
 * {"b": 1}}} gives {@code mqtt.json.a.b = 1}). So a content filter selects by the payload's fields
 * ({@code sensors/#?mqtt.json.temp > 25}); the body stays the payload, byte for byte.
 *
 * <p>The typing: a string is a string; a number without fraction or exponent within the 64-bit
 * range an integer, any other finite number a double (an integer beyond 64 bits too); {@code true}
 * and {@code false} booleans. Arrays and {@code null} give nothing (nor anything inside an array).
 * Where two fields give one name (a duplicate key, or {@code "a.b"} beside {@code "a": {"b"}}), the
 * first in the text wins.
 *
 * <p><b>Bounds.</b> Only payloads of at most {@link MqttOptions#jsonMaxBytes()} are parsed; fields
 * nested deeper than {@link #MAX_DEPTH} objects, beyond the first {@link #MAX_FIELDS}, whose name
 * would pass {@link Limits#MAX_NAME_BYTES} bytes or whose string value would pass {@link
 * Limits#MAX_STRING_BYTES} give nothing. A payload that is not a JSON object (its first character
 * other than white space is not '{') or is not well-formed JSON (only white space may follow the
 * object) gives no fields at all; and a message to which the fields would add more attributes than
 * {@link Limits#MAX_ATTRIBUTES} allows or make larger than a frame goes without them. Each payload
 * is counted by its result in {@code bdrp_mqtt_json_payloads_total{result}}.
 *
 * <p>Jackson's streaming parser runs on the router's event loop, a cost proportional to the payload
 * (and bounded by {@code mqtt.jsonMaxBytes}), which is why the operator turns it on. Used on the
 * router's event loop; the parse itself is stateless.
 */
final class MqttJson {
  /** Prefix of the attributes of a payload's fields. */
  static final String PREFIX = "mqtt.json.";

  /** Deepest object whose fields give attributes: the payload's own fields are at depth 1. */
  static final int MAX_DEPTH = 8;

  /** Most fields of one payload that give attributes. */
  static final int MAX_FIELDS = 64;

  private static final JsonFactory FACTORY = JsonFactory.builder().build();

  /** A field of a payload as an attribute. */
  record Field(String name, Value value) {}

  /** What came of a payload. */
  enum Result {
    /** A JSON object, its fields (possibly none) as attributes. */
    PARSED("parsed"),
    /** Not a JSON object: nothing parsed. */
    NOT_OBJECT("not_object"),
    /** Starts as an object but is not well-formed JSON: no fields. */
    MALFORMED("malformed"),
    /** Above {@code mqtt.jsonMaxBytes}: not parsed. */
    TOO_LARGE("too_large"),
    /** Parsed, but its fields would make the message too large: left out. */
    LEFT_OUT("left_out");

    final String label;

    Result(String label) {
      this.label = label;
    }
  }

  private final int maxPayloadBytes;
  private final int maxMessageBytes;
  private final Metrics.Counter[] counted = new Metrics.Counter[Result.values().length];

  /**
   * @param maxMessageBytes the largest encoded message that fits a frame
   */
  MqttJson(MqttOptions options, int maxMessageBytes, Metrics registry) {
    this.maxPayloadBytes = options.jsonMaxBytes();
    this.maxMessageBytes = maxMessageBytes;
    for (Result r : Result.values()) {
      counted[r.ordinal()] =
          registry.counter(
              "bdrp_mqtt_json_payloads_total",
              "PUBLISH payloads read for JSON fields (mqtt.jsonFields), by result: parsed (a JSON"
                  + " object), not_object, malformed (no fields given), too_large (above"
                  + " mqtt.jsonMaxBytes, not parsed), left_out (the fields would make the message"
                  + " too large: sent without them).",
              "result",
              r.label);
    }
  }

  /**
   * The message of {@code b}, whose body is {@code body}, with the attributes of the payload's JSON
   * fields when it has some and they fit.
   */
  Message build(Message.Builder b, ByteBuffer body) {
    List<Field> fields = new java.util.ArrayList<>();
    Result r = fields(body, maxPayloadBytes, fields);
    if (fields.isEmpty()) {
      counted[r.ordinal()].inc();
      return b.build();
    }
    Message without = b.build();
    if (without.size() + fields.size() > Limits.MAX_ATTRIBUTES) {
      counted[Result.LEFT_OUT.ordinal()].inc();
      return without;
    }
    for (Field f : fields) {
      b.put(f.name, f.value);
    }
    Message with = b.build();
    if (MessageCodec.encodedLength(with) > maxMessageBytes) {
      counted[Result.LEFT_OUT.ordinal()].inc();
      return without;
    }
    counted[r.ordinal()].inc();
    return with;
  }

  /**
   * Reads the fields of the JSON object {@code body} (its remaining bytes; its position unchanged)
   * into {@code out}, as the class comment says, at most {@code maxBytes} of it. Returns the
   * result; {@code out} is left empty for any but {@link Result#PARSED}.
   */
  static Result fields(ByteBuffer body, int maxBytes, List<Field> out) {
    int n = body.remaining();
    if (n > maxBytes) {
      return Result.TOO_LARGE;
    }
    int start = body.position();
    int i = start;
    int end = start + n;
    while (i < end && isSpace(body.get(i))) {
      i++;
    }
    if (i == end || body.get(i) != '{') {
      return Result.NOT_OBJECT;
    }
    byte[] bytes;
    int offset;
    if (body.hasArray()) {
      bytes = body.array();
      offset = body.arrayOffset() + start;
    } else {
      bytes = new byte[n];
      body.get(start, bytes);
      offset = 0;
    }
    try (JsonParser p = FACTORY.createParser(bytes, offset, n)) {
      p.nextToken(); // START_OBJECT
      object(p, PREFIX, 1, out, new HashSet<>());
      if (p.nextToken() != null) {
        out.clear(); // something after the object
        return Result.MALFORMED;
      }
    } catch (IOException e) { // Jackson's parse errors, its own bounds (nesting, number length)
      out.clear();
      return Result.MALFORMED;
    }
    return Result.PARSED;
  }

  /** The fields of the object whose START_OBJECT {@code p} is at, under {@code prefix}. */
  private static void object(
      JsonParser p, String prefix, int depth, List<Field> out, Set<String> names)
      throws IOException {
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      if (t != JsonToken.FIELD_NAME) {
        throw new IOException("expected a field name"); // not reached: Jackson checks
      }
      String name = prefix + p.currentName();
      JsonToken v = p.nextToken();
      if (v == JsonToken.START_OBJECT) {
        if (depth < MAX_DEPTH) {
          object(p, name + '.', depth + 1, out, names);
        } else {
          p.skipChildren();
        }
        continue;
      }
      if (v == JsonToken.START_ARRAY) {
        p.skipChildren();
        continue;
      }
      Value value = value(p, v);
      if (value != null && out.size() < MAX_FIELDS && validName(name) && names.add(name)) {
        out.add(new Field(name, value));
      }
    }
  }

  /** The value of a scalar token, or null for one that gives no attribute. */
  private static Value value(JsonParser p, JsonToken v) throws IOException {
    switch (v) {
      case VALUE_STRING -> {
        String s = p.getText();
        try {
          Strings.checkStringValue(s);
        } catch (IllegalArgumentException tooLongOrUnpaired) {
          return null;
        }
        return Value.of(s);
      }
      case VALUE_NUMBER_INT -> {
        JsonParser.NumberType type = p.getNumberType();
        if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
          return Value.of(p.getLongValue());
        }
        return finite(p.getDoubleValue());
      }
      case VALUE_NUMBER_FLOAT -> {
        return finite(p.getDoubleValue());
      }
      case VALUE_TRUE -> {
        return Value.of(true);
      }
      case VALUE_FALSE -> {
        return Value.of(false);
      }
      default -> {
        return null; // VALUE_NULL
      }
    }
  }

  private static Value finite(double d) {
    return Double.isFinite(d) ? Value.of(d) : null;
  }

  private static boolean validName(String name) {
    try {
      Strings.checkName(name);
      return true;
    } catch (IllegalArgumentException tooLongOrUnpaired) {
      return false;
    }
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t' || b == '\n' || b == '\r';
  }
}
