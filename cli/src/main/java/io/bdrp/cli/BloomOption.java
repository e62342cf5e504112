package io.bdrp.cli;

import io.bdrp.encoding.bloom.BloomParameters;
import io.bdrp.encoding.bloom.CategoryScheme;
import picocli.CommandLine.Option;

/** The {@code --bloom M/k} option shared by the commands that encode predicates. */
final class BloomOption {
  @Option(
      names = "--bloom",
      defaultValue = "8192/1",
      description =
          "Bloom filter bits/hashes, M/k; all routers use the same (default: ${DEFAULT-VALUE}).")
  String bloom;

  @Option(
      names = "--categories",
      defaultValue = "sharp",
      description =
          "Category scheme: sharp (prefix, suffix, substring and range categories) or paper"
              + " (the paper's); all routers use the same (default: ${DEFAULT-VALUE}).")
  String categories;

  /** The parameters, or an IllegalArgumentException naming the option and the expected form. */
  BloomParameters parameters() {
    String[] mk = bloom.split("/");
    try {
      if (mk.length == 2) {
        return new BloomParameters(
            Integer.parseInt(mk[0].trim()),
            Integer.parseInt(mk[1].trim()),
            CategoryScheme.parse(categories));
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "--bloom must be M/k, for example 8192/1; got '" + bloom + "'");
  }
}
