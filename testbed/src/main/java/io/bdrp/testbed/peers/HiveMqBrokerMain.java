package io.bdrp.testbed.peers;

import com.hivemq.embedded.EmbeddedExtension;
import com.hivemq.embedded.EmbeddedHiveMQ;
import com.hivemq.extension.sdk.api.ExtensionMain;
import com.hivemq.extension.sdk.api.auth.SimpleAuthenticator;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStartOutput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopInput;
import com.hivemq.extension.sdk.api.parameter.ExtensionStopOutput;
import com.hivemq.extension.sdk.api.services.Services;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs one HiveMQ Community Edition broker in its own JVM, the way bench mqtt deploys it:
 *
 * <pre>
 * HiveMqBrokerMain HOME PORT
 * </pre>
 *
 * <p>The broker is HiveMQ's embedded form, with its configuration, data and extensions folders
 * under HOME (a temporary folder of the run) and a {@code config.xml} written there: one TCP
 * listener on 127.0.0.1:PORT, in-memory persistence (nothing on disk, as for the other systems),
 * the per-client queue raised as for Mosquitto, no usage statistics. HiveMQ refuses every client
 * until an extension authenticates them (its distribution ships an allow-all extension for that);
 * an embedded extension here does the same: every CONNECT is accepted.
 *
 * <p>This class is compiled against HiveMQ, which is not part of bdrp-lab.jar: {@link HiveMqSystem}
 * starts it with HiveMQ's own class path first.
 */
public final class HiveMqBrokerMain {
  private HiveMqBrokerMain() {}

  /** The broker's config.xml for a listener on {@code port}. */
  static String config(int port) {
    return """
        <?xml version="1.0"?>
        <hivemq>
          <listeners>
            <tcp-listener>
              <port>%d</port>
              <bind-address>127.0.0.1</bind-address>
            </tcp-listener>
          </listeners>
          <mqtt>
            <queued-messages>
              <max-queue-size>100000</max-queue-size>
            </queued-messages>
          </mqtt>
          <persistence>
            <mode>in-memory</mode>
          </persistence>
          <anonymous-usage-statistics>
            <enabled>false</enabled>
          </anonymous-usage-statistics>
        </hivemq>
        """
        .formatted(port);
  }

  /** Authenticates every client. */
  static final class AllowAll implements ExtensionMain {
    @Override
    public void extensionStart(ExtensionStartInput in, ExtensionStartOutput out) {
      Services.securityRegistry()
          .setAuthenticatorProvider(
              p -> (SimpleAuthenticator) (auth, result) -> result.authenticateSuccessfully());
    }

    @Override
    public void extensionStop(ExtensionStopInput in, ExtensionStopOutput out) {}
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: HiveMqBrokerMain HOME PORT");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    int port = Integer.parseInt(args[1]);
    Path conf = Files.createDirectories(home.resolve("conf"));
    Path data = Files.createDirectories(home.resolve("data"));
    Path extensions = Files.createDirectories(home.resolve("extensions"));
    Files.writeString(conf.resolve("config.xml"), config(port));
    EmbeddedExtension allowAll =
        EmbeddedExtension.builder()
            .withId("bdrp-bench-allow-all")
            .withName("bdrp bench: every client authenticated")
            .withVersion("1")
            .withAuthor("bdrp")
            .withPriority(0)
            .withStartPriority(1000)
            .withExtensionMain(new AllowAll())
            .build();
    EmbeddedHiveMQ broker =
        EmbeddedHiveMQ.builder()
            .withConfigurationFolder(conf)
            .withDataFolder(data)
            .withExtensionsFolder(extensions)
            .withEmbeddedExtension(allowAll)
            .build();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    broker.stop().join();
                    broker.close();
                  } catch (Exception e) {
                    System.err.println("stopping the broker: " + e);
                  }
                  stopped.countDown();
                }));
    broker.start().join();
    System.out.println("HiveMQ started on port " + port);
    stopped.await();
  }
}
