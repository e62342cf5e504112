package io.bdrp.encoding.codec;

import io.bdrp.encoding.Message;
import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.RandomModel;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.Encoder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Writes the seed corpus of {@code EncodingJazzerTest} from the real encoders into {@code
 * src/test/resources/io/bdrp/encoding/EncodingJazzerTestInputs/}. Not a test of the build (its name
 * does not match surefire's patterns); run it by name after a format change, and commit what
 * changed:
 *
 * <pre>mvn -pl encoding test -Dtest=FuzzSeeds</pre>
 */
class FuzzSeeds {
  static final Path INPUTS =
      Path.of("src/test/resources/io/bdrp/encoding/EncodingJazzerTestInputs");

  /** Texts of the predicate language, valid and not, as in docs/predicate-language.md. */
  static final List<String> TEXTS =
      List.of(
          "stock = \"XYZ\" && price > 20 || keywords contains \"Italy\"",
          "exists(price)",
          "(agency = \"AP\" || agency = \"Reuters\") && priority >= 2",
          "\"content-type\" prefix \"text/\" && urgent = true",
          "false",
          "x != 5 && b != true && s suffix \"\\u00e9\\ud83d\\ude00\" && d <= -1.5e-3",
          "((a = 1 || b = 2) && (c = 3 || d = 4)) || \"exists\" = false && z < 9223372036854775807",
          "x >= 4 && x <= 4 && y > 20.0 && t = \"tab\\tq\\\"\\\\\\/\\b\\f\\n\\r\"",
          "a = 1 &&",
          "a = \"x\\q\"");

  @Test
  void write() throws IOException {
    BloomParameters[] params = {
      BloomParameters.DEFAULT, new BloomParameters(64, 1), new BloomParameters(130, 3)
    };
    write("messageCodec", "empty", MessageCodec.toBytes(GoldenVectors.EMPTY_MESSAGE));
    write("messageCodec", "every-type", MessageCodec.toBytes(GoldenVectors.EVERY_TYPE));
    write("messageCodec", "edge-values", MessageCodec.toBytes(GoldenVectors.EDGE_VALUES));
    write(
        "messageCodec",
        "with-body",
        MessageCodec.toBytes(
            Message.builder().put("a", 1L).body("body".getBytes(StandardCharsets.UTF_8)).build()));
    write("predicateCodec", "none", PredicateCodec.toBytes(Predicate.NONE));
    write("predicateCodec", "every-operator", PredicateCodec.toBytes(GoldenVectors.EVERY_OPERATOR));
    write(
        "predicateCodec",
        "several-conjunctions",
        PredicateCodec.toBytes(GoldenVectors.SEVERAL_CONJUNCTIONS));
    for (int i = 0; i < TEXTS.size(); i++) {
      write("predicateParser", "text-" + i, TEXTS.get(i).getBytes(StandardCharsets.UTF_8));
    }
    RandomModel model = new RandomModel(1000);
    for (int i = 0; i < 6; i++) {
      write("messageCodec", "random-" + i, MessageCodec.toBytes(model.message()));
      Predicate p = model.predicate(3, 4);
      while (p.isEmpty()) { // random constraints often contradict: keep those that do not
        p = model.predicate(3, 4);
      }
      write("predicateCodec", "random-" + i, PredicateCodec.toBytes(p));
      write("predicateParser", "random-" + i, p.toString().getBytes(StandardCharsets.UTF_8));
      Encoder encoder = new Encoder(params[i % params.length]);
      write(
          "encodedPredicateCodec",
          "random-" + i,
          EncodedPredicateCodec.toBytes(encoder.encode(model.predicate(2, 3))));
    }
  }

  /**
   * Seeds of the allocation target: the shapes that cost a decoder most per input byte. The first
   * is the attack on the dense decoder: the largest count, a byte a filter.
   */
  @Test
  void writeAllocationSeeds() throws IOException {
    String t = "encodedPredicateAllocation";
    write(t, "many-empty-filters", EncodedPredicateAllocationTest.manyEmptyFilters(8192));
    write(
        t,
        "one-bit-filters",
        EncodedPredicateAllocationTest.oneBitFilters(BloomParameters.DEFAULT, 1024));
    write(
        t,
        "two-bit-filters-m64",
        EncodedPredicateAllocationTest.twoBitFilters(new BloomParameters(64, 1), 2016));
    write(
        t,
        "bitmap-filters",
        EncodedPredicateAllocationTest.bitmapFilters(BloomParameters.DEFAULT, 8));
    write(
        t,
        "bitmap-filters-m130",
        EncodedPredicateAllocationTest.bitmapFilters(new BloomParameters(130, 1), 20));
  }

  private static void write(String target, String name, byte[] bytes) throws IOException {
    Path dir = INPUTS.resolve(target);
    Files.createDirectories(dir);
    Files.write(dir.resolve(name), bytes);
  }
}
