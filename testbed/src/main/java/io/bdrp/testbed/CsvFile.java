package io.bdrp.testbed;

import com.fasterxml.jackson.databind.SequenceWriter;
import com.fasterxml.jackson.dataformat.csv.CsvGenerator;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A CSV file of a run, written row by row through Jackson's CSV support: a header line of the
 * column names, then one line per {@link #row}, with the quoting and escaping of RFC 4180 where a
 * value needs it. Values are written as given: a caller that wants a fixed number of decimals
 * passes the formatted string.
 */
public final class CsvFile implements Closeable {
  // Strict: quote a value only when it holds the separator, a quote or a line break (by default
  // the library also quotes any value with a character below '-', such as "bdrp+tls").
  private static final CsvMapper MAPPER =
      CsvMapper.builder().enable(CsvGenerator.Feature.STRICT_CHECK_FOR_QUOTING).build();

  private final int columns;
  private final SequenceWriter out;

  private CsvFile(Path file, String... columns) throws IOException {
    CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(true);
    for (String c : columns) {
      schema.addColumn(c);
    }
    this.columns = columns.length;
    this.out = MAPPER.writer(schema.build()).writeValues(Files.newBufferedWriter(file));
  }

  /** Creates (or replaces) {@code file} with a header of {@code columns}. */
  public static CsvFile create(Path file, String... columns) throws IOException {
    return new CsvFile(file, columns);
  }

  /** Creates (or replaces) {@code file} with a header of {@code columns}. */
  public static CsvFile create(Path file, List<String> columns) throws IOException {
    return new CsvFile(file, columns.toArray(new String[0]));
  }

  /** Writes one row: a value per column, in order. */
  public CsvFile row(Object... values) throws IOException {
    return row(Arrays.asList(values));
  }

  /** Writes one row: a value per column, in order (null: an empty cell). */
  public CsvFile row(List<?> values) throws IOException {
    if (values.size() != columns) {
      throw new IllegalArgumentException(
          "a row of " + values.size() + " values for " + columns + " columns");
    }
    out.write(values);
    return this;
  }

  /** {@code v} with {@code decimals} decimals, as a cell ("NaN" when it is not a number). */
  public static String fixed(int decimals, double v) {
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
