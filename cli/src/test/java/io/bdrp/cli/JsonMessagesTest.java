package io.bdrp.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bdrp.encoding.Message;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** JSON lines of bdrp pub and sub, and --attr values, typed alike. */
class JsonMessagesTest {
  @Test
  void anAttributeNamedLikeTheBodyRoundTripsWithoutTakingItsPlace() {
    Message m =
        Message.builder()
            .put("$body", "an attribute")
            .put("$x", 1L)
            .put("plain", true)
            .body("the body".getBytes(StandardCharsets.UTF_8))
            .build();
    String line = JsonMessages.format(m);
    assertTrue(line.contains("\"$$body\":\"an attribute\""), line);
    assertTrue(line.contains("\"$body\":\""), line);
    Message back = JsonMessages.parse(line);
    assertEquals("an attribute", back.get("$body").asString());
    assertEquals(1L, back.get("$x").asLong());
    assertArrayEquals(m.body(), back.body());
  }

  @Test
  void aMemberWithOneDollarThatIsNotTheBodyIsRefusedWithTheEscape() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonMessages.parse("{\"$x\":1}"));
    assertTrue(e.getMessage().contains("write $$x"), e.getMessage());
  }

  @Test
  void attrValuesAreTypedAsOnStdin() {
    assertEquals("21", PubCommand.attrValue("price", "21"));
    assertEquals("2.5", PubCommand.attrValue("price", "2.5"));
    assertEquals("true", PubCommand.attrValue("ok", "true"));
    assertEquals("\"XYZ\"", PubCommand.attrValue("stock", "XYZ"));
    assertEquals("\"21\"", PubCommand.attrValue("code", "\"21\""));
    for (String refused : new String[] {"null", "{\"a\":1}", "[1,2]"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> PubCommand.attrValue("a", refused), refused);
      assertTrue(e.getMessage().contains("as on stdin"), e.getMessage());
      assertThrows(
          IllegalArgumentException.class,
          () -> JsonMessages.parse("{\"a\":" + refused + "}"),
          "stdin refuses " + refused + " too");
    }
  }
}
