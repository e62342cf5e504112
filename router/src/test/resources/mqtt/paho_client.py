"""An MQTT 5 client on paho-mqtt 2.x, for the router's tests.

  paho_client.py pub HOST PORT TOPIC PAYLOAD VALUE   publishes at QoS 1 with user property value=VALUE
  paho_client.py sub HOST PORT FILTER COUNT          subscribes at QoS 1, prints "topic payload value"
                                                     for COUNT messages, then exits; prints
                                                     "subscribed" once the SUBACK is in
"""
import sys
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties


def client():
    return mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)


def pub(host, port, topic, payload, value):
    c = client()
    c.connect(host, int(port))
    c.loop_start()
    props = Properties(PacketTypes.PUBLISH)
    props.UserProperty = [("value", value)]
    info = c.publish(topic, payload, qos=1, properties=props)
    info.wait_for_publish(timeout=20)
    if not info.is_published():
        sys.exit("not acknowledged")
    c.disconnect()
    c.loop_stop()


def sub(host, port, topic_filter, count):
    left = [int(count)]
    done = threading.Event()
    c = client()

    def on_connect(client, userdata, flags, reason, properties):
        client.subscribe(topic_filter, qos=1)

    def on_subscribe(client, userdata, mid, reasons, properties):
        if any(r.is_failure for r in reasons):
            print("refused", [str(r) for r in reasons], flush=True)
            done.set()
            return
        print("subscribed", flush=True)

    def on_message(client, userdata, m):
        value = dict(m.properties.UserProperty).get("value") if hasattr(m.properties, "UserProperty") else None
        print(m.topic, m.payload.decode(), value, flush=True)
        left[0] -= 1
        if left[0] == 0:
            done.set()

    c.on_connect = on_connect
    c.on_subscribe = on_subscribe
    c.on_message = on_message
    c.connect(host, int(port))
    c.loop_start()
    done.wait(60)
    c.disconnect()
    c.loop_stop()


if __name__ == "__main__":
    {"pub": pub, "sub": sub}[sys.argv[1]](*sys.argv[2:])
