package io.bdrp.routing;

import java.util.function.Consumer;

/** Faces and listeners for tests that drive one routing state machine by hand. */
final class TestFaces {
  private TestFaces() {}

  /** A listener that ignores everything. */
  static final DistanceVector.Listener QUIET =
      new DistanceVector.Listener() {
        @Override
        public void adjacencyUp(int n) {}

        @Override
        public void adjacencyDown(int n) {}

        @Override
        public void routesChanged() {}
      };

  /** A face towards {@code neighbour} that hands what is sent on it to {@code sink}. */
  static Face face(int neighbour, Consumer<ControlMessage> sink) {
    return new Face() {
      @Override
      public int neighbour() {
        return neighbour;
      }

      @Override
      public void send(ControlMessage m) {
        sink.accept(m);
      }
    };
  }
}
