package io.bdrp.cli;

import io.bdrp.encoding.Predicate;
import io.bdrp.encoding.PredicateSyntaxException;
import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.EncodedPredicate;
import io.bdrp.encoding.bloom.Encoder;
import io.bdrp.encoding.codec.EncodedPredicateCodec;
import io.bdrp.encoding.codec.PredicateCodec;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code bdrp predicate 'TEXT'}: checks a predicate and shows its canonical form and encoding. */
@Command(
    name = "predicate",
    mixinStandardHelpOptions = true,
    description = {
      "Check a predicate: print its canonical form, its size on the wire and its Bloom "
          + "encoding, or the error with its column. Exits 2 on a syntax error."
    })
public final class PredicateCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "TEXT",
      description = "The predicate, e.g. 'price > 20 && stock = \"XYZ\"'.")
  String text;

  @Mixin BloomOption bloom;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Predicate p;
    try {
      p = Predicate.parse(text);
    } catch (PredicateSyntaxException e) {
      err.println("bdrp: " + e.getMessage());
      err.println("  " + text.replace('\n', ' ').replace('\t', ' '));
      err.println("  " + " ".repeat(Math.max(0, e.column() - 1)) + "^");
      err.flush();
      return 2;
    }
    BloomParameters params = bloom.parameters();
    EncodedPredicate encoded = new Encoder(params).encode(p);
    out.println(p);
    out.printf(
        "%d conjunction%s; %d bytes as a predicate; %d Bloom filter%s (M=%d, k=%d, %s categories), %d bytes encoded%n",
        p.size(),
        p.size() == 1 ? "" : "s",
        PredicateCodec.encodedLength(p),
        encoded.size(),
        encoded.size() == 1 ? "" : "s",
        params.bits(),
        params.hashes(),
        params.categories().configName(),
        EncodedPredicateCodec.encodedLength(encoded));
    out.flush();
    return 0;
  }
}
