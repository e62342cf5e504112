package io.bdrp.encoding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class ValueTest {

  @Test
  void integersAndDoublesCompareNumerically() {
    assertEquals(0, Value.of(50).compareTo(Value.of(50.0)));
    assertTrue(Value.of(50).sameValue(Value.of(50.0)));
    assertTrue(Value.of(50).compareTo(Value.of(50.5)) < 0);
    assertTrue(Value.of(-0.0).sameValue(Value.of(0)));
  }

  @Test
  void largeLongsAreNotRoundedToDoubles() {
    long big = (1L << 53) + 1;
    // (double) big == 2^53, so a rounding comparison would call them equal.
    assertTrue(Value.of(big).compareTo(Value.of((double) (1L << 53))) > 0);
    assertTrue(Value.of(Long.MAX_VALUE).compareTo(Value.of(9.223372036854775807E18)) < 0);
    assertTrue(Value.of(Long.MIN_VALUE).sameValue(Value.of(-9.223372036854775808E18)));
  }

  @Property
  void longDoubleComparisonAgreesWithExactDecimalArithmetic(
      @ForAll long l, @ForAll("finiteDoubles") double d) {
    int expected = new BigDecimal(l).compareTo(new BigDecimal(d));
    assertEquals(Integer.signum(expected), Integer.signum(Value.compareLongDouble(l, d)));
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Double> finiteDoubles() {
    return net.jqwik.api.Arbitraries.oneOf(
        net.jqwik.api.Arbitraries.doubles(),
        net.jqwik.api.Arbitraries.longs().map(x -> (double) x),
        net.jqwik.api.Arbitraries.of(
            9.223372036854775807E18, -9.223372036854775808E18, 0.5, -0.5, Double.MAX_VALUE));
  }

  @Test
  void canonicalFormMakesIntegralDoublesIntegers() {
    assertEquals(Value.of(20), Value.of(20.0).canonical());
    assertEquals(ValueType.DOUBLE, Value.of(20.5).canonical().type());
    assertEquals(ValueType.DOUBLE, Value.of(1e19).canonical().type());
  }

  @Test
  void rejectsNonFiniteNumbersAndBrokenStrings() {
    assertThrows(IllegalArgumentException.class, () -> Value.of(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> Value.of(Double.POSITIVE_INFINITY));
    assertThrows(IllegalArgumentException.class, () -> Value.of("a\uD800b"));
  }

  @Test
  void stringsCompareByCodePoint() {
    String bmpHigh = "\uFFFF";
    String astral = new String(Character.toChars(0x10000));
    assertTrue(bmpHigh.compareTo(astral) > 0, "UTF-16 order differs");
    assertTrue(Value.of(bmpHigh).compareTo(Value.of(astral)) < 0);
    assertFalse(Value.of("a").sameValue(Value.of(1)));
  }
}
