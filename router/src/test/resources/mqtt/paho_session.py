"""An MQTT 5 client on paho-mqtt 2.x that resumes its session, for the router's tests.

  paho_session.py HOST PORT CLIENT_ID FILTER COUNT
      connects with Clean Start 0 and a Session Expiry Interval of 3600 s and prints
      "present 0" or "present 1" (the CONNACK's Session Present); with COUNT 0, subscribes
      to FILTER at QoS 2, prints "subscribed" once the SUBACK is in and disconnects; else
      prints "topic payload qos" for COUNT messages, then disconnects
"""
import sys
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties


def main(host, port, client_id, topic_filter, count):
    left = [int(count)]
    done = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)

    def on_connect(client, userdata, flags, reason, properties):
        print("present", 1 if flags.session_present else 0, flush=True)
        if left[0] == 0:
            client.subscribe(topic_filter, qos=2)

    def on_subscribe(client, userdata, mid, reasons, properties):
        print("subscribed" if not any(r.is_failure for r in reasons) else "refused", flush=True)
        done.set()

    def on_message(client, userdata, m):
        print(m.topic, m.payload.decode(), m.qos, flush=True)
        left[0] -= 1
        if left[0] == 0:
            done.set()

    c.on_connect = on_connect
    c.on_subscribe = on_subscribe
    c.on_message = on_message
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 3600
    c.connect(host, int(port), clean_start=False, properties=props)
    c.loop_start()
    done.wait(60)
    c.disconnect()
    c.loop_stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
