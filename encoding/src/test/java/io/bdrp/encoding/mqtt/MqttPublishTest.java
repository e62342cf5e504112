package io.bdrp.encoding.mqtt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Value;
import org.junit.jupiter.api.Test;

/** QoS, expiry and the request/response properties as attributes. */
class MqttPublishTest {

  @Test
  void qosIsTheAttributeOrZero() {
    assertEquals(1, MqttPublish.qos(Message.builder().put(MqttPublish.QOS, 1).build()));
    assertEquals(2, MqttPublish.qos(Message.builder().put(MqttPublish.QOS, 2).build()));
    assertEquals(0, MqttPublish.qos(Message.builder().build()));
    assertEquals(0, MqttPublish.qos(Message.builder().put(MqttPublish.QOS, 3).build()));
    assertEquals(0, MqttPublish.qos(Message.builder().put(MqttPublish.QOS, "1").build()));
  }

  @Test
  void expiresAtIsTheIntegerAttributeOrNever() {
    assertEquals(
        1_700_000_000_000L,
        MqttPublish.expiresAt(
            Message.builder().put(MqttPublish.EXPIRES_AT, 1_700_000_000_000L).build()));
    assertEquals(Long.MAX_VALUE, MqttPublish.expiresAt(Message.builder().build()));
    assertEquals(
        Long.MAX_VALUE,
        MqttPublish.expiresAt(Message.builder().put(MqttPublish.EXPIRES_AT, "soon").build()));
  }

  @Test
  void correlationDataTravelsAsBase64() {
    byte[] data = {0, 1, (byte) 0xff, 'x'};
    Message m = MqttPublish.putCorrelationData(Message.builder(), data).build();
    assertEquals(Value.of("AAH/eA=="), m.get(MqttPublish.CORRELATION_DATA));
    assertArrayEquals(data, MqttPublish.correlationData(m));
    byte[] max = new byte[MqttPublish.MAX_CORRELATION_BYTES];
    assertArrayEquals(
        max,
        MqttPublish.correlationData(
            MqttPublish.putCorrelationData(Message.builder(), max).build()));
    assertThrows(
        IllegalArgumentException.class,
        () -> MqttPublish.putCorrelationData(Message.builder(), new byte[max.length + 1]));
    assertNull(MqttPublish.correlationData(Message.builder().build()));
    assertNull(
        MqttPublish.correlationData(
            Message.builder().put(MqttPublish.CORRELATION_DATA, "not base64!").build()));
  }

  @Test
  void stringsAreReadBack() {
    Message m =
        Message.builder()
            .put(MqttPublish.CONTENT_TYPE, "application/json")
            .put(MqttPublish.RESPONSE_TOPIC, 7)
            .build();
    assertEquals("application/json", MqttPublish.string(m, MqttPublish.CONTENT_TYPE));
    assertNull(MqttPublish.string(m, MqttPublish.RESPONSE_TOPIC));
  }
}
