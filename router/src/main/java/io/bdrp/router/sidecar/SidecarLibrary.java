package io.bdrp.router.sidecar;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads a native library of the sidecar jar ({@code META-INF/native/NAME.so}): copied to a
 * temporary file, loaded, and the file removed (the mapping stays). When the build could not make
 * the library it left the reason in a file beside it, which becomes the failure's message.
 */
public final class SidecarLibrary {
  private SidecarLibrary() {}

  /**
   * Loads {@code META-INF/native/NAME.so}; null when it loaded, else why not.
   *
   * @param name the library's file name without {@code .so}, such as {@code libbdrp_ring}
   * @param unavailable the file the build writes in its place, such as {@code RING_UNAVAILABLE}
   */
  public static Throwable load(String name, String unavailable) {
    if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
      return new UnsupportedOperationException(name + " runs on Linux only");
    }
    String arch = System.getProperty("os.arch");
    if (!"amd64".equals(arch) && !"x86_64".equals(arch)) {
      return new UnsupportedOperationException(
          "the sidecar library " + name + " is built for x86_64, not " + arch);
    }
    String resource = "META-INF/native/" + name + ".so";
    ClassLoader cl = SidecarLibrary.class.getClassLoader();
    try (InputStream lib = cl.getResourceAsStream(resource)) {
      if (lib == null) {
        try (InputStream why = cl.getResourceAsStream("META-INF/native/" + unavailable)) {
          return new UnsupportedOperationException(
              why != null
                  ? new String(why.readAllBytes(), StandardCharsets.UTF_8).strip()
                  : "the sidecar library is not on the class path (" + resource + ")");
        }
      }
      Path tmp = Files.createTempFile(name, ".so");
      try {
        Files.copy(lib, tmp, StandardCopyOption.REPLACE_EXISTING);
        System.load(tmp.toAbsolutePath().toString());
      } finally {
        Files.deleteIfExists(tmp); // mapped already: the file is not needed any more
      }
      return null;
    } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
      return e;
    }
  }
}
