package example;

import io.bdrp.client.BdrpClient;
import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** Subscribes to quotes of one stock, publishes one, and prints what arrives. */
public final class ClientQuickstart {
  public static void main(String[] args) throws Exception {
    String router = args.length > 0 ? args[0] : "127.0.0.1:7400";
    int colon = router.lastIndexOf(':');
    BlockingQueue<Message> received = new ArrayBlockingQueue<>(16);
    try (BdrpClient client =
        BdrpClient.builder()
            .router(router.substring(0, colon), Integer.parseInt(router.substring(colon + 1)))
            .name("quickstart")
            .connect()) {
      // Wait until the router holds the predicate: a message sent before it could not match.
      client
          .subscribe(Predicate.parse("stock = \"XYZ\" && price > 20"), received::add)
          .get(10, TimeUnit.SECONDS);
      // Acknowledged: the future completes once the router has taken the message.
      client
          .sendAcknowledged(Message.builder().put("stock", "XYZ").put("price", 21L).build())
          .get(10, TimeUnit.SECONDS);
      // Handlers run on the client's callback thread; this thread waits for them.
      Message m = received.poll(10, TimeUnit.SECONDS);
      System.out.println(m == null ? "nothing arrived" : "received " + m);
    }
  }
}
