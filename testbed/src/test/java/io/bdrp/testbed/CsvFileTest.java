package io.bdrp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CsvFileTest {
  @Test
  void writesAHeaderAndRowsQuotingOnlyWhatNeedsIt(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("t.csv");
    try (CsvFile csv = CsvFile.create(f, "system", "note", "rate")) {
      csv.row("bdrp+tls", "plain", 12.5).row("nats", "a, \"quoted\" note", 3L);
      csv.row("nats+tls", null, "-1.0");
    }
    assertEquals(
        "system,note,rate\nbdrp+tls,plain,12.5\nnats,\"a, \"\"quoted\"\" note\",3\n"
            + "nats+tls,,-1.0\n",
        Files.readString(f));
  }

  @Test
  void aRowOfTheWrongWidthIsRefused(@TempDir Path dir) throws Exception {
    try (CsvFile csv = CsvFile.create(dir.resolve("t.csv"), "a", "b")) {
      assertThrows(IllegalArgumentException.class, () -> csv.row(1));
    }
  }
}
