package io.bdrp.router.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import io.bdrp.router.config.MqttOptions;
import io.bdrp.router.metrics.Metrics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** JSON payload fields as attributes: the mapping, its bounds, and payloads that give none. */
class MqttJsonTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ByteBuffer utf8(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  private static Map<String, Value> fields(String json) {
    List<MqttJson.Field> out = new ArrayList<>();
    assertEquals(MqttJson.Result.PARSED, MqttJson.fields(utf8(json), 1 << 20, out), json);
    Map<String, Value> m = new LinkedHashMap<>();
    for (MqttJson.Field f : out) {
      m.put(f.name(), f.value());
    }
    return m;
  }

  private static MqttJson.Result result(String json) {
    List<MqttJson.Field> out = new ArrayList<>();
    MqttJson.Result r = MqttJson.fields(utf8(json), 64, out);
    if (r != MqttJson.Result.PARSED) {
      assertEquals(List.of(), out, "no fields unless parsed");
    }
    return r;
  }

  @Test
  void scalarsAreTypedAndNestedObjectsGiveDottedPaths() {
    Map<String, Value> f =
        fields(
            "{\"temp\": 25.5, \"n\": -17, \"ok\": true, \"off\": false, \"site\": \"a\","
                + " \"pos\": {\"x\": 1, \"y\": {\"z\": \"deep\"}}, \"big\": 9223372036854775808,"
                + " \"e\": 1e3, \"zero\": -0}");
    Map<String, Value> want = new LinkedHashMap<>();
    want.put("mqtt.json.temp", Value.of(25.5));
    want.put("mqtt.json.n", Value.of(-17L));
    want.put("mqtt.json.ok", Value.of(true));
    want.put("mqtt.json.off", Value.of(false));
    want.put("mqtt.json.site", Value.of("a"));
    want.put("mqtt.json.pos.x", Value.of(1L));
    want.put("mqtt.json.pos.y.z", Value.of("deep"));
    want.put("mqtt.json.big", Value.of(9.223372036854775808e18));
    want.put("mqtt.json.e", Value.of(1000.0));
    want.put("mqtt.json.zero", Value.of(0L));
    assertEquals(want, f);
  }

  @Test
  void arraysNullsAndNonFiniteNumbersGiveNothingAndTheFirstOfTwoNamesWins() {
    assertEquals(
        Map.of("mqtt.json.a.b", Value.of(1L), "mqtt.json.k", Value.of(2L)),
        fields(
            "{\"l\": [1, {\"x\": 2}], \"nil\": null, \"inf\": 1e400, \"a.b\": 1,"
                + " \"a\": {\"b\": 3}, \"k\": 2, \"k\": 4}"));
    assertEquals(Map.of(), fields("{}"));
    assertEquals(Map.of(), fields(" \n\t{ } \r\n"));
  }

  @Test
  void depthFieldCountAndNameLengthAreBounded() {
    StringBuilder deep = new StringBuilder();
    for (int i = 0; i < MqttJson.MAX_DEPTH + 1; i++) {
      deep.append("{\"d\": 1, \"o\": ");
    }
    deep.append("{}").append("}".repeat(MqttJson.MAX_DEPTH + 1));
    Map<String, Value> f = fields(deep.toString());
    assertEquals(MqttJson.MAX_DEPTH, f.size(), "fields of the first 8 levels of objects");
    assertTrue(f.containsKey("mqtt.json" + ".o".repeat(MqttJson.MAX_DEPTH - 1) + ".d"));

    StringBuilder many = new StringBuilder("{");
    for (int i = 0; i < 100; i++) {
      many.append(i == 0 ? "" : ",").append("\"f").append(i).append("\":").append(i);
    }
    f = fields(many.append('}').toString());
    assertEquals(MqttJson.MAX_FIELDS, f.size());
    assertTrue(f.containsKey("mqtt.json.f63") && !f.containsKey("mqtt.json.f64"), "the first 64");

    String longest = "n".repeat(255 - MqttJson.PREFIX.length());
    assertEquals(
        Map.of("mqtt.json." + longest, Value.of(1L)),
        fields("{\"" + longest + "\": 1, \"" + longest + "x\": 2}"),
        "an attribute name is at most 255 bytes");
  }

  @Test
  void payloadsThatAreNotOneJsonObjectGiveNoFields() {
    assertEquals(MqttJson.Result.NOT_OBJECT, result("25.5"));
    assertEquals(MqttJson.Result.NOT_OBJECT, result("[{\"a\": 1}]"));
    assertEquals(MqttJson.Result.NOT_OBJECT, result(""));
    assertEquals(MqttJson.Result.NOT_OBJECT, result("   "));
    assertEquals(MqttJson.Result.MALFORMED, result("{\"a\": 1"));
    assertEquals(MqttJson.Result.MALFORMED, result("{\"a\": 1} x"));
    assertEquals(MqttJson.Result.MALFORMED, result("{\"a\": 1} {}"));
    assertEquals(MqttJson.Result.MALFORMED, result("{a: 1}"));
    assertEquals(MqttJson.Result.MALFORMED, result("{\"a\": 01}"));
    assertEquals(MqttJson.Result.TOO_LARGE, result("{\"a\": \"" + "x".repeat(64) + "\"}"));
  }

  @Test
  void theBodyStaysThePayloadAndFieldsThatDoNotFitAFrameAreLeftOut() {
    Metrics registry = new Metrics();
    byte[] payload = "{\"temp\": 30, \"note\": \"warm\"}".getBytes(StandardCharsets.UTF_8);
    MqttJson json = new MqttJson(new MqttOptions(true, 1024), 1 << 20, registry);
    Message m =
        json.build(
            Message.builder().put("mqtt.topic", "t").body(payload), ByteBuffer.wrap(payload));
    assertArrayEquals(payload, m.body());
    assertEquals(30L, m.get("mqtt.json.temp").asLong());
    assertEquals("warm", m.get("mqtt.json.note").asString());

    MqttJson small = new MqttJson(new MqttOptions(true, 1024), 60, registry);
    Message.Builder b = Message.builder().put("mqtt.topic", "t").body(payload);
    Message without = small.build(b, ByteBuffer.wrap(payload));
    assertEquals(1, without.size(), "too large with its fields for a frame of 60 bytes");
    assertArrayEquals(payload, without.body());
    assertTrue(registry.render().contains("bdrp_mqtt_json_payloads_total{result=\"left_out\"} 1"));
  }

  @Provide
  Arbitrary<Map<String, Object>> objects() {
    Arbitrary<Object> scalar =
        Arbitraries.oneOf(
            Arbitraries.longs().map(x -> (Object) x),
            Arbitraries.doubles().filter(Double::isFinite).map(x -> (Object) x),
            Arbitraries.of(true, false).map(x -> (Object) x),
            Arbitraries.strings().ofMaxLength(20).map(x -> (Object) x));
    return Arbitraries.maps(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(10), scalar)
        .ofMaxSize(MqttJson.MAX_FIELDS);
  }

  @Property(tries = 300)
  void everyScalarFieldOfAFlatObjectIsAnAttributeOfItsType(
      @ForAll("objects") Map<String, Object> object) throws Exception {
    Map<String, Value> want = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : object.entrySet()) {
      Object v = e.getValue();
      Value value =
          v instanceof Long l
              ? Value.of((long) l)
              : v instanceof Double d
                  ? Value.of((double) d)
                  : v instanceof Boolean b ? Value.of((boolean) b) : Value.of((String) v);
      want.put(MqttJson.PREFIX + e.getKey(), value);
    }
    String text = JSON.writeValueAsString(object);
    Map<String, Value> got = fields(text);
    assertEquals(want.size(), got.size(), text);
    for (Map.Entry<String, Value> e : want.entrySet()) {
      Value g = got.get(e.getKey());
      if (e.getValue().type() == io.bdrp.encoding.ValueType.DOUBLE
          && g.type() == io.bdrp.encoding.ValueType.INTEGER) {
        continue; // a double Jackson writes without a fraction ("1.0E20" has one; never here)
      }
      assertEquals(e.getValue(), g, text);
    }
  }

  @Property(tries = 500)
  void anyPayloadGivesFieldsOnlyWhenParsedAndNeverThrows(@ForAll byte[] payload) {
    List<MqttJson.Field> out = new ArrayList<>();
    byte[] braced = new byte[payload.length + 1];
    braced[0] = '{';
    System.arraycopy(payload, 0, braced, 1, payload.length);
    MqttJson.Result r = MqttJson.fields(ByteBuffer.wrap(braced), 1 << 16, out);
    assertTrue(r == MqttJson.Result.PARSED || out.isEmpty());
    assertTrue(out.size() <= MqttJson.MAX_FIELDS);
  }
}
