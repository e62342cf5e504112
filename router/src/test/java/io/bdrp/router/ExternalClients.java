package io.bdrp.router;

import java.io.File;
import java.util.concurrent.TimeUnit;

/**
 * The MQTT clients of other projects that tests run against routers: Mosquitto's command-line
 * clients and a Python with paho-mqtt 2 ({@code BDRP_PYTHON} if set, as CI makes it, else {@code
 * python3}). Tests skip, saying so, where one is missing.
 */
final class ExternalClients {
  private ExternalClients() {}

  /** Whether {@code command} is an executable on the {@code PATH}. */
  static boolean installed(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (new File(dir, command).canExecute()) {
        return true;
      }
    }
    return false;
  }

  /** The Python interpreter the tests use. */
  static String python() {
    String p = System.getenv("BDRP_PYTHON");
    return p == null || p.isBlank() ? "python3" : p;
  }

  /** Whether {@link #python()} has paho-mqtt 2. */
  static boolean paho2() {
    try {
      Process p =
          new ProcessBuilder(
                  python(), "-c", "import paho.mqtt; assert paho.mqtt.__version__.startswith('2.')")
              .redirectErrorStream(true)
              .start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (Exception e) {
      return false;
    }
  }
}
