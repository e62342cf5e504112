package io.bdrp.testbed.wan;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A set of scenarios run one after the other and reported together, as one of the paper's figures:
 * groups of runs that vary one thing, each run with a label for its value.
 *
 * @param name the name given to {@code bdrp testbed run}
 * @param layout how the combined plot is drawn
 * @param groups the varied dimensions, in order
 */
public record Suite(String name, Layout layout, List<Group> groups) {
  /** How a suite's runs are plotted together. */
  public enum Layout {
    /**
     * One panel per run and system (rows: runs, columns: systems), each with input, output, ideal
     * output and undelivered over time: the paper's Figures 4–5.
     */
    GRID,
    /**
     * One panel per group and system, one output line per run and its ideal output dashed in the
     * same colour: the paper's Figure 7.
     */
    LINES
  }

  /** One varied dimension: a title and the runs along it. */
  public record Group(String title, List<Entry> entries) {}

  /** One run of a suite: its value of the varied dimension, and the scenario that has it. */
  public record Entry(String label, Scenario scenario) {}

  /** Every scenario of the suite, once each, in order (a run shared by groups is run once). */
  public List<Scenario> scenarios() {
    List<Scenario> out = new ArrayList<>();
    for (Group g : groups) {
      for (Entry e : g.entries) {
        if (out.stream().noneMatch(s -> s.name().equals(e.scenario.name()))) {
          out.add(e.scenario);
        }
      }
    }
    return out;
  }

  /** A copy with every scenario changed by {@code change} (command-line overrides). */
  public Suite map(UnaryOperator<Scenario> change) {
    List<Group> gs = new ArrayList<>();
    for (Group g : groups) {
      List<Entry> es = new ArrayList<>();
      for (Entry e : g.entries) {
        es.add(new Entry(e.label, change.apply(e.scenario)));
      }
      gs.add(new Group(g.title, List.copyOf(es)));
    }
    return new Suite(name, layout, List.copyOf(gs));
  }
}
